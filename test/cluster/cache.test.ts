import { describe, expect, it } from 'vitest';
import { RedisSharedCache } from '../../src/cluster/cache.js';
import type { Commander } from '../../src/cluster/scripts.js';
import { OnDemandCache } from '../../src/upstream/cache.js';
import { sleep, until } from '../bridge/helpers.js';
import { redisSuite } from './harness.js';

/**
 * The shared on-demand cache on a real Redis: of several processes asking
 * the same thing at once, exactly one calls; a failed holder hands over; no
 * Redis means each calls on its own.
 */

describe('shared on-demand cache', () => {
  const db = redisSuite();
  const keys = db.keys;

  /** One "process": its own OnDemandCache over a shared Redis cache and a counting upstream. */
  function process(calls: { n: number }, delayMs: number) {
    const shared = new RedisSharedCache({ redis: db.redis, keys, lockMs: 2000, pollMs: [5, 20] });
    const caller = {
      call: async () => {
        calls.n++;
        // The upstream's answer time, during which the others ask.
        await sleep(delayMs);
        return { data: { v: calls.n }, receivedAt: Date.now() };
      },
    };
    return new OnDemandCache({ caller, shared, realtimeTtlMs: 60_000, maxTtlMs: 60_000 });
  }

  it('makes one upstream call for concurrent askers on every process, round after round', async () => {
    const calls = { n: 0 };
    const procs = Array.from({ length: 5 }, () => process(calls, 15));
    for (let round = 0; round < 25; round++) {
      const params = { marketcode: 'kospi', issuecode: `R${round}` };
      // Staggered a little, so some ask while the holder stores its answer.
      const results = await Promise.all(procs.map(async (p, i) => (await sleep(i * 4), p.get('v2.stocks.master', params))));
      expect(new Set(results.map((r) => JSON.stringify(r.data))).size).toBe(1);
      expect(calls.n, `round ${round}`).toBe(round + 1);
    }
  }, 20_000);

  it('hands over when the holder fails, and calls directly when Redis is unreachable', async () => {
    const shared = new RedisSharedCache({ redis: db.redis, keys, lockMs: 2000, pollMs: [5, 20] });
    let calls = 0;
    let holding = false;
    const failing = shared.singleFlight('k-fail', async () => {
      holding = true;
      // The holder's call takes a while, and the other asks meanwhile.
      await sleep(30);
      throw new Error('upstream down');
    });
    // The failing one holds the flight (its call runs only once it does) before the other asks.
    await until(() => holding, 3000, 'the first to hold the flight', 1);
    const waiter = shared.singleFlight('k-fail', async () => {
      calls++;
      return { data: { ok: true }, receivedAt: 1 };
    });
    await expect(failing).rejects.toThrow('upstream down');
    expect((await waiter).data).toEqual({ ok: true });
    expect(calls).toBe(1);

    const down: Commander = { sendCommand: () => Promise.reject(new Error('connection refused')) };
    const offline = new RedisSharedCache({ redis: down, keys, lockMs: 2000 });
    await expect(offline.get('x')).rejects.toThrow();
    expect((await offline.singleFlight('x', async () => ({ data: { direct: 1 }, receivedAt: 2 }))).data).toEqual({ direct: 1 });
  });
});
