import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LocalBus } from '../../src/bus/bus.js';
import { silentLogger } from '../../src/log.js';
import { housekeep, nextHousekeeping } from '../../src/recorder/housekeeping.js';
import { Recorder } from '../../src/recorder/recorder.js';
import { readDay, segmentLines, segmentOf, segments, type Damage } from '../../src/recorder/reader.js';
import { recordedDay } from '../../src/recorder/catalog.js';
import { SegmentSummary } from '../../src/recorder/summary.js';
import { RecordLine, readLine } from '../../src/recorder/format.js';
import { StateStore, type ChangeEvent } from '../../src/state/store.js';
import { readBody } from '../../src/upstream/body.js';
import { endpoint } from '../../src/upstream/catalogue.js';
import { ListReader } from '../../src/upstream/listread.js';
import { DAY, T0, record } from './helpers.js';

/** The recorder's files and summaries, retention, compression once the sessions are over (by a timer and by events), damage and a full disk. */

const tmp = () => mkdtempSync(join(tmpdir(), 'krx-r-'));
const summaryOf = (dir: string, day: string, start: string) =>
  SegmentSummary.parse(JSON.parse(readFileSync(join(dir, day, `seg-${start}.summary.json`), 'utf8')));

/** A recorder on a new directory, the events published to it, and (once `recorded` stops it) the frames it read back. */
function recording() {
  const dir = tmp();
  const store = new StateStore();
  const bus = new LocalBus();
  const r = new Recorder({ dir, store, logger: silentLogger(), now: () => T0 }, bus);
  r.start();
  const sent: ChangeEvent[] = [];
  bus.subscribe('batch', (b) => void sent.push(...b.events));
  const recorded = async (): Promise<string[]> => {
    await r.stop();
    const read: string[] = [];
    for await (const l of readDay(dir, DAY)) if (l.k === 'c') read.push(l.f);
    return read;
  };
  return { store, bus, sent, recorded };
}

describe('the recorder', () => {
  it('writes segments that open with a keyframe, then changes and statuses in order, and a summary when a segment closes', async () => {
    const dir = tmp();
    await record(dir, 5);
    const segs = await segments(dir, DAY);
    expect(segs.map((s) => s.start)).toEqual(['100000']);
    const kinds: string[] = [];
    for await (const l of readDay(dir, DAY)) kinds.push(l.k);
    expect(kinds.slice(0, 3)).toEqual(['K', 'S', 'E']); // the feed's status was known when the segment opened
    expect(kinds.filter((k) => k === 'c').length).toBe(15);
    const s = summaryOf(dir, DAY, '100000');
    expect(s).toMatchObject({ from: T0, to: T0 + 4000, bytes: statSync(join(dir, DAY, 'seg-100000.ndjson')).size });
    expect(s.feeds).toEqual({ 'quote.kospi': { from: T0, to: T0 + 4000, changes: 15, bytes: expect.any(Number) } });
    expect(s.feeds['quote.kospi']!.bytes).toBeGreaterThan(15 * 100);
  });

  it('says where its recording starts and stops: a start on its first keyframe, none on the next segment’s, a stop line at stop', async () => {
    const dir = tmp();
    await record(dir, 8, { segmentMs: 5000 });
    await record(dir, 2, { first: 20, segmentMs: 5000 });
    const marks: string[] = [];
    for await (const l of readDay(dir, DAY)) if (l.k === 'K' || l.k === 'X') marks.push(`${l.k}${l.k === 'K' && l.start ? '+' : ''}:${(l.t - T0) / 1000}`);
    expect(marks).toEqual(['K+:0', 'K:5', 'X:7', 'K+:20', 'X:21']);
    // The day's summary (each segment's, written as it closed) holds the gap, though it spans two segments.
    expect((await recordedDay(dir, DAY))?.summary?.gaps).toEqual([{ from: T0 + 7000, to: T0 + 20_000 }]);
    expect(summaryOf(dir, DAY, '100020').gaps).toEqual([{ to: T0 + 20_000 }]);
  });

  it('gives a feed the time range of its changes and statuses, not of the keyframes that hold it once it is polled no more', async () => {
    const dir = tmp();
    const store = new StateStore();
    const bus = new LocalBus();
    let now = T0;
    const r = new Recorder({ dir, store, logger: silentLogger(), now: () => now, segmentMs: 5000 }, bus);
    r.start();
    for (let s = 0; s < 13; s++) {
      now = T0 + s * 1000;
      // quote.kospi is polled for three seconds; book.kospi all along. Both are held, so both are in every keyframe.
      if (s < 3) bus.publish(store.apply('quote', 'kospi', [{ isuSrtCd: '100000', trdPrc: 1000 + s }], now));
      bus.publish(store.apply('book', 'kospi', [{ isuSrtCd: '100000', bidp1: 900 + s }], now));
    }
    await r.stop();
    const day = (await recordedDay(dir, DAY))!.summary!;
    expect(day.feeds['quote.kospi']).toMatchObject({ from: T0, to: T0 + 2000, changes: 3 });
    expect(day.feeds['book.kospi']).toMatchObject({ from: T0, to: T0 + 12_000, changes: 13 });
    // Its keyframe lines are still its bytes, in the segment it changed in; the day's size is every line.
    expect(summaryOf(dir, DAY, '100005').feeds['quote.kospi']).toBeUndefined();
    expect(summaryOf(dir, DAY, '100005').bytes).toBe(statSync(join(dir, DAY, 'seg-100005.ndjson')).size);
    // Read from the file (a segment without its summary), the same.
    rmSync(join(dir, DAY, 'seg-100005.summary.json'));
    rmSync(join(dir, DAY, 'seg-100000.summary.json'));
    expect((await recordedDay(dir, DAY))!.summary).toEqual(day);
  });

  it('stops its recording while another process records (a cluster’s poller moved away), and starts it again with a keyframe', async () => {
    const dir = tmp();
    const store = new StateStore();
    const bus = new LocalBus();
    let now = T0;
    let mine = true;
    const r = new Recorder({ dir, store, logger: silentLogger(), now: () => now, enabled: () => mine }, bus);
    r.start();
    const tick = (s: number) => {
      now = T0 + s * 1000;
      bus.publish(store.apply('quote', 'kospi', [{ isuSrtCd: '100000', trdPrc: 1000 + s }], now));
    };
    for (let s = 0; s < 3; s++) tick(s);
    mine = false;
    for (let s = 3; s < 6; s++) tick(s);
    mine = true;
    for (let s = 6; s < 8; s++) tick(s);
    await r.stop();
    const lines: string[] = [];
    for await (const l of readDay(dir, DAY))
      if (l.k !== 'E' && l.k !== 'S')
        lines.push(l.k === 'c' ? `c${l.seq}` : l.k === 'r' ? `r${l.seq}` : `${l.k}${l.k === 'K' && l.start ? '+' : ''}:${(l.t - T0) / 1000}`);
    // A keyframe holds the change that made it be written. Seqs 4–6 were not this process's to record; the keyframe at 10:00:06 holds where they led.
    expect(lines).toEqual(['K+:0', 'r1', 'c1', 'c2', 'c3', 'X:3', 'K+:6', 'r7', 'c7', 'c8', 'X:7']);
  });

  it('reads back every frame byte for byte as clients got it, whatever the rows held', async () => {
    // Row values as the normaliser can leave them: numbers of any kind, and strings with quotes, backslashes, controls, non-ASCII and lone surrogates.
    const value = fc.oneof(
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.integer(),
      fc.string({ unit: 'binary' }),
      fc.constant(null),
      fc.constantFrom('" -"', 'a\\b', '종목'),
    );
    const rows = fc.array(fc.dictionary(fc.constantFrom('trdPrc', 'isuKorNm', 'memo', 'k"ey', '__proto__x'), value), { minLength: 1, maxLength: 6 });
    await fc.assert(
      fc.asyncProperty(rows, async (seconds) => {
        const { store, bus, sent, recorded } = recording();
        seconds.forEach((row, s) => bus.publish(store.apply('quote', 'kospi', [{ ...row, isuSrtCd: '005930' }], T0 + s)));
        expect(await recorded()).toEqual(sent.map((e) => e.frame));
      }),
      { numRuns: 60 },
    );
  });

  it('records the frames the store wrote from a list body’s bytes byte for byte', async () => {
    const { store, bus, sent, recorded } = recording();
    const reader = new ListReader();
    for (let s = 0; s < 5; s++) {
      const rows = ['005930', '000660'].map(
        (c, i) => `{"isuSrtCd":"${c}","trdPrc":${70_000 + 100 * s * (i + 1)},"accTrdvol":${s * 17},"isuKorNm":"종목\\"${i}"}`,
      );
      const got = readBody(endpoint('v2.multiquote.lists'), Buffer.from(`{"trdDd":"20240603","trdTm":"090500","isuLists":[${rows.join(',')}]}`), reader);
      if (!got.ok || got.delta === undefined) throw new Error('not read incrementally');
      bus.publish(store.apply('quote', 'kospi', got.value.rows, T0 + s, undefined, got.delta));
    }
    expect(sent).toHaveLength(10);
    expect(await recorded()).toEqual(sent.map((e) => e.frame));
  });

  it('reads a line as a whole parse and check would, taking a change line apart at its frame, and any cut of one as damage', async () => {
    const dir = tmp();
    await record(dir, 3, { rows: 4 });
    const lines = readFileSync(join(dir, DAY, 'seg-100000.ndjson'), 'utf8')
      .trimEnd()
      .split('\n');
    const whole = (text: string) => {
      try {
        const r = RecordLine.safeParse(JSON.parse(text));
        return r.success ? { ok: true, line: r.data } : { ok: false };
      } catch {
        return { ok: false };
      }
    };
    for (const text of lines) {
      const r = readLine(text);
      expect({ ok: r.ok, line: r.ok ? r.line : undefined }).toEqual({ line: undefined, ...whole(text) });
      // A change line taken apart at its frame gives the frame's message too, as a parse of the frame would.
      if (r.ok && r.line.k === 'c') expect(r.message).toEqual(JSON.parse(r.line.f));
    }
    expect(lines.filter((t) => t.startsWith('{"k":"c"')).length).toBe(12);
    // Cut anywhere, or with a byte changed, a line reads as the whole parse says: no frame is taken from a torn line.
    fc.assert(
      fc.property(fc.constantFrom(...lines), fc.nat(), fc.nat(), (text, cut, at) => {
        const torn = text.slice(0, cut % (text.length + 1));
        expect(readLine(torn).ok).toBe(whole(torn).ok);
        const k = at % text.length;
        const changed = text.slice(0, k) + (text[k] === '}' ? ']' : '}') + text.slice(k + 1);
        const r = readLine(changed);
        expect(r.ok).toBe(whole(changed).ok);
        if (r.ok) expect(r.line).toEqual(whole(changed).line);
      }),
      { numRuns: 500 },
    );
  });

  it('reads a change line written before frames went in as they are: its frame as a JSON string', async () => {
    const dir = tmp();
    await record(dir, 2);
    const path = join(dir, DAY, 'seg-100000.ndjson');
    const lines = readFileSync(path, 'utf8').trimEnd().split('\n');
    const now: string[] = [];
    for await (const l of readDay(dir, DAY)) if (l.k === 'c') now.push(l.f);
    // The same lines as an older recorder wrote them: `f` the frame's text, escaped.
    const older = lines.map((text) => {
      const v = JSON.parse(text) as { k: string; f?: unknown };
      return v.k === 'c' ? JSON.stringify({ ...v, f: JSON.stringify(v.f) }) : text;
    });
    expect(older.some((t) => t.includes('"f":"{\\"type\\"'))).toBe(true);
    writeFileSync(path, older.join('\n') + '\n');
    const then: string[] = [];
    for await (const l of readDay(dir, DAY)) if (l.k === 'c') then.push(l.f);
    expect(then).toEqual(now);
    expect(now).toHaveLength(6);
  });

  it('summarises a segment continued by a second process from its file, both parts', async () => {
    const dir = tmp();
    await record(dir, 5);
    await record(dir, 5, { first: 5 });
    expect(summaryOf(dir, DAY, '100000')).toMatchObject({ from: T0, to: T0 + 9000, feeds: { 'quote.kospi': { changes: 30 } } });
  });

  it('reads a segment continued by a second process from its file while that one writes it, not from the first one’s summary', async () => {
    const dir = tmp();
    await record(dir, 5);
    expect(summaryOf(dir, DAY, '100000')).toMatchObject({ to: T0 + 4000 });
    const store = new StateStore();
    const bus = new LocalBus();
    let now = T0 + 5000;
    const r = new Recorder({ dir, store, logger: silentLogger(), now: () => now }, bus);
    r.start();
    for (let s = 5; s < 9; s++) {
      now = T0 + s * 1000;
      bus.publish(store.apply('quote', 'kospi', [{ isuSrtCd: '100000', trdPrc: 1000 + s }], now));
    }
    // What /recordings and a replay's check read while the second process still writes the segment.
    let to: number | undefined;
    for (let k = 0; k < 100 && to !== T0 + 8000; k++) {
      await new Promise((res) => setTimeout(res, 20));
      to = (await recordedDay(dir, DAY, r.live))?.summary?.to;
    }
    expect(to).toBe(T0 + 8000);
    await r.stop();
    expect(summaryOf(dir, DAY, '100000')).toMatchObject({ from: T0, to: T0 + 8000 });
  });

  it('drops and counts what a slow or full disk cannot take, without waiting', async () => {
    const { drops, r } = await record(tmp(), 30, { rows: 50, pad: 2000, maxPendingBytes: 64 << 10 });
    expect(drops.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    expect((await r.info()).dropped).toBeGreaterThan(0);
  });

  it('compresses past days (summarising a segment left without one) and deletes days past RECORD_DAYS', async () => {
    const dir = tmp();
    for (const d of ['20261101', '20261120']) {
      mkdirSync(join(dir, d), { recursive: true });
      writeFileSync(join(dir, d, 'seg-100000.ndjson'), `{"k":"K","t":${T0 - 4 * 86_400_000}}\n{"k":"E"}\n`);
    }
    await record(dir, 2);
    expect(existsSync(join(dir, '20261101'))).toBe(false); // older than 7 days
    expect(readdirSync(join(dir, '20261120')).sort()).toEqual(['seg-100000.ndjson.gz', 'seg-100000.summary.json']);
    expect(summaryOf(dir, '20261120', '100000')).toMatchObject({ from: T0 - 4 * 86_400_000, feeds: {} });
    const lines = [];
    for await (const l of readDay(dir, '20261120')) lines.push(l.k);
    expect(lines).toEqual(['K', 'E']);
    // Today's segments stay as they are until the sessions are over.
    expect(readdirSync(join(dir, DAY)).sort()).toEqual(['seg-100000.ndjson', 'seg-100000.summary.json']);
  });

  it('compresses the day once its sessions are over: by its timer at 18:00 KST without any event, then each segment closed after', async () => {
    const dir = tmp();
    const store = new StateStore();
    const bus = new LocalBus();
    const at = (hms: string) => Date.parse(`2026-11-24T${hms}+09:00`);
    let now = at('17:54:00');
    const r = new Recorder({ dir, store, logger: silentLogger(), now: () => now }, bus);
    r.start();
    const tick = (t: number, p: number) => {
      now = t;
      bus.publish(store.apply('quote', 'kospi', [{ isuSrtCd: '100000', trdPrc: p }], t));
    };
    tick(at('17:54:00'), 1000);
    tick(at('17:56:00'), 1010); // a new segment: the 17:50 one closes, before the sessions end
    tick(at('17:59:59.500'), 1020);
    await r.settled();
    const files = () =>
      readdirSync(join(dir, DAY))
        .filter((f) => f.includes('.ndjson'))
        .sort();
    expect(files()).toEqual(['seg-175000.ndjson', 'seg-175500.ndjson']);
    // The clock passes 18:00 and nothing is published: the timer (due 0.6 s from 17:59:59.5) compresses both.
    now = at('18:00:01');
    await expect.poll(files, { timeout: 3000 }).toEqual(['seg-175000.ndjson.gz', 'seg-175500.ndjson.gz']);
    // After-hours changes open a segment; the next one closes it, and the closing compresses it.
    tick(at('18:03:00'), 1030);
    tick(at('18:05:01'), 1040);
    await r.settled();
    expect(files()).toEqual(['seg-175000.ndjson.gz', 'seg-175500.ndjson.gz', 'seg-180000.ndjson.gz', 'seg-180500.ndjson']);
    await r.stop();
    const ts: number[] = [];
    for await (const l of readDay(dir, DAY)) if (l.k === 'c') ts.push(l.t);
    expect(ts).toEqual([at('17:54:00'), at('17:56:00'), at('17:59:59.500'), at('18:03:00'), at('18:05:01')]);
  });

  it('compresses a segment aside: a replay read while it is compressed reads all of it', async () => {
    const dir = tmp();
    await record(dir, 60, { rows: 100, pad: 300 });
    const total = 60 * 100;
    const readAll = async () => {
      const damage: Damage[] = [];
      let n = 0;
      for await (const l of readDay(dir, DAY, undefined, (d) => damage.push(d))) if (l.k === 'c') n++;
      return { n, damage };
    };
    expect(await readAll()).toEqual({ n: total, damage: [] });
    let done = false;
    const compressing = housekeep({ dir, today: '20261125', now: T0 + 86_400_000, keepDays: 7, logger: silentLogger() }).then(() => (done = true));
    const reads: { n: number; damage: Damage[] }[] = [];
    while (!done) reads.push(await readAll());
    await compressing;
    reads.push(await readAll());
    expect(readdirSync(join(dir, DAY)).sort()).toEqual(['seg-100000.ndjson.gz', 'seg-100000.summary.json']);
    expect(reads.length).toBeGreaterThan(1);
    for (const r of reads) expect(r).toEqual({ n: total, damage: [] });
  });

  it('reads the .gz of a segment whose raw file went between the listing and the reading', async () => {
    const dir = tmp();
    await record(dir, 30, { rows: 10 });
    const day = join(dir, DAY);
    const listed = await segments(dir, DAY);
    expect(listed.map((s) => s.file)).toEqual(['seg-100000.ndjson']);
    await housekeep({ dir, today: '20261125', now: T0 + 86_400_000, keepDays: 7, logger: silentLogger() });
    // The raw file was listed, then compressed and removed: its stat and its open find the .gz instead.
    expect(await segmentOf(day, 'seg-100000.ndjson', '100000')).toMatchObject({ file: 'seg-100000.ndjson.gz', compressed: true });
    expect(await segmentOf(day, 'seg-100500.ndjson', '100500')).toBeUndefined();
    const damage: Damage[] = [];
    let changes = 0;
    for await (const { line } of segmentLines(join(day, listed[0]!.file), (d) => damage.push(d))) if (line.k === 'c') changes++;
    expect([changes, damage]).toEqual([300, []]);
    // Neither there (a day deleted meanwhile): reported, nothing read.
    rmSync(day, { recursive: true });
    for await (const _ of segmentLines(join(day, listed[0]!.file), (d) => damage.push(d))) changes++;
    expect(damage).toEqual([expect.objectContaining({ file: 'seg-100000.ndjson', reason: expect.stringMatching(/^unreadable: ENOENT/) })]);
  });

  it('sets its timer for the end of the sessions, then for midnight', () => {
    const at = (iso: string) => Date.parse(`${iso}+09:00`);
    expect(nextHousekeeping('20261124', at('2026-11-24T10:00:00'))).toBe(at('2026-11-24T18:00:00'));
    expect(nextHousekeeping('20261124', at('2026-11-24T18:00:00'))).toBe(at('2026-11-25T00:00:00'));
    expect(nextHousekeeping('20261124', at('2026-11-24T23:59:59'))).toBe(at('2026-11-25T00:00:00'));
  });

  it('reads the good part of a truncated segment and reports the damage', async () => {
    const dir = tmp();
    await record(dir, 10);
    const file = join(dir, DAY, 'seg-100000.ndjson');
    // A crash in the middle of the last change line: no stop line after it.
    writeFileSync(file, readFileSync(file, 'utf8').replace(/^\{"k":"X".*\n/m, ''));
    truncateSync(file, statSync(file).size - 25);
    const damage: Damage[] = [];
    let changes = 0;
    for await (const l of readDay(dir, DAY, undefined, (d) => damage.push(d))) if (l.k === 'c') changes++;
    expect(changes).toBe(29);
    expect(damage).toEqual([expect.objectContaining({ file: 'seg-100000.ndjson', reason: 'not JSON (torn or damaged)' })]);
  });
});
