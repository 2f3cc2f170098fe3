import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, sleep, startBridge, until, type TestBridge, type TestClient } from './helpers.js';
import type { StatusMsg } from '../../src/protocol/messages.js';

/**
 * Upstream faults: a 429 and a burst of 5xx from the simulator. Clients see
 * `status` change and recover; the process keeps serving throughout.
 * The bridge's clock is set 6 s before the daily reset (00:00 GMT) so the
 * 429 wait ends within the test; only the clock is shifted, timers are real.
 */
describe('bridge under upstream faults', () => {
  let tb: TestBridge;
  let c: TestClient;
  const resetIn = 6000;
  const offset = Math.ceil(Date.now() / 86_400_000) * 86_400_000 - Date.now() - resetIn;
  beforeAll(async () => {
    tb = await startBridge({}, { now: () => Date.now() + offset });
    c = await connect(tb);
    await c.request({ op: 'subscribe', channel: 'quote', market: 'kospi', codes: ['005930'] });
    await until(() => c.rows.has('quote.kospi.005930'), 5000, 'snapshot');
  });
  afterAll(async () => {
    c?.close();
    await tb?.bridge.stop();
  });

  const states = () =>
    c
      .ofType('status')
      .filter((s: StatusMsg) => s.channel === 'quote' && s.market === 'kospi')
      .map((s) => s.state);

  it('429: rate_limited, no calls until the reset, then live again', async () => {
    const sim = tb.bridge.sim!;
    sim.faults.set({ rateLimit: { rate: 1 } });
    await until(() => states().includes('rate_limited'), 5000, 'rate_limited');
    sim.faults.set({});
    const calls = sim.stats.snapshot().total;
    // A window, not a wait: a poller that went on would call within its 1 s interval.
    await sleep(1500);
    // Nothing is called before the reset, not even with the fault cleared.
    expect(sim.stats.snapshot().total).toBe(calls);
    await until(() => states().at(-1) === 'live', resetIn + 8000, 'live after the reset');
    expect(c.problems).toEqual([]);
  }, 25_000);

  it('a burst of 5xx: stale, then live; the socket stays open', async () => {
    const sim = tb.bridge.sim!;
    const mark = states().length;
    sim.faults.set({ error: { rate: 1, status: [500, 502, 503] } });
    await until(() => states().slice(mark).includes('stale'), 8000, 'stale');
    const stale = c.ofType('status').at(-1)!;
    expect(stale.reason).toMatch(/upstream_error/);
    sim.faults.set({});
    await until(() => states().at(-1) === 'live', 40_000, 'live after the burst');
    expect(c.closed).toBeUndefined();
    const pong = await c.request({ op: 'ping' });
    expect(pong.type).toBe('pong');
    expect(c.problems).toEqual([]);
  }, 60_000);
});
