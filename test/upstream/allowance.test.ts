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
    await expect(a.take()).resolves.toEqual({ dayEnd: nextReset(now) });
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
      adjust: async (_dayEnd, delta) => (count = Math.max(0, count + delta)),
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

  it('counts the attempts a call made: retries add, a call refused before any request gives its count back', async () => {
    const now = Date.parse('2026-11-20T05:00:00Z');
    const a = new OnDemandAllowance({ limit: 1000, resetAt: nextReset(now) }, 0.01, () => now);
    a.settle(await a.take(), 3);
    expect(a.used).toBe(3);
    a.settle(await a.take(), 0);
    expect(a.used).toBe(3);
    a.settle(await a.take(), 1);
    expect(a.used).toBe(4);
  });

  it('settles a shared count in Redis too, and ignores a ticket of an earlier day', async () => {
    let now = Date.parse('2026-11-20T05:00:00Z');
    let count = 0;
    const shared: SharedCount = {
      take: async () => ++count,
      adjust: async (_d, delta) => (count += delta),
    };
    const a = new OnDemandAllowance({ limit: 1000, resetAt: nextReset(now) }, 0.01, () => now, shared);
    a.settle(await a.take(), 3);
    await new Promise((r) => setImmediate(r));
    expect(count).toBe(3);
    const t = await a.take();
    now = nextReset(now) + 1;
    a.settle(t, 0);
    await new Promise((r) => setImmediate(r));
    expect(count).toBe(4);
  });
});
