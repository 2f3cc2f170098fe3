import { describe, expect, it } from 'vitest';
import { rowChecksum } from '../../src/protocol/crc32.js';
import type { PatchOp } from '../../src/protocol/messages.js';
import { TopicTable } from '../../src/client/topics/state.js';

const T = 'quote.kospi.005930';
const row0 = { isuSrtCd: '005930', trdPrc: 71000, accTrdvol: 10 };

function snap(table: TopicTable, seq = 5, data: Record<string, unknown> = { ...row0 }) {
  return table.snapshot({ topic: T, seq, ts: 1000, data, crc: rowChecksum(data) });
}

function patch(seq: number, ops: PatchOp[], after: Record<string, unknown>, crc = rowChecksum(after)) {
  return { topic: T, seq, ts: 2000 + seq, ops, crc };
}

const up = (price: number): PatchOp[] => [{ op: 'replace', path: '/trdPrc', value: price }];
const withPrice = (price: number) => ({ ...row0, trdPrc: price });

describe('TopicTable', () => {
  it('a snapshot replaces the row; the next patch applies and advances the seq', () => {
    const t = new TopicTable();
    const s = snap(t)!;
    expect(s.crcOk).toBe(true);
    expect(s.change).toMatchObject({ topic: T, channel: 'quote', market: 'kospi', code: '005930', seq: 5, kind: 'snapshot' });
    const out = t.patch(patch(6, up(71100), withPrice(71100)));
    expect(out).toMatchObject({ kind: 'applied', change: { seq: 6, kind: 'patch', ts: 2006, ops: up(71100) } });
    expect(t.row(T)).toEqual(withPrice(71100));
    expect(t.seq(T)).toBe(6);
  });

  it('add and remove operations apply to the flat row', () => {
    const t = new TopicTable();
    snap(t);
    const added = { ...row0, note: 'VI' };
    expect(t.patch(patch(6, [{ op: 'add', path: '/note', value: 'VI' }], added))?.kind).toBe('applied');
    expect(t.patch(patch(7, [{ op: 'remove', path: '/note' }], row0))?.kind).toBe('applied');
    expect(t.row(T)).toEqual(row0);
  });

  it('rows are frozen so a listener cannot change the held copy', () => {
    const t = new TopicTable();
    snap(t);
    const r = t.row(T) as Record<string, unknown>;
    expect(Object.isFrozen(r)).toBe(true);
    expect(() => {
      r.trdPrc = 1;
    }).toThrow(TypeError);
    t.patch(patch(6, up(71100), withPrice(71100)));
    expect(Object.isFrozen(t.row(T))).toBe(true);
    const loose = new TopicTable({ freeze: false });
    snap(loose);
    expect(Object.isFrozen(loose.row(T))).toBe(false);
  });

  it('a duplicate or older seq is ignored and changes nothing', () => {
    const t = new TopicTable();
    snap(t);
    t.patch(patch(6, up(71100), withPrice(71100)));
    expect(t.patch(patch(6, up(99), withPrice(99)))).toEqual({ kind: 'ignored', reason: 'duplicate' });
    expect(t.patch(patch(3, up(98), withPrice(98)))).toEqual({ kind: 'ignored', reason: 'duplicate' });
    expect(t.row(T)).toEqual(withPrice(71100));
    expect(t.isResyncing(T)).toBe(false);
  });

  it('a gap asks for a resync once, drops later patches, and the next snapshot heals it', () => {
    const t = new TopicTable();
    snap(t);
    expect(t.patch(patch(8, up(71200), withPrice(71200)))).toEqual({ kind: 'resync', reason: 'gap' });
    expect(t.row(T)).toEqual(row0);
    expect(t.isResyncing(T)).toBe(true);
    expect(t.patch(patch(9, up(71300), withPrice(71300)))).toEqual({ kind: 'ignored', reason: 'resyncing' });
    expect(t.since(() => true)).toEqual({});
    expect(t.resyncing()).toEqual([T]);
    snap(t, 9, withPrice(71300));
    expect(t.isResyncing(T)).toBe(false);
    expect(t.patch(patch(10, up(71400), withPrice(71400)))?.kind).toBe('applied');
  });

  it('operations that do not apply ask for a resync', () => {
    const t = new TopicTable();
    snap(t);
    const bad: PatchOp[] = [{ op: 'replace', path: '/missing', value: 1 }];
    expect(t.patch(patch(6, bad, { ...row0, missing: 1 }))).toEqual({ kind: 'resync', reason: 'ops' });
    expect(t.row(T)).toEqual(row0);
  });

  it('a checksum mismatch asks for a resync; with verification off the patch applies', () => {
    const t = new TopicTable();
    snap(t);
    expect(t.patch(patch(6, up(71100), withPrice(71100), 12345))).toEqual({ kind: 'resync', reason: 'crc' });
    expect(t.row(T)).toEqual(row0);
    const off = new TopicTable({ verifyCrc: false });
    snap(off);
    expect(off.patch(patch(6, up(71100), withPrice(71100), 12345))?.kind).toBe('applied');
  });

  it('a snapshot whose data does not match its checksum is kept but flagged', () => {
    const t = new TopicTable();
    const out = t.snapshot({ topic: T, seq: 1, ts: 1, data: { ...row0 }, crc: 1 });
    expect(out?.crcOk).toBe(false);
    expect(t.row(T)).toEqual(row0);
  });

  it('a snapshot may go back in seq (a new server epoch) and replaces the row', () => {
    const t = new TopicTable();
    snap(t, 500);
    snap(t, 2, withPrice(1));
    expect(t.seq(T)).toBe(2);
    expect(t.row(T)).toEqual(withPrice(1));
  });

  it('a patch for a topic without a row asks for a resync; an invalid topic is refused', () => {
    const t = new TopicTable();
    expect(t.patch(patch(2, up(1), withPrice(1)))).toEqual({ kind: 'resync', reason: 'unknown' });
    expect(t.row(T)).toBeUndefined();
    expect(t.topics()).toEqual([]);
    expect(t.patch({ ...patch(2, up(1), withPrice(1)), topic: 'nope' })).toBeUndefined();
    expect(t.snapshot({ topic: 'quote.nasdaq.AAPL', seq: 1, ts: 1, data: {}, crc: 0 })).toBeUndefined();
  });

  it('since lists held, healthy topics that pass the filter; deleteWhere drops by parts', () => {
    const t = new TopicTable();
    for (const [topic, seq] of [
      ['quote.kospi.005930', 3],
      ['quote.kospi.000660', 7],
      ['book.kospi.005930', 2],
    ] as const) {
      t.snapshot({ topic, seq, ts: 1, data: { a: 1 }, crc: rowChecksum({ a: 1 }) });
    }
    t.markResync('quote.kospi.000660');
    expect(t.since((p) => p.channel === 'quote')).toEqual({ 'quote.kospi.005930': 3 });
    expect(t.deleteWhere((p) => p.code === '005930')).toEqual(['quote.kospi.005930', 'book.kospi.005930']);
    expect(t.size).toBe(1);
  });
});
