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
    await sleep(3000);
    expect(realtimeCalls()).toBe(0);
    // Subscribe, then leave: after the idle grace the calls stop again.
    await c.request({ op: 'subscribe', channel: 'quote', market: 'kospi', codes: ['005930'] });
    await until(() => realtimeCalls() > 0, 5000, 'first poll');
    await c.request({ op: 'unsubscribe', channel: 'quote', market: 'kospi', codes: ['005930'] });
    await sleep(1500);
    const after = realtimeCalls();
    await sleep(3000);
    expect(realtimeCalls()).toBe(after);
    c.close();
  }, 20_000);

  it('book for 45 codes makes exactly 3 calls per cycle', async () => {
    const symbols = tb.bridge.symbols.list('kosdaq').slice(0, 45).map((s) => s.code);
    expect(symbols).toHaveLength(45);
    const c = await connect(tb);
    await c.request({ op: 'subscribe', channel: 'book', market: 'kosdaq', codes: symbols });
    await sleep(2500);
    const from = Date.now();
    await sleep(6000);
    const to = Date.now();
    await sleep(300);
    // One cycle a second, each of 3 calls (20 + 20 + 5 codes).
    const cycles = pollCycles(tb.bridge.sim!.stats.callTimes('v3.realtime.multiquote.orderbook'), from, to);
    expect(cycles.length).toBeGreaterThanOrEqual(5);
    for (const c of cycles) expect(c.calls).toBe(3);
    for (const g of cycleGaps(cycles)) {
      expect(g).toBeGreaterThanOrEqual(MIN_CYCLE_GAP_MS);
      expect(g).toBeLessThanOrEqual(MAX_CYCLE_GAP_MS);
    }
    expect(tb.bridge.sim!.stats.snapshot().maxInFlight['/v3/market/realtime/kosdaq/multiquote/stocks/orderbook']).toBeLessThanOrEqual(3);
    c.close();
  }, 20_000);
});
