import { describe, expect, it } from 'vitest';
import { LookupLimits } from '../../src/access/lookups.js';
import { nextReset } from '../../src/upstream/budget.js';
import type { UpstreamError } from '../../src/upstream/errors.js';

/**
 * LookupLimits on its two clocks, driven apart: the per-minute rate runs on
 * the monotonic clock, the day's share on the wall clock (the budget's day,
 * reset at 00:00 UTC). A step of the wall clock (NTP, a VM resumed) must
 * neither refill a client's minute nor empty it; a day's end must still
 * reset the share however little monotonic time went by.
 */

/** Two clocks, each stepped by hand. */
function clocks(): { wall: number; mono: number; now: () => number; monotonic: () => number } {
  const c = {
    wall: Date.UTC(2026, 10, 25, 3, 0, 0),
    mono: 5_000,
    now: () => c.wall,
    monotonic: () => c.mono,
  };
  return c;
}

describe('the lookup rate runs on the monotonic clock', () => {
  it('a wall clock stepped forward refills nothing', () => {
    const c = clocks();
    const l = new LookupLimits({ perMinute: 2, clientShare: 1, shareCap: () => null, now: c.now, monotonic: c.monotonic });
    expect([l.admit('a'), l.admit('a'), l.admit('a')]).toEqual([true, true, false]);
    c.wall += 3_600_000;
    expect(l.admit('a')).toBe(false);
    // Half a minute of monotonic time gives back one of the two.
    c.mono += 30_000;
    expect([l.admit('a'), l.admit('a')]).toEqual([true, false]);
  });

  it('a wall clock stepped back empties nothing: the minute still refills as monotonic time goes by', () => {
    const c = clocks();
    const l = new LookupLimits({ perMinute: 2, clientShare: 1, shareCap: () => null, now: c.now, monotonic: c.monotonic });
    expect([l.admit('a'), l.admit('a'), l.admit('a')]).toEqual([true, true, false]);
    c.wall -= 3_600_000;
    c.mono += 60_000;
    expect([l.admit('a'), l.admit('a'), l.admit('a')]).toEqual([true, true, false]);
    // Another client is unaffected by either step.
    expect(l.admit('b')).toBe(true);
  });

  it('defaults to performance.now, not the wall clock', () => {
    let wall = Date.UTC(2026, 10, 25, 3, 0, 0);
    const l = new LookupLimits({ perMinute: 1, clientShare: 1, shareCap: () => null, now: () => wall });
    expect(l.admit('a')).toBe(true);
    wall += 3_600_000;
    expect(l.admit('a')).toBe(false);
  });
});

describe('the day’s share runs on the wall clock', () => {
  /** Spends one upstream call of `client`; the error when its part of the share is spent. */
  function spend(l: LookupLimits, client: string): UpstreamError | undefined {
    const s = l.spender(client);
    try {
      s.check();
    } catch (err) {
      return err as UpstreamError;
    }
    s.spent(1);
    return undefined;
  }

  it('resets at the budget day’s end on the wall clock, however little monotonic time went by', () => {
    const c = clocks();
    // A share of 10 calls, a client's part 0.2 of it: 2 calls a day.
    const l = new LookupLimits({ perMinute: 100, clientShare: 0.2, shareCap: () => 10, now: c.now, monotonic: c.monotonic });
    expect([spend(l, 'a'), spend(l, 'a')]).toEqual([undefined, undefined]);
    expect(spend(l, 'a')?.code).toBe('rate_limited');
    expect(l.used('a')).toBe(2);
    // A day of monotonic time is no new budget day.
    c.mono += 86_400_000;
    expect(spend(l, 'a')?.code).toBe('rate_limited');
    // The wall clock passing the reset is.
    c.wall = nextReset(c.wall) + 1;
    expect(l.used('a')).toBe(0);
    expect(spend(l, 'a')).toBeUndefined();
  });
});
