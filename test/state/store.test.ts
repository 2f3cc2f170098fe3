import { describe, expect, it } from 'vitest';
import jsonpatch from 'fast-json-patch';
import { StateStore } from '../../src/state/store.js';
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
