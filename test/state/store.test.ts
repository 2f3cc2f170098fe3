import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import jsonpatch from 'fast-json-patch';
import { StateStore, type ChangeBatch } from '../../src/state/store.js';
import type { Row } from '../../src/upstream/normalise.js';
import { rowChecksum } from '../../src/protocol/crc32.js';
import { SnapshotMsg, PatchMsg } from '../../src/protocol/messages.js';

const row = (code: string, trdPrc: number, extra: Record<string, unknown> = {}) => ({ isuSrtCd: code, trdPrc, accTrdvol: 10, ...extra });

describe('StateStore', () => {
  it('first sight is a snapshot at seq 1; a change is a patch at seq+1; no change is nothing', () => {
    const s = new StateStore({ epoch: 'e1' });
    const b1 = s.apply('quote', 'kospi', [row('005930', 100), row('000660', 200)], 1000);
    expect(b1.events.map((e) => [e.topic, e.kind, e.seq])).toEqual([
      ['quote.kospi.005930', 'snapshot', 1],
      ['quote.kospi.000660', 'snapshot', 1],
    ]);
    const b2 = s.apply('quote', 'kospi', [row('005930', 100), row('000660', 210)], 2000);
    expect(b2.events.map((e) => [e.topic, e.kind, e.seq])).toEqual([['quote.kospi.000660', 'patch', 2]]);
    const frame = JSON.parse(b2.events[0]!.frame);
    expect(PatchMsg.parse(frame)).toMatchObject({ ts: 2000, ops: [{ op: 'replace', path: '/trdPrc', value: 210 }] });
    expect(frame.crc).toBe(rowChecksum(row('000660', 210)));
    expect(s.apply('quote', 'kospi', [row('005930', 100)], 3000).events).toEqual([]);
  });

  it('keeps an equal row read again, without an event, so the same object is found stored next time', () => {
    const s = new StateStore();
    const first = row('005930', 100);
    s.apply('quote', 'kospi', [first], 1000);
    const again = row('005930', 100);
    expect(s.apply('quote', 'kospi', [again], 2000).events).toEqual([]);
    const e = s.entry('quote', 'kospi', '005930')!;
    expect(e.row).toBe(again);
    expect([e.seq, e.seenTs]).toEqual([1, 2000]);
    // The very object stored: only the time it was seen moves.
    expect(s.apply('quote', 'kospi', [again], 3000).events).toEqual([]);
    expect([e.row, e.seq, e.seenTs]).toEqual([again, 1, 3000]);
    // Equal values in another key order are not adopted: the snapshot keeps the stored order.
    const reordered = { accTrdvol: 10, trdPrc: 100, isuSrtCd: '005930' };
    expect(s.apply('quote', 'kospi', [reordered], 4000).events).toEqual([]);
    expect(e.row).toBe(again);
  });

  it('snapshot frames carry the latest row and the last confirmation time', () => {
    const s = new StateStore();
    s.apply('quote', 'kosdaq', [row('247540', 1)], 1000);
    s.apply('quote', 'kosdaq', [row('247540', 2)], 2000);
    s.apply('quote', 'kosdaq', [row('247540', 2)], 3000);
    const e = s.entry('quote', 'kosdaq', '247540')!;
    const snap = SnapshotMsg.parse(JSON.parse(s.snapshot(e)));
    expect(snap).toMatchObject({ seq: 2, ts: 3000, data: row('247540', 2) });
    expect(snap.crc).toBe(rowChecksum(snap.data));
  });

  it('patches applied in order to the first snapshot give the latest row', () => {
    const s = new StateStore({ ringSize: 1000 });
    let local: Record<string, unknown> | undefined;
    let seq = 0;
    for (let i = 0; i < 200; i++) {
      const r = row('005930', 1000 + ((i * 7) % 13), i % 5 === 0 ? { note: `n${i}` } : {});
      for (const ev of s.apply('quote', 'kospi', [r], i).events) {
        const msg = JSON.parse(ev.frame);
        if (msg.type === 'snapshot') local = msg.data;
        else local = jsonpatch.applyPatch(local, msg.ops).newDocument;
        expect(msg.seq).toBe(++seq);
        expect(rowChecksum(local!)).toBe(msg.crc);
      }
    }
    expect(local).toEqual(s.entry('quote', 'kospi', '005930')!.row);
  });

  it('replays the missed patches, or nothing when out of the ring', () => {
    const s = new StateStore({ ringSize: 4 });
    for (let i = 0; i < 10; i++) s.apply('book', 'kospi', [row('005930', i)], i);
    const e = s.entry('book', 'kospi', '005930')!;
    expect(e.seq).toBe(10);
    expect(s.replay(e, 8)!.map((f) => JSON.parse(f).seq)).toEqual([9, 10]);
    expect(s.replay(e, 10)).toEqual([]);
    expect(s.replay(e, 2)).toBeUndefined();
  });

  it('skips rows without a key', () => {
    const s = new StateStore();
    expect(s.apply('quote', 'kospi', [{ trdPrc: 1 }, { isuSrtCd: '', trdPrc: 2 }], 1).events).toEqual([]);
  });
});

describe('StateStore replay', () => {
  // Values a row's fields take: numbers of every kind, strings that need escaping or are not ASCII, null and booleans.
  const value = fc.oneof(
    fc.integer({ min: -1e6, max: 1e6 }),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.constantFrom(0, -0, 1e21, 2 ** 53, 0.1),
    fc.string({ maxLength: 6 }),
    fc.constantFrom('삼성전자', ' -', 'a"b', 'c\\d', '\u2028', '\ud800'),
    fc.constant(null),
    fc.boolean(),
  );
  const fields = fc.dictionary(fc.constantFrom('trdPrc', 'accTrdvol', 'mktcap', 'isuKorNm', 'x', '10'), value, { maxKeys: 5 });
  const rows = fc.array(fields, { minLength: 1, maxLength: 40 });

  /** Every patch frame of every batch, by topic and seq. */
  function collect(batches: readonly ChangeBatch[]): Map<string, Map<number, string>> {
    const out = new Map<string, Map<number, string>>();
    for (const b of batches) {
      for (const e of b.events) {
        if (e.kind !== 'patch') continue;
        if (!out.has(e.topic)) out.set(e.topic, new Map());
        out.get(e.topic)!.set(e.seq, e.frame);
      }
    }
    return out;
  }

  it('resends, from any seq the ring covers, the very frames sent live: by apply, and by mirror on another process', () => {
    fc.assert(
      fc.property(rows, fc.integer({ min: 1, max: 8 }), (seq, ringSize) => {
        const s = new StateStore({ epoch: 'e', ringSize });
        const m = new StateStore({ epoch: 'e', ringSize });
        const batches: ChangeBatch[] = [];
        seq.forEach((f, i) => {
          const r: Row = { isuSrtCd: '005930', ...(f as Row) };
          const b = s.apply('quote', 'kospi', [r], 1_000 + i);
          batches.push(b);
          for (const e of b.events) {
            const o = m.mirror('quote', 'kospi', {
              code: '005930',
              seq: e.seq,
              ts: b.ts,
              kind: e.kind,
              frame: e.frame,
              row: e.row,
              ...(e.ops ? { ops: e.ops } : {}),
              crc: e.crc!,
            });
            expect(o.kind).toBe('applied');
          }
        });
        const live = collect(batches).get('quote.kospi.005930') ?? new Map<number, string>();
        for (const store of [s, m]) {
          const e = store.entry('quote', 'kospi', '005930')!;
          const oldest = Math.max(1, e.seq - ringSize);
          for (let after = oldest; after <= e.seq; after++) {
            const want = Array.from({ length: e.seq - after }, (_, k) => live.get(after + 1 + k));
            expect(store.replay(e, after)).toEqual(want);
            expect(store.canReplay(e, after)).toBe(true);
          }
          if (oldest > 1) {
            expect(store.replay(e, oldest - 1)).toBeUndefined();
            expect(store.canReplay(e, oldest - 1)).toBe(false);
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});
