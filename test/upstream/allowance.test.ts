import { describe, expect, it } from 'vitest';
import { OnDemandAllowance, type SharedCount } from '../../src/upstream/allowance.js';
import { nextReset } from '../../src/upstream/budget.js';

describe('OnDemandAllowance', () => {
  it('refuses past its share of the daily limit, then restarts after the reset', async () => {
    let now = Date.parse('2026-11-20T05:00:00Z');
    const budget = { limit: 1000 as number | null, resetAt: nextReset(now) as number | null };
    const a = new OnDemandAllowance(budget, 0.01, () => now);
    for (let i = 0; i < 10; i++) await a.take();
    expect(a.used).toBe(10);
    await expect(a.take()).rejects.toMatchObject({ code: 'rate_limited', resetAt: budget.resetAt });
    now = budget.resetAt! + 1;
    budget.resetAt = nextReset(now);
    await expect(a.take()).resolves.toBeUndefined();
    expect(a.used).toBe(1);
  });

  it('refuses nothing while the limit is unknown', async () => {
    const a = new OnDemandAllowance({ limit: null, resetAt: null }, 0.1);
    for (let i = 0; i < 100; i++) await a.take();
    expect(a.cap).toBeNull();
  });

  it('follows a shared count, and counts locally from the last shared figure while it is out of reach', async () => {
    const now = Date.parse('2026-11-20T05:00:00Z');
    const budget = { limit: 1000, resetAt: nextReset(now) };
    let count = 0;
    let reachable = true;
    const days: number[] = [];
    const shared: SharedCount = {
      take: async (dayEnd, cap) => {
        days.push(dayEnd);
        if (!reachable) throw new Error('down');
        if (count >= cap) return -1;
        return ++count;
      },
    };
    const a = new OnDemandAllowance(budget, 0.01, () => now, shared);
    // Another process spent 7 of the 10.
    count = 7;
    await a.take();
    expect(a.used).toBe(8);
    expect(days).toEqual([nextReset(now)]);
    reachable = false;
    await a.take();
    await a.take();
    expect(a.used).toBe(10);
    await expect(a.take()).rejects.toMatchObject({ code: 'rate_limited' });
    reachable = true;
    count = 10;
    await expect(a.take()).rejects.toMatchObject({ code: 'rate_limited' });
    expect(count).toBe(10);
  });
});
