import { describe, expect, it } from 'vitest';
import { SharedAllowance } from '../../src/cluster/allowance.js';
import { OnDemandAllowance } from '../../src/upstream/allowance.js';
import { nextReset } from '../../src/upstream/budget.js';
import { redisSuite } from './harness.js';

/** The on-demand share counted in a real Redis: three processes together spend one share of the day. */

describe('cluster-wide on-demand allowance', () => {
  const db = redisSuite();
  const keys = db.keys;

  it('refuses on every process once all of them together spent the share, and expires the counter after its day', async () => {
    const now = Date.now();
    const budget = { limit: 2000, resetAt: nextReset(now) };
    const backplane = { up: true, sendCommand: <T>(args: readonly string[], o?: { timeout?: number }) => db.redis.sendCommand<T>([...args], o) };
    const shared = new SharedAllowance({ redis: backplane, keys, timeoutMs: 1000 });
    const processes = [0, 1, 2].map(() => new OnDemandAllowance(budget, 0.01, () => now, shared));
    // 20 calls allowed; 30 asked for at once, spread over the three.
    const results = await Promise.allSettled(Array.from({ length: 30 }, (_, i) => processes[i % 3]!.take()));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(20);
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(refused).toHaveLength(10);
    for (const r of refused) expect(r.reason).toMatchObject({ code: 'rate_limited' });
    const key = keys.allowance(nextReset(now));
    expect(await db.redis.get(key)).toBe('20');
    const expiresAt = Number(await db.redis.sendCommand(['PEXPIRETIME', key]));
    expect(expiresAt).toBeGreaterThan(nextReset(now));
    expect(expiresAt).toBeLessThanOrEqual(nextReset(now) + 3_600_000);
    // Every process reports the cluster's count as it last saw it.
    expect(Math.max(...processes.map((p) => p.used))).toBe(20);
  });
});
