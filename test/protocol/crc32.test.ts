import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { crc32 as zlibCrc32 } from 'node:zlib';
import { canonicalJson, crc32, hasShape, isPlainJsonString, rowChecksum, rowShape, shapedChecksum, textChecksum } from '../../src/protocol/crc32.js';

/** The definition the protocol states: CRC-32 of the UTF-8 bytes of the canonical JSON. */
const reference = (row: Record<string, unknown>): number => zlibCrc32(Buffer.from(canonicalJson(row), 'utf8'));

/** Any UTF-16 code unit (lone surrogates included), or a well-formed astral pair. */
const codeUnit = fc.oneof(
  fc.integer({ min: 0, max: 0xffff }).map((n) => String.fromCharCode(n)),
  fc.integer({ min: 0x10000, max: 0x10ffff }).map((n) => String.fromCodePoint(n)),
  fc.integer({ min: 0x20, max: 0x7e }).map((n) => String.fromCharCode(n)),
);
const anyString = (maxLength: number) => fc.string({ unit: codeUnit, maxLength });

const key = fc.oneof(
  fc.constantFrom('isuSrtCd', 'trdPrc', 'accTrdvol', 'mktcap', 'a/b', 'x~y', '한글', 'q"uote', 'back\\slash', 'tab\t', '', '10', '2'),
  anyString(8),
);
const value = fc.oneof(
  fc.integer(),
  fc.integer({ min: -(2 ** 53) + 1, max: 2 ** 53 - 1 }),
  fc.constantFrom(0, -0, 2 ** 31, -(2 ** 31), 2 ** 31 - 1, 999_999_999, 1_000_000_000, 1e21, 2 ** 53, -(2 ** 53), 1.5e-7, 123.456, -0.5),
  fc.double(),
  fc.constant(null),
  fc.string({ maxLength: 12 }),
  anyString(12),
  fc.string({ maxLength: 6, unit: 'grapheme' }),
  fc.constantFrom('삼성전자', 'a"b', 'c\\d', 'line\nbreak', '\u0000\u001f', '\ud800', 'x\udc00y', '😀', ' -'),
  fc.boolean(),
);
const row = fc.dictionary(key, value, { maxKeys: 12 });

describe('crc32', () => {
  it('matches known vectors and zlib', () => {
    expect(crc32('')).toBe(0);
    expect(crc32('123456789')).toBe(0xcbf43926);
    for (const s of ['{"a":1}', '삼성전자', 'x'.repeat(1000)]) expect(crc32(s)).toBe(zlibCrc32(s));
  });
  it('equals zlib over the UTF-8 bytes of any string, lone surrogates as U+FFFD', () => {
    fc.assert(
      fc.property(anyString(40), (s) => {
        expect(crc32(s)).toBe(zlibCrc32(Buffer.from(s, 'utf8')));
      }),
      { numRuns: 2000 },
    );
  });
  it('canonical JSON sorts keys and is independent of insertion order', () => {
    expect(canonicalJson({ b: 1, a: 'x', c: null })).toBe('{"a":"x","b":1,"c":null}');
    expect(rowChecksum({ a: 1, b: 2 })).toBe(rowChecksum({ b: 2, a: 1 }));
    expect(rowChecksum({ a: 1, b: 2 })).not.toBe(rowChecksum({ a: 1, b: 3 }));
  });
});

describe('rowChecksum (shape-cached, incremental)', () => {
  it('equals crc32(canonicalJson(row)) for random rows', () => {
    fc.assert(
      fc.property(row, (r) => {
        expect(rowChecksum(r)).toBe(reference(r));
        expect(rowChecksum(r)).toBe(crc32(canonicalJson(r)));
      }),
      { numRuns: 3000 },
    );
  });
  it('reuses a shape across rows of the same keys, and only those', () => {
    fc.assert(
      fc.property(row, fc.array(value, { minLength: 12, maxLength: 12 }), (r, vs) => {
        const shape = rowShape(r);
        const other: Record<string, unknown> = {};
        shape.keys.forEach((k, i) => (other[k] = vs[i]));
        expect(hasShape(other, shape)).toBe(true);
        expect(shapedChecksum(other, shape)).toBe(reference(other));
        const reordered = Object.fromEntries([...Object.entries(r)].reverse());
        expect(rowChecksum(reordered)).toBe(reference(r));
        expect(hasShape({ ...r, extra: 1 }, shape)).toBe(false);
      }),
      { numRuns: 500 },
    );
  });
  it('takes values from their JSON bytes where marked, and serialises the others, to the same checksum', () => {
    fc.assert(
      fc.property(row, fc.array(fc.boolean(), { minLength: 12, maxLength: 12 }), (r, marks) => {
        const shape = rowShape(r);
        const n = shape.keys.length;
        // The row's values written one after another, as JSON, after some bytes that are not the row's.
        let text = 'xyz';
        const fields = new Int32Array(3 * n);
        shape.keys.forEach((k, f) => {
          const json = JSON.stringify(r[k]);
          const marked = marks[f]! && json !== undefined;
          fields[3 * f] = Buffer.byteLength(text) - 3;
          text += marked ? json : 'garbage';
          fields[3 * f + 1] = Buffer.byteLength(text) - 3;
          fields[3 * f + 2] = marked ? 1 : 0;
        });
        expect(textChecksum(r, shape, Buffer.from(text), 3, fields, 0)).toBe(reference(r));
      }),
      { numRuns: 2000 },
    );
  });
  it('handles the empty row, undefined values and values JSON cannot hold as canonicalJson does', () => {
    for (const r of [{}, { a: undefined }, { a: () => 1 }, { a: { z: 1, y: [1, 'x'] } }, { a: Number.NaN, b: Infinity }]) {
      expect(rowChecksum(r as Record<string, unknown>)).toBe(crc32(canonicalJson(r as Record<string, unknown>)));
    }
  });
  it('recognises strings that need no JSON escaping', () => {
    fc.assert(
      fc.property(anyString(20), (s) => {
        expect(isPlainJsonString(s)).toBe(JSON.stringify(s) === `"${s}"` && !/[\ud800-\udfff]/.test(s));
      }),
      { numRuns: 2000 },
    );
  });
});
