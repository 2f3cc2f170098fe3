import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_CYCLE_GAP_MS, MIN_CYCLE_GAP_MS, connect, cycleGaps, pollCycles, sleep, startBridge, until, type TestBridge } from './helpers.js';

const REALTIME = (id: string) => /multiquote|realtime\.index|v2\.index\.index|stocks\.price|stocks\.orderbook/.test(id);

/** Upstream economy: calls only for what is subscribed, batched 20 codes per call. */
describe('bridge upstream economy', () => {
  let tb: TestBridge;
  beforeAll(async () => {
    tb = await startBridge({ IDLE_GRACE_MS: 500 });
  });
  afterAll(async () => {
    await tb?.bridge.stop();
  });

  const realtimeCalls = () =>
    Object.entries(tb.bridge.sim!.stats.snapshot().byEndpoint)
      .filter(([id]) => REALTIME(id))
      .reduce((s, [, n]) => s + n, 0);

  it('makes no realtime call while nobody is subscribed', async () => {
    const c = await connect(tb);
    // Windows, not waits: a poller that polled regardless would call within one 1 s interval.
    await sleep(1500);
    expect(realtimeCalls()).toBe(0);
    // Subscribe, then leave: after the idle grace the calls stop again.
    await c.request({ op: 'subscribe', channel: 'quote', market: 'kospi', codes: ['005930'] });
    await until(() => realtimeCalls() > 0, 5000, 'first poll');
    await c.request({ op: 'unsubscribe', channel: 'quote', market: 'kospi', codes: ['005930'] });
    await until(() => tb.bridge.poller.feed('quote', 'kospi')?.state === 'idle', 5000, 'the feed to go idle');
    const after = realtimeCalls();
    await sleep(1500);
    expect(realtimeCalls()).toBe(after);
    c.close();
  }, 20_000);

  it('book for 45 codes makes exactly 3 calls per cycle', async () => {
    const symbols = tb.bridge.symbols
      .list('kosdaq')
      .slice(0, 45)
      .map((s) => s.code);
    expect(symbols).toHaveLength(45);
    const c = await connect(tb);
    await c.request({ op: 'subscribe', channel: 'book', market: 'kosdaq', codes: symbols });
    const times = () => tb.bridge.sim!.stats.callTimes('v3.realtime.multiquote.orderbook');
    await until(() => pollCycles(times(), 0, Infinity).length >= 2, 10_000, 'the first cycles');
    const from = Date.now();
    // Six cycles begun: the first five are complete (a cycle's calls go out together, the next a second later).
    await until(() => pollCycles(times(), from, Infinity).length >= 6, 15_000, 'six cycles');
    // One cycle a second (each gap within bounds), each of 3 calls (20 + 20 + 5 codes).
    const cycles = pollCycles(times(), from, Infinity).slice(0, 5);
    expect(cycles.length).toBe(5);
    for (const c of cycles) expect(c.calls).toBe(3);
    for (const g of cycleGaps(cycles)) {
      expect(g).toBeGreaterThanOrEqual(MIN_CYCLE_GAP_MS);
      expect(g).toBeLessThanOrEqual(MAX_CYCLE_GAP_MS);
    }
    expect(tb.bridge.sim!.stats.snapshot().maxInFlight['/v3/market/realtime/kosdaq/multiquote/stocks/orderbook']).toBeLessThanOrEqual(3);
    c.close();
  }, 20_000);
});
