import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ReplayRing } from '../../src/state/ring.js';

describe('ReplayRing', () => {
  const filled = (n: number, cap: number) => {
    const r = new ReplayRing(cap);
    for (let s = 2; s <= n; s++) r.push(s, `f${s}`);
    return r;
  };
  it('returns exactly the missed frames within capacity', () => {
    const r = filled(10, 32);
    expect(r.since(7, 10)).toEqual(['f8', 'f9', 'f10']);
    expect(r.since(1, 10)).toEqual(['f2', 'f3', 'f4', 'f5', 'f6', 'f7', 'f8', 'f9', 'f10']);
    expect(r.since(10, 10)).toEqual([]);
  });
  it('refuses a resume older than what it holds', () => {
    const r = filled(100, 8);
    expect(r.oldest()).toBe(93);
    expect(r.since(91, 100)).toBeUndefined();
    expect(r.since(92, 100)).toHaveLength(8);
  });
  it('refuses a seq ahead of the latest and an empty ring', () => {
    expect(filled(10, 32).since(11, 10)).toBeUndefined();
    expect(new ReplayRing(4).since(1, 3)).toBeUndefined();
  });
  it('refuses when the latest is not held', () => {
    const r = filled(10, 32);
    expect(r.since(5, 12)).toBeUndefined();
    expect(r.since(5, 9)).toBeUndefined();
  });
  it('after a gap in seqs, holds only the frames from the gap on', () => {
    const r = filled(6, 32);
    r.push(9, 'f9');
    r.push(10, 'f10');
    expect(r.oldest()).toBe(9);
    expect(r.since(5, 10)).toBeUndefined();
    expect(r.since(8, 10)).toEqual(['f9', 'f10']);
  });
});

describe('ReplayRing contents', () => {
  it('returns exactly the last frames pushed, for any capacity', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }),
        fc.array(fc.string({ maxLength: 300, unit: 'grapheme' }), { minLength: 1, maxLength: 200 }),
        (cap, frames) => {
          const r = new ReplayRing(cap);
          const pushed: string[] = [];
          frames.forEach((f, i) => {
            r.push(i + 1, f);
            pushed.push(f);
            const latest = i + 1;
            const held = Math.min(cap, latest);
            expect(r.oldest()).toBe(latest - held + 1);
            expect(r.since(latest - held, latest)).toEqual(pushed.slice(latest - held));
            if (held > 1) expect(r.since(latest - 2, latest)).toEqual(pushed.slice(latest - 2));
          });
        },
      ),
      { numRuns: 300 },
    );
  });
  it('keeps frames of any sizes, for any capacity', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), fc.array(fc.nat({ max: 3000 }), { minLength: 1, maxLength: 300 }), (cap, sizes) => {
        const r = new ReplayRing(cap);
        const pushed = sizes.map((n, i) => `${i}:` + '한x'.repeat(n % 7 === 0 ? n : n % 97));
        pushed.forEach((f, i) => r.push(i + 1, f));
        const held = Math.min(cap, pushed.length);
        expect(r.since(pushed.length - held, pushed.length)).toEqual(pushed.slice(pushed.length - held));
      }),
      { numRuns: 200 },
    );
  });
  it('forgets everything on clear', () => {
    const r = new ReplayRing(4);
    r.push(1, 'a');
    r.clear();
    expect(r.oldest()).toBeUndefined();
    r.push(2, 'b');
    expect(r.since(1, 2)).toEqual(['b']);
  });
});
