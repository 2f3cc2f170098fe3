import { describe, expect, it } from 'vitest';
import { planIntervals } from '../../src/poller/pacer.js';

const H = 3600_000;

describe('planIntervals', () => {
  it('gives every feed the base interval when the budget affords it', () => {
    // 2 calls/s for 9 h = 64,800 calls; 100,000 left.
    const r = planIntervals({
      feeds: [
        { key: 'quote.kospi', weight: 5, callsPerCycle: 1 },
        { key: 'book.kospi', weight: 4, callsPerCycle: 1 },
      ],
      remaining: 100_000,
      windowMs: 9 * H,
      baseMs: 1000,
      reserve: 0.1,
    });
    expect([...r.values()]).toEqual([1000, 1000]);
  });

  it('widens intervals by weight when the budget is short, and never overspends', () => {
    const feeds = [
      { key: 'quote.kospi', weight: 5, callsPerCycle: 1 },
      { key: 'quote.kosdaq', weight: 5, callsPerCycle: 1 },
      { key: 'book.kospi', weight: 4, callsPerCycle: 3 },
      { key: 'aht.kospi', weight: 1, callsPerCycle: 1 },
    ];
    const windowMs = 9 * H;
    const r = planIntervals({ feeds, remaining: 50_000, windowMs, baseMs: 1000, reserve: 0.1 });
    const spend = feeds.reduce((s, f) => s + (f.callsPerCycle * windowMs) / r.get(f.key)!, 0);
    expect(spend).toBeLessThanOrEqual(50_000 * 0.9 + 1);
    expect(spend).toBeGreaterThan(50_000 * 0.9 * 0.97);
    expect(r.get('quote.kospi')!).toBeLessThan(r.get('aht.kospi')!);
    for (const v of r.values()) expect(v).toBeGreaterThanOrEqual(1000);
  });

  it('gives a feed that needs little its need and the rest to the others', () => {
    const r = planIntervals({
      feeds: [
        { key: 'a', weight: 1, callsPerCycle: 1 },
        { key: 'b', weight: 100, callsPerCycle: 1 },
      ],
      remaining: (1.5 * 3600) / 0.9,
      windowMs: H,
      baseMs: 1000,
      reserve: 0.1,
    });
    // 1.5 calls/s: b needs 1 (capped), a gets the remaining 0.5 -> 2 s.
    expect(r.get('b')).toBe(1000);
    expect(r.get('a')).toBe(2000);
  });

  it('uses the base interval before the budget is known', () => {
    const r = planIntervals({ feeds: [{ key: 'a', weight: 1, callsPerCycle: 5 }], remaining: null, windowMs: H, baseMs: 1000, reserve: 0 });
    expect(r.get('a')).toBe(1000);
  });
});
