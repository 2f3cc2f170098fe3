import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { SmallSet } from '../../src/gateway/smallset.js';

describe('SmallSet', () => {
  it('behaves as a Set of strings, small or large', () => {
    const op = fc.tuple(fc.constantFrom('add', 'delete', 'has'), fc.integer({ min: 0, max: 60 }).map(String));
    fc.assert(
      fc.property(fc.array(op, { maxLength: 300 }), (ops) => {
        const mine = new SmallSet();
        const ref = new Set<string>();
        for (const [o, v] of ops) {
          if (o === 'add') expect(mine.add(v)).toBe(!ref.has(v) && ref.add(v) !== undefined);
          else if (o === 'delete') expect(mine.delete(v)).toBe(ref.delete(v));
          else expect(mine.has(v)).toBe(ref.has(v));
          expect(mine.size).toBe(ref.size);
        }
        expect([...mine]).toEqual([...ref]);
      }),
      { numRuns: 500 },
    );
  });
});
