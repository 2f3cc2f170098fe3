import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  FieldScan,
  NESTED,
  NOT_JSON,
  canonicalInteger,
  compositeEnd,
  firstArray,
  numberEnd,
  plainAsciiString,
  scalarEnd,
  stringEnd,
} from '../../src/upstream/scan.js';

const bytes = (s: string): Buffer => Buffer.from(s);

/** Whether `text` is one JSON value of the kind asked for. */
function parses(text: string, kind: 'number' | 'string' | 'scalar'): boolean {
  try {
    const v: unknown = JSON.parse(text);
    if (kind === 'scalar') return v === null || typeof v !== 'object';
    return typeof v === kind && /^\s*\S/.test(text) && text.trim() === text;
  } catch {
    return false;
  }
}

describe('scan', () => {
  it('reads a number token exactly where JSON.parse reads a number', () => {
    const token = fc.stringMatching(/^[-+0-9.eE]{1,8}$/);
    fc.assert(
      fc.property(token, (t) => {
        const b = bytes(t);
        expect([t, numberEnd(b, 0, b.length) === b.length]).toStrictEqual([t, parses(t, 'number')]);
      }),
      { numRuns: 3000 },
    );
  });

  it('reads a string token to its closing quote, refusing raw control characters', () => {
    // Pieces that never end the string early: escaped quotes and backslashes, text, a raw newline.
    const inner = fc.array(fc.constantFrom('a', '\\"', '\\\\', '\n', '삼', ' ', '}'), { maxLength: 6 }).map((a) => a.join(''));
    fc.assert(
      fc.property(inner, (s) => {
        const t = `"${s}"`;
        const b = bytes(t);
        expect(stringEnd(b, 0, b.length)).toBe(parses(t, 'string') ? b.length : NOT_JSON);
      }),
    );
  });

  it('tells scalars, nested values and junk apart', () => {
    const cases: [string, number][] = [
      ['true', 4],
      ['false', 5],
      ['null', 4],
      ['nul', NOT_JSON],
      ['"a"', 3],
      ['-1.5e3', 6],
      ['{"a":1}', NESTED],
      ['[1]', NESTED],
      ['x', NOT_JSON],
      ['', NOT_JSON],
    ];
    for (const [t, want] of cases) expect([t, scalarEnd(bytes(t), 0, t.length)]).toStrictEqual([t, want]);
    expect(compositeEnd(bytes('{"a":"}]","b":[1,{"c":2}]} tail'), 0, 31)).toBe(26);
    expect(compositeEnd(bytes('{"a":[1}'), 0, 8)).toBe(NOT_JSON);
    expect(firstArray(bytes('{"a":"[x","b":[1]}'), 0, 18)).toBe(14);
    expect(firstArray(bytes('{"a":1}'), 0, 7)).toBe(NOT_JSON);
  });

  it('takes an integer token as its value only when JSON.stringify writes it back the same', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.stringMatching(/^-?[0-9]{1,17}$/),
          // Around 2^53, where a sixteen-digit integer stops being exact.
          fc.bigInt({ min: 2n ** 53n - 2000n, max: 2n ** 53n + 2000n }).map((n) => String(n)),
          fc.bigInt({ min: 2n ** 53n - 2000n, max: 2n ** 53n + 2000n }).map((n) => `-${n}`),
          fc.constantFrom('0', '-0', '007', '1.0', '1e2', '9007199254740991', '9007199254740992', '9999999999999999'),
        ),
        (t) => {
          const v = canonicalInteger(bytes(t), 0, t.length);
          const safe = /^-?(0|[1-9][0-9]*)$/.test(t) && t !== '-0' && BigInt(t.replace('-', '')) <= BigInt(Number.MAX_SAFE_INTEGER);
          expect([t, Number.isNaN(v) ? undefined : v]).toStrictEqual([t, safe ? Number(t) : undefined]);
          if (safe) expect(JSON.stringify(v)).toBe(t);
        },
      ),
      { numRuns: 2000 },
    );
    expect(plainAsciiString(bytes('"abc 1"'), 0, 7)).toBe(true);
    expect(plainAsciiString(bytes('"a\\"b"'), 0, 6)).toBe(false);
    expect(plainAsciiString(bytes('"삼"'), 0, 5)).toBe(false);
  });

  it('scans the fields of a flat object with any whitespace, and stops at a nested value', () => {
    const s = new FieldScan();
    const text = '{ "a" : 1 ,\n"b":"x\\"y"\t}';
    expect(s.scan(bytes(text), 0, text.length)).toBe(true);
    expect([s.count, s.end]).toStrictEqual([2, text.length]);
    const span = (f: number, k: number) => text.slice(s.spans[4 * f + k]!, s.spans[4 * f + k + 1]!);
    expect([span(0, 0), span(0, 2), span(1, 0), span(1, 2)]).toStrictEqual(['"a"', '1', '"b"', '"x\\"y"']);
    expect(s.scan(bytes('{"a":{"b":1}}'), 0, 13)).toBe(false);
    expect(s.flat).toBe(false);
    expect(s.scan(bytes('{"a":1,}'), 0, 8)).toBe(false);
    expect(s.flat).toBe(true);
    expect(s.scan(bytes('{}'), 0, 2)).toBe(true);
  });
});
