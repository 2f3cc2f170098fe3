import assert from 'node:assert/strict';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { canonicalJson, crc32 } from '../../src/protocol/crc32.js';
import { diffRows } from '../../src/protocol/patch.js';
import { encode } from '../../src/protocol/encode.js';
import { StateStore } from '../../src/state/store.js';
import type { Row } from '../../src/upstream/normalise.js';

/** Any UTF-16 code unit (lone surrogates included), or an astral character. */
const unit = fc.oneof(
  fc.integer({ min: 0, max: 0xffff }).map((n) => String.fromCharCode(n)),
  fc.integer({ min: 0x10000, max: 0x10ffff }).map((n) => String.fromCodePoint(n)),
  fc.integer({ min: 0x20, max: 0x7e }).map((n) => String.fromCharCode(n)),
);
const value = fc.oneof(
  fc.integer(),
  fc.integer({ min: -(2 ** 53) + 1, max: 2 ** 53 - 1 }),
  fc.double(),
  fc.constantFrom(null, -0, 1e21, 0.1, -12.5, '삼성전자', 'a"b\\c', 'line\nbreak', '\u0007', '😀', '\ud800', ' -', ''),
  fc.string({ unit, maxLength: 8 }),
  fc.boolean(),
  fc.constant({ nested: [1, 'x'] }),
);
// Mostly the same keys in the same order (one layout), sometimes a field more or less, or reordered.
const fieldNames = ['trdPrc', 'accTrdvol', 'a/b', 'x~y', '한글', 'q"k', 'opt'];
const rowArb = fc
  .tuple(fc.array(value, { minLength: fieldNames.length, maxLength: fieldNames.length }), fc.nat(9), fc.boolean())
  .map(([vs, shape, reverse]) => {
    const keys = fieldNames.slice(0, shape < 6 ? 4 : shape - 2);
    const row: Record<string, unknown> = { isuSrtCd: 'A00001' };
    for (const k of reverse ? [...keys].reverse() : keys) row[k] = vs[fieldNames.indexOf(k)];
    return row as Row;
  });
const tsArb = fc.oneof(fc.integer({ min: 0, max: 2 ** 42 }), fc.double({ min: 0, max: 2 ** 42, noNaN: true }));

describe('store frames', () => {
  it('are byte-identical to encode() of the message objects', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(rowArb, tsArb), { minLength: 1, maxLength: 12 }), (steps) => {
        const store = new StateStore({ ringSize: 64 });
        let prev: Row | undefined;
        let seq = 0;
        for (const [row, ts] of steps) {
          const events = store.apply('quote', 'kospi', [row], ts).events;
          const e = store.entry('quote', 'kospi', 'A00001')!;
          const crc = crc32(canonicalJson(row));
          if (prev === undefined) {
            assert.equal(events.length, 1);
            assert.equal(events[0]!.frame, encode({ type: 'snapshot', topic: 'quote.kospi.A00001', seq: 1, ts, data: row, crc }));
          } else {
            const ops = diffRows(prev, row);
            if (ops.length === 0) {
              assert.equal(events.length, 0);
              continue;
            }
            assert.equal(events.length, 1);
            const ev = events[0]!;
            assert.equal(ev.frame, encode({ type: 'patch', topic: 'quote.kospi.A00001', seq: seq + 1, ts, ops, crc }));
            assert.equal(JSON.stringify(ev.ops), JSON.stringify(ops));
            assert.equal(ev.crc, crc);
            assert.deepEqual(ev.bytes, Buffer.from(ev.frame));
            assert.equal(ev.bytes, ev.bytes);
          }
          seq++;
          prev = row;
          assert.equal(e.crc, crc);
          assert.equal(store.snapshot(e), encode({ type: 'snapshot', topic: 'quote.kospi.A00001', seq, ts, data: row, crc }));
        }
      }),
      { numRuns: 1500 },
    );
  });

  it('rebuild a snapshot frame when the row is confirmed later, reusing nothing stale', () => {
    const store = new StateStore();
    const row = { isuSrtCd: '005930', trdPrc: 100 };
    store.apply('quote', 'kospi', [row], 1000);
    const e = store.entry('quote', 'kospi', '005930')!;
    const first = store.snapshot(e);
    expect(store.snapshot(e)).toBe(first);
    store.apply('quote', 'kospi', [{ ...row }], 2000);
    expect(JSON.parse(store.snapshot(e))).toMatchObject({ seq: 1, ts: 2000, data: row });
    store.apply('quote', 'kospi', [{ ...row, trdPrc: 101 }], 3000);
    expect(JSON.parse(store.snapshot(e))).toMatchObject({ seq: 2, ts: 3000, data: { trdPrc: 101 } });
  });
});
