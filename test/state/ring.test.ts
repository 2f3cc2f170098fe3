import { describe, expect, it } from 'vitest';
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
  });
});
