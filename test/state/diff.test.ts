import { describe, expect, it } from 'vitest';
import jsonpatch from 'fast-json-patch';
import fc from 'fast-check';
import { applyOps, diffRows, fieldOf, pointer } from '../../src/protocol/patch.js';

describe('diffRows', () => {
  it.each([
    ['equal rows', { a: 1, b: 'x' }, { a: 1, b: 'x' }, []],
    ['changed field', { a: 1 }, { a: 2 }, [{ op: 'replace', path: '/a', value: 2 }]],
    ['new field', { a: 1 }, { a: 1, b: null }, [{ op: 'add', path: '/b', value: null }]],
    ['removed field', { a: 1, b: 2 }, { a: 1 }, [{ op: 'remove', path: '/b' }]],
    ['null to number', { a: null }, { a: 5 }, [{ op: 'replace', path: '/a', value: 5 }]],
    [
      'escaped names',
      { 'x/y': 1, 'a~b': 1 },
      { 'x/y': 2, 'a~b': 3 },
      [
        { op: 'replace', path: '/x~1y', value: 2 },
        { op: 'replace', path: '/a~0b', value: 3 },
      ],
    ],
  ])('%s', (_name, prev, next, ops) => {
    expect(diffRows(prev, next)).toEqual(ops);
  });

  it('produces RFC 6902 ops that fast-json-patch applies to the exact next row', () => {
    const value = fc.oneof(fc.integer(), fc.string({ maxLength: 5 }), fc.constant(null), fc.double({ noNaN: true, noDefaultInfinity: true }));
    const row = fc.dictionary(fc.constantFrom('trdPrc', 'accTrdvol', 'a/b', 'x~y', 'cmpprevddTpCd', 'mktcap'), value);
    fc.assert(
      fc.property(row, row, (prev, next) => {
        const ops = diffRows(prev, next);
        const applied = jsonpatch.applyPatch(structuredClone(prev), structuredClone(ops) as jsonpatch.Operation[]).newDocument;
        expect(applied).toEqual(next);
        expect(applyOps(prev, ops)).toEqual(next);
      }),
      { numRuns: 500 },
    );
  });
});

describe('applyOps', () => {
  it('refuses ops a flat row cannot take', () => {
    expect(applyOps({ a: 1 }, [{ op: 'replace', path: '/b', value: 1 }])).toBeUndefined();
    expect(applyOps({ a: 1 }, [{ op: 'remove', path: '/b' }])).toBeUndefined();
    expect(applyOps({ a: 1 }, [{ op: 'add', path: '/a/b', value: 1 }])).toBeUndefined();
  });
  it('does not modify its input', () => {
    const row = { a: 1 };
    applyOps(row, [{ op: 'replace', path: '/a', value: 2 }]);
    expect(row).toEqual({ a: 1 });
  });
});

describe('pointers', () => {
  it('round-trips field names', () => {
    for (const f of ['a', 'a/b', 'a~b', '~1', '']) expect(fieldOf(pointer(f)) ?? '').toBe(f);
  });
});
