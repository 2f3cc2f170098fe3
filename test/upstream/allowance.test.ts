import { describe, expect, it } from 'vitest';
import { OnDemandAllowance } from '../../src/upstream/allowance.js';
import { nextReset } from '../../src/upstream/budget.js';

describe('OnDemandAllowance', () => {
  it('refuses past its share of the daily limit, then restarts after the reset', () => {
    let now = Date.parse('2026-11-20T05:00:00Z');
    const budget = { limit: 1000 as number | null, resetAt: nextReset(now) as number | null };
    const a = new OnDemandAllowance(budget, 0.01, () => now);
    for (let i = 0; i < 10; i++) a.take();
    expect(a.used).toBe(10);
    let err: unknown;
    try {
      a.take();
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ code: 'rate_limited', resetAt: budget.resetAt });
    now = budget.resetAt! + 1;
    budget.resetAt = nextReset(now);
    expect(() => a.take()).not.toThrow();
    expect(a.used).toBe(1);
  });

  it('refuses nothing while the limit is unknown', () => {
    const a = new OnDemandAllowance({ limit: null, resetAt: null }, 0.1);
    for (let i = 0; i < 100; i++) a.take();
    expect(a.cap).toBeNull();
  });
});
