import { describe, expect, it } from 'vitest';
import { crc32 as zlibCrc32 } from 'node:zlib';
import { canonicalJson, crc32, rowChecksum } from '../../src/protocol/crc32.js';

describe('crc32', () => {
  it('matches known vectors and zlib', () => {
    expect(crc32('')).toBe(0);
    expect(crc32('123456789')).toBe(0xcbf43926);
    for (const s of ['{"a":1}', '삼성전자', 'x'.repeat(1000)]) expect(crc32(s)).toBe(zlibCrc32(s));
  });
  it('canonical JSON sorts keys and is independent of insertion order', () => {
    expect(canonicalJson({ b: 1, a: 'x', c: null })).toBe('{"a":"x","b":1,"c":null}');
    expect(rowChecksum({ a: 1, b: 2 })).toBe(rowChecksum({ b: 2, a: 1 }));
    expect(rowChecksum({ a: 1, b: 2 })).not.toBe(rowChecksum({ a: 1, b: 3 }));
  });
});
