import { describe, expect, it } from 'vitest';
import { KrxCalendar } from '../../src/market/calendar.js';
import { Sessions } from '../../src/market/session.js';
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
      reserved: 5_000,
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
    const r = planIntervals({ feeds, remaining: 50_000, windowMs, baseMs: 1000, reserved: 5_000 });
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
      remaining: 1.5 * 3600 + 500,
      windowMs: H,
      baseMs: 1000,
      reserved: 500,
    });
    // 1.5 calls/s: b needs 1 (capped), a gets the remaining 0.5 -> 2 s.
    expect(r.get('b')).toBe(1000);
    expect(r.get('a')).toBe(2000);
  });

  it('uses the base interval before the budget is known', () => {
    const r = planIntervals({ feeds: [{ key: 'a', weight: 1, callsPerCycle: 5 }], remaining: null, windowMs: H, baseMs: 1000, reserved: 0 });
    expect(r.get('a')).toBe(1000);
  });

  it('over a whole budget day the poller spends what is not the lookups’, and never their share: 09:00 to 18:00, then the next pre-market', () => {
    const sessions = new Sessions(new KrxCalendar());
    const feeds = [
      { key: 'quote.kospi', weight: 5, callsPerCycle: 1 },
      { key: 'quote.kosdaq', weight: 5, callsPerCycle: 1 },
      { key: 'price.kospi', weight: 4, callsPerCycle: 1 },
      { key: 'price.kosdaq', weight: 4, callsPerCycle: 1 },
      { key: 'book.kospi', weight: 4, callsPerCycle: 2 },
      { key: 'book.kosdaq', weight: 4, callsPerCycle: 2 },
      { key: 'index.kospi', weight: 2, callsPerCycle: 1 },
      { key: 'ohlc.kospi', weight: 2, callsPerCycle: 1 },
    ];
    const limit = 50_000;
    const kept = limit * 0.1;
    const reset = Date.parse('2026-11-25T09:00:00+09:00');
    let remaining = limit;
    let at18 = 0;
    const step = 10_000;
    for (let t = Date.parse('2026-11-24T09:00:00+09:00'); t < reset; t += step) {
      if (sessions.phase(t) === 'closed') {
        if (t === Date.parse('2026-11-24T18:00:00+09:00')) at18 = remaining;
        continue;
      }
      const r = planIntervals({ feeds, remaining, windowMs: sessions.openMs(t, reset), baseMs: 1000, reserved: kept });
      remaining -= feeds.reduce((sum, f) => sum + (f.callsPerCycle * step) / r.get(f.key)!, 0);
    }
    // Before the fix: the share of what remained, over the window to 18:00, left 5 calls at 18:00 and none for the morning.
    expect(at18).toBeGreaterThan(kept + 1_000);
    expect(remaining).toBeGreaterThanOrEqual(kept - 1);
    expect(remaining).toBeLessThan(kept + 0.03 * (limit - kept));
  });
});
