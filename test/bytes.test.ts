import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ByteBuilder } from '../src/bytes.js';

describe('ByteBuilder', () => {
  it('takes exactly the UTF-8 bytes appended since the last take, whatever it started with, and a taken buffer stays as it was', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.string({ unit: 'grapheme' }), { maxLength: 20 }), { maxLength: 5 }),
        fc.integer({ min: 1, max: 64 }),
        (batches, room) => {
          const b = new ByteBuilder(room);
          const taken: Buffer[] = [];
          for (const texts of batches) {
            let n = 0;
            for (const t of texts) n += b.text(t);
            expect(b.length).toBe(n);
            taken.push(b.take());
            expect(b.length).toBe(0);
          }
          // Appends after a take (which may reuse nothing or grow anew) never change what was taken.
          expect(taken.map((t) => t.toString('utf8'))).toEqual(batches.map((texts) => texts.join('')));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('fills the bytes left for later with set, and views what it holds', () => {
    const b = new ByteBuilder(4);
    const at = b.skip(3);
    b.text('héllo');
    b.set(at, 0x5b);
    b.set(at + 1, 0x31);
    b.set(at + 2, 0x5d);
    expect(b.view(at + 3, b.length).toString('utf8')).toBe('héllo');
    expect(b.take().toString('utf8')).toBe('[1]héllo');
  });
});
