import { appendFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalBus } from '../../src/bus/bus.js';
import { silentLogger } from '../../src/log.js';
import { StateJournal } from '../../src/persist/journal.js';
import fc from 'fast-check';
import { crc32 } from '../../src/protocol/crc32.js';
import { LineBuffer, decodeLine, decodeLineAt, encodeLine } from '../../src/persist/lines.js';
import { FILES, loadState } from '../../src/persist/load.js';
import { restoreInto } from '../../src/persist/restore.js';
import { StateStore } from '../../src/state/store.js';
import { readBody } from '../../src/upstream/body.js';
import { endpoint } from '../../src/upstream/catalogue.js';
import { ListReader } from '../../src/upstream/listread.js';

const dir = () => mkdtempSync(join(tmpdir(), 'krx-state-'));

/** A store and bus with a journal on `d`, started. */
async function journalled(d: string, store = new StateStore()) {
  const bus = new LocalBus();
  const j = new StateJournal({ dir: d, store, logger: silentLogger(), flushMs: 60_000 }, bus);
  await j.start();
  const tick = (rows: { isuSrtCd: string; trdPrc: number }[], ts: number) => bus.publish(store.apply('quote', 'kospi', rows, ts));
  return { store, bus, j, tick };
}

describe('state lines', () => {
  it('round-trip, and tell a damaged line from a good one', () => {
    const line = encodeLine({ a: 1 }).trimEnd();
    expect(decodeLine(line)).toEqual({ ok: true, value: { a: 1 } });
    expect(decodeLine(line.replace('1', '2'))).toMatchObject({ ok: false, reason: 'checksum mismatch' });
    expect(decodeLine(line.slice(0, -3))).toMatchObject({ ok: false });
    expect(decodeLine('zzzzzzzz' + line.slice(8))).toMatchObject({ ok: false, reason: 'checksum mismatch' });
  });

  it('are read in place from the bytes of a whole file: each line as it reads alone, and a changed byte fails only its own line', () => {
    fc.assert(
      fc.property(
        fc.array(fc.jsonValue(), { minLength: 1, maxLength: 20 }),
        fc.nat(),
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        (values, which, where, xor) => {
          const lines = new LineBuffer();
          for (const v of values) lines.add(v);
          const bytes = lines.take();
          const spans: [number, number][] = [];
          for (let s = 0, e = bytes.indexOf(0x0a); e >= 0; s = e + 1, e = bytes.indexOf(0x0a, s)) spans.push([s, e]);
          expect(spans.map(([s, e]) => decodeLineAt(bytes, s, e))).toEqual(values.map((v) => ({ ok: true, value: JSON.parse(JSON.stringify(v)) as unknown })));
          // One byte of one line's JSON changed (CRC-32 catches every single-byte error).
          const k = which % spans.length;
          const [s, e] = spans[k]!;
          const at = s + 9 + (where % (e - s - 9));
          bytes[at] = bytes[at]! ^ xor;
          const read = spans.map(([s, e]) => decodeLineAt(bytes, s, e).ok);
          expect(read).toEqual(spans.map((_, i) => i !== k));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('are the same bytes whether encoded one by one or into a LineBuffer, and read back, whatever the text', () => {
    // Rows with non-ASCII names, escapes and lone surrogates (which JSON.stringify writes as \u escapes).
    const value = fc.jsonValue();
    fc.assert(
      fc.property(fc.array(value, { maxLength: 30 }), fc.integer({ min: 1, max: 256 }), (values, room) => {
        const lines = new LineBuffer(room);
        // Every other value as its JSON's UTF-8 bytes (a frame as the store wrote it).
        values.forEach((v, k) => (k % 2 === 0 ? lines.add(v) : lines.addJson(Buffer.from(JSON.stringify(v)))));
        const bytes = lines.take();
        expect(bytes.toString('utf8')).toBe(values.map(encodeLine).join(''));
        const read = bytes.toString('utf8').split('\n').slice(0, -1).map(decodeLine);
        expect(read).toEqual(values.map((v) => ({ ok: true, value: JSON.parse(JSON.stringify(v)) as unknown })));
        expect(lines.length).toBe(0);
      }),
      { numRuns: 300 },
    );
  });

  it("take their checksum from zlib's CRC-32, which is the protocol's over the UTF-8 text: lines written before still read", () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        const json = JSON.stringify(s);
        const old = `${crc32(json).toString(16).padStart(8, '0')} ${json}`;
        expect(decodeLine(old)).toEqual({ ok: true, value: s });
      }),
      { numRuns: 500 },
    );
  });
});

describe('the state journal', () => {
  it('keeps when a feed was last refreshed when its answer came before its first status (a start while the market is closed)', async () => {
    const d = dir();
    const { j, tick, bus } = await journalled(d);
    // At a closed market's start the one fetch is published, then the feed says `closed`; nothing is polled after.
    tick([{ isuSrtCd: '005930', trdPrc: 100 }], 1000);
    bus.publishStatus({ channel: 'quote', market: 'kospi', state: 'closed', intervalMs: 30_000, ts: 1001, reason: 'market closed' });
    expect(j.lastRefresh('quote', 'kospi')).toBe(1000);
    await j.stop();
    expect(loadState(d).feeds.get('quote.kospi')).toMatchObject({ f: { state: 'closed' }, ok: 1000 });
    // What the next start reads: the closed feed's `asOf`.
    const next = new StateJournal({ dir: d, store: new StateStore(), logger: silentLogger() }, new LocalBus(), loadState(d).feeds);
    expect(next.lastRefresh('quote', 'kospi')).toBe(1000);
  });

  it('writes the topics that changed and a clean stop keeps the epoch', async () => {
    const d = dir();
    const { store, j, tick, bus } = await journalled(d);
    bus.publishStatus({ channel: 'quote', market: 'kospi', state: 'live', intervalMs: 1000, ts: 1 });
    tick(
      [
        { isuSrtCd: '005930', trdPrc: 100 },
        { isuSrtCd: '000660', trdPrc: 200 },
      ],
      1000,
    );
    tick(
      [
        { isuSrtCd: '005930', trdPrc: 101 },
        { isuSrtCd: '000660', trdPrc: 200 },
      ],
      2000,
    );
    await j.flush();
    // A crash now: the journal holds both topics, and no clean mark.
    const crashed = loadState(d);
    expect(crashed.cleanEpoch).toBeUndefined();
    expect(crashed.topics.get('quote.kospi.005930')).toMatchObject({ s: 2, t: 2000, r: { trdPrc: 101 } });
    expect(crashed.topics.get('quote.kospi.000660')).toMatchObject({ s: 1, t: 1000 });
    expect(crashed.feeds.get('quote.kospi')).toMatchObject({ f: { state: 'live' }, ok: 2000 });
    await j.stop();
    const clean = loadState(d);
    expect(clean.cleanEpoch).toBe(store.epoch);
    const again = new StateStore({ epoch: clean.cleanEpoch! });
    expect(restoreInto(again, clean)).toEqual({ restored: 2, rejected: [] });
    expect(again.entry('quote', 'kospi', '005930')).toMatchObject({ seq: 2, ts: 2000, seenTs: 2000, row: { trdPrc: 101 } });
    expect(again.snapshot(again.entry('quote', 'kospi', '005930')!)).toContain('"ts":2000');
  });

  it('skips a torn last line (a crash in the middle of a write) without setting the file aside', async () => {
    const d = dir();
    const { j, tick } = await journalled(d);
    tick([{ isuSrtCd: '005930', trdPrc: 100 }], 1000);
    await j.flush();
    appendFileSync(join(d, FILES.journal), encodeLine({ k: 'quote', m: 'kospi', c: '000660', r: {}, s: 1, t: 1, x: 0 }).slice(0, 20));
    const s = loadState(d);
    expect(s.topics.has('quote.kospi.005930')).toBe(true);
    expect(s.problems).toEqual([expect.objectContaining({ file: FILES.journal, reason: expect.stringMatching(/torn last line/) })]);
    expect(existsSync(join(d, FILES.journal))).toBe(true);
  });

  /** A journal of two flushes (one new topic each) on `d`: its path and its lines. */
  async function twoFlushes(d: string): Promise<{ path: string; lines: string[] }> {
    const { j, tick } = await journalled(d);
    tick([{ isuSrtCd: '005930', trdPrc: 100 }], 1000);
    await j.flush();
    tick([{ isuSrtCd: '000660', trdPrc: 100 }], 2000);
    await j.flush();
    const path = join(d, FILES.journal);
    return { path, lines: readFileSync(path, 'utf8').split('\n') };
  }

  it('sets a damaged file aside, keeps the good lines before the damage, and reports it', async () => {
    const d = dir();
    const { path, lines } = await twoFlushes(d);
    lines[0] = lines[0]!.replace('100', '999');
    writeFileSync(path, lines.join('\n'));
    const s = loadState(d);
    expect(s.problems).toEqual([
      expect.objectContaining({ file: FILES.journal, line: 1, reason: 'checksum mismatch', setAside: expect.stringMatching(/^journal\.ndjson\.damaged-/) }),
    ]);
    expect(readdirSync(d).some((f) => f.startsWith('journal.ndjson.damaged-'))).toBe(true);
    expect(existsSync(path)).toBe(false);
    // The snapshot written at start held nothing yet; the damaged journal's lines are not trusted.
    expect(s.topics.size).toBe(0);
  });

  it('reports the damaged line by its number in the file, and keeps the lines before it', async () => {
    const d = dir();
    const { path, lines } = await twoFlushes(d);
    const bad = lines.findIndex((l) => l.includes('"000660"'));
    expect(bad).toBeGreaterThan(0);
    lines[bad] = lines[bad]!.replace('100', '999');
    writeFileSync(path, lines.join('\n'));
    const s = loadState(d);
    expect(s.problems).toEqual([expect.objectContaining({ file: FILES.journal, line: bad + 1, reason: 'checksum mismatch' })]);
    expect(s.topics.get('quote.kospi.005930')?.r).toMatchObject({ trdPrc: 100 });
    expect(s.topics.has('quote.kospi.000660')).toBe(false);
  });

  it('compacts into a snapshot; a journal line older than the snapshot changes nothing', async () => {
    const d = dir();
    const { store, j, tick } = await journalled(d);
    tick([{ isuSrtCd: '005930', trdPrc: 100 }], 1000);
    await j.flush();
    const oldJournal = readFileSync(join(d, FILES.journal), 'utf8');
    tick([{ isuSrtCd: '005930', trdPrc: 101 }], 2000);
    await j.stop();
    // A compaction cut short: the snapshot is new, the old journal is still there.
    writeFileSync(join(d, FILES.journal), oldJournal);
    const s = loadState(d);
    expect(s.topics.get('quote.kospi.005930')).toMatchObject({ s: 2, r: { trdPrc: 101 } });
    expect(store.size).toBe(1);
  });

  it('a row whose checksum does not match is left out', () => {
    const d = dir();
    writeFileSync(
      join(d, FILES.snapshot),
      encodeLine({ v: 1, epoch: 'e', at: 1 }) + encodeLine({ k: 'quote', m: 'kospi', c: '005930', r: { trdPrc: 1 }, s: 1, t: 1, x: 12345 }),
    );
    const s = loadState(d);
    expect(restoreInto(new StateStore(), s)).toEqual({ restored: 0, rejected: ['quote.kospi.005930'] });
  });
});

describe('the state journal, change by change', () => {
  /** What a crash now would restore of each topic, next to what the store holds. */
  function restored(d: string) {
    const s = loadState(d);
    const out = new Map<string, unknown>();
    for (const [key, t] of s.topics) out.set(key, { row: t.r, seq: t.s, ts: t.t, crc: t.x });
    return { out, problems: s.problems };
  }
  function held(store: StateStore) {
    const out = new Map<string, unknown>();
    for (const [channel, market] of store.heldFeeds())
      for (const e of store.entries(channel, market)) out.set(e.topic, { row: e.row, seq: e.seq, ts: e.ts, crc: e.crc });
    return out;
  }
  /** The kinds of the journal's lines: `patch` frames and `row`s. */
  function kinds(d: string): string[] {
    const path = join(d, FILES.journal);
    if (!existsSync(path)) return [];
    return readFileSync(path, 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => {
        const v = (decodeLine(l) as { value: Record<string, unknown> }).value;
        return v.type === 'patch' ? 'patch' : 'c' in v ? 'row' : 'feed';
      });
  }

  it('appends a change that follows one it holds as the frame clients got, and loads it back', async () => {
    const d = dir();
    const { store, j, tick, bus } = await journalled(d);
    const frames: string[] = [];
    bus.subscribe('batch', (b) => frames.push(...b.events.filter((e) => e.kind === 'patch').map((e) => e.frame)));
    tick([{ isuSrtCd: '005930', trdPrc: 100 }], 1000);
    await j.flush();
    tick([{ isuSrtCd: '005930', trdPrc: 101 }], 2000);
    await j.flush();
    tick([{ isuSrtCd: '005930', trdPrc: 102 }], 3000);
    tick([{ isuSrtCd: '005930', trdPrc: 103 }], 4000);
    await j.flush();
    expect(kinds(d)).toEqual(['row', 'patch', 'patch', 'patch']);
    const journal = readFileSync(join(d, FILES.journal), 'utf8');
    for (const f of frames) expect(journal).toContain(` ${f}\n`);
    expect(restored(d).out).toEqual(held(store));
    expect(restored(d).out.get('quote.kospi.005930')).toMatchObject({ seq: 4, ts: 4000, row: { trdPrc: 103 } });
  });

  it('appends the frames the store wrote from a list body’s bytes as they are, and loads them back', async () => {
    const d = dir();
    const { store, j, bus } = await journalled(d);
    const reader = new ListReader();
    const lists = endpoint('v2.multiquote.lists');
    const frames: string[] = [];
    bus.subscribe('batch', (b) => frames.push(...b.events.filter((e) => e.kind === 'patch').map((e) => e.frame)));
    for (let step = 0; step < 4; step++) {
      const rows = ['005930', '000660', '035720'].map((c, i) => `{"isuSrtCd":"${c}","trdPrc":${1000 * (i + 1) + (i === 2 ? 0 : step)},"isuKorNm":"삼성"}`);
      const r = readBody(lists, Buffer.from(`{"trdDd":"20240603","trdTm":"090500","isuLists":[${rows.join(',')}]}`), reader);
      if (!r.ok || r.delta === undefined) throw new Error('not read incrementally');
      bus.publish(store.apply('quote', 'kospi', r.value.rows, 1000 * (step + 1), undefined, r.delta));
      if (step !== 2) await j.flush();
    }
    expect(kinds(d)).toEqual(['row', 'row', 'row', 'patch', 'patch', 'patch', 'patch', 'patch', 'patch']);
    const journal = readFileSync(join(d, FILES.journal), 'utf8');
    expect(frames).toHaveLength(6);
    for (const f of frames) expect(journal).toContain(` ${f}\n`);
    expect(restored(d).out).toEqual(held(store));
  });

  it('restores what the store holds after any run of changes, writes, failed writes and compactions', async () => {
    const codes = ['005930', '000660', '035720', '051910'];
    const step = fc.oneof(
      fc.record({ tick: fc.array(fc.tuple(fc.constantFrom(...codes), fc.integer({ min: 1, max: 4 })), { maxLength: 4 }) }),
      fc.constant({ flush: true as const }),
      fc.constant({ fail: true as const }),
      fc.constant({ compact: true as const }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { minLength: 1, maxLength: 25 }),
        fc.integer({ min: 1, max: 6 }),
        fc.constantFrom(1, 2, 1e6),
        async (steps, maxFrames, journalPerSnapshot) => {
          const d = dir();
          const store = new StateStore();
          const bus = new LocalBus();
          let now = 0;
          // Compactions for the journal's size too, wherever it passes one or two snapshots' worth.
          const sizes = { journalPerSnapshot, minJournalBytes: 0 };
          const j = new StateJournal({ dir: d, store, logger: silentLogger(), flushMs: 60_000, compactMs: 1e9, maxFrames, now: () => now, ...sizes }, bus);
          await j.start();
          let ts = 1000;
          for (const s of steps) {
            if ('tick' in s) {
              ts += 1000;
              bus.publish(
                store.apply(
                  'quote',
                  'kospi',
                  s.tick.map(([c, p]) => ({ isuSrtCd: c, trdPrc: p })),
                  ts,
                ),
              );
            } else if ('fail' in s) {
              // The journal's file handle fails under the write.
              await (j as unknown as { journal?: { close(): Promise<void> } }).journal?.close();
              await j.flush();
            } else if ('compact' in s) {
              now += 2e9;
              await j.flush();
            } else await j.flush();
          }
          // The first may fail on a handle closed since the last write; the second writes.
          await j.flush();
          await j.flush();
          expect(restored(d).out).toEqual(held(store));
          expect(restored(d).problems).toEqual([]);
          await j.stop();
          expect(restored(d).out).toEqual(held(store));
        },
      ),
      { numRuns: 150 },
    );
  });

  it('compacts once the journal is past its share of the snapshot, within its floor and its bound, so a start never reads more', async () => {
    const size = (d: string, f: string) => (existsSync(join(d, f)) ? statSync(join(d, f)).size : 0);
    for (const opts of [
      { journalPerSnapshot: 2, minJournalBytes: 0 },
      { journalPerSnapshot: 2, minJournalBytes: 30_000 },
      { journalPerSnapshot: 1e6, minJournalBytes: 0, maxJournalBytes: 20_000 },
    ]) {
      const d = dir();
      const store = new StateStore();
      const bus = new LocalBus();
      const j = new StateJournal({ dir: d, store, logger: silentLogger(), flushMs: 60_000, compactMs: 1e12, ...opts }, bus);
      await j.start();
      const codes = Array.from({ length: 40 }, (_, i) => String(100000 + i));
      let compactions = 0;
      for (let t = 1; t <= 60; t++) {
        bus.publish(
          store.apply(
            'quote',
            'kospi',
            codes.map((c, i) => ({ isuSrtCd: c, trdPrc: 1000 + t * (i + 1), accTrdvol: t * 7 })),
            1000 * t,
          ),
        );
        const limit = j.compactionBytes;
        const before = size(d, FILES.journal);
        const snapshot = size(d, FILES.snapshot);
        // The rule: its share of the snapshot, at least the floor, at most the bound.
        expect(limit).toBe(Math.min(opts.maxJournalBytes ?? 64 << 20, Math.max(opts.minJournalBytes, opts.journalPerSnapshot * snapshot)));
        await j.flush();
        if (before > limit) {
          compactions++;
          expect(size(d, FILES.journal)).toBe(0);
          // A flush appends past the limit at most once (40 changes, under 8 KB): the next compacts.
        } else expect(size(d, FILES.journal)).toBeLessThan(limit + 8_000);
        expect(restored(d).out).toEqual(held(store));
      }
      expect(compactions).toBeGreaterThanOrEqual(3);
      await j.stop();
    }
  });

  it('writes a failed write’s topics as rows at the next, so a topic that changed only then is not lost', async () => {
    const d = dir();
    const { store, j, tick } = await journalled(d);
    tick(
      [
        { isuSrtCd: '005930', trdPrc: 100 },
        { isuSrtCd: '000660', trdPrc: 200 },
      ],
      1000,
    );
    await j.flush();
    tick(
      [
        { isuSrtCd: '005930', trdPrc: 101 },
        { isuSrtCd: '000660', trdPrc: 201 },
      ],
      2000,
    );
    await (j as unknown as { journal?: { close(): Promise<void> } }).journal?.close();
    await j.flush();
    expect(j.info().failures).toBe(1);
    tick(
      [
        { isuSrtCd: '005930', trdPrc: 102 },
        { isuSrtCd: '000660', trdPrc: 201 },
      ],
      3000,
    );
    await j.flush();
    expect(kinds(d)).toEqual(['row', 'row', 'row', 'row']);
    expect(restored(d).out.get('quote.kospi.000660')).toMatchObject({ seq: 2, row: { trdPrc: 201 } });
    expect(restored(d).out).toEqual(held(store));
  });

  it('ignores a frame that does not follow the seq it holds, or whose checksum is not the row’s', () => {
    const d = dir();
    const store = new StateStore({ epoch: 'e' });
    const first = store.apply('quote', 'kospi', [{ isuSrtCd: '005930', trdPrc: 100 }], 1000).events[0]!;
    const second = store.apply('quote', 'kospi', [{ isuSrtCd: '005930', trdPrc: 101 }], 2000).events[0]!;
    const third = store.apply('quote', 'kospi', [{ isuSrtCd: '005930', trdPrc: 102 }], 3000).events[0]!;
    const row = { k: 'quote', m: 'kospi', c: '005930', r: first.row, s: 1, t: 1000, x: first.crc };
    const badCrc = second.frame.replace(/"crc":\d+/, '"crc":1');
    writeFileSync(join(d, FILES.snapshot), encodeLine({ v: 1, epoch: 'e', at: 1 }) + encodeLine(row));
    writeFileSync(join(d, FILES.journal), [third.frame, badCrc].map((f) => encodeLine(JSON.parse(f))).join(''));
    expect(loadState(d).topics.get('quote.kospi.005930')).toMatchObject({ s: 1, r: { trdPrc: 100 } });
    writeFileSync(join(d, FILES.journal), [second.frame, second.frame, third.frame].map((f) => encodeLine(JSON.parse(f))).join(''));
    const s = loadState(d);
    expect(s.topics.get('quote.kospi.005930')).toEqual({ ...row, r: third.row, s: 3, t: 3000, x: third.crc });
    expect(s.problems).toEqual([]);
  });
});
