import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, sleep, startBridge, until, type TestBridge } from './helpers.js';

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
    tb.bridge.sim!.stats.reset();
    const t0 = Math.floor(Date.now() / 1000);
    await sleep(6000);
    const t1 = Math.floor(Date.now() / 1000);
    const perSecond = tb.bridge.sim!.stats.snapshot().perSecond['v3.realtime.multiquote.orderbook'] ?? [];
    // Whole seconds inside the window: 3 calls each (one cycle per second).
    const inner = perSecond.filter(([s]) => s > t0 && s < t1).map(([, n]) => n);
    expect(inner.length).toBeGreaterThanOrEqual(4);
    for (const n of inner) expect(n).toBe(3);
    expect(tb.bridge.sim!.stats.snapshot().maxInFlight['/v3/market/realtime/kosdaq/multiquote/stocks/orderbook']).toBeLessThanOrEqual(3);
    c.close();
  }, 20_000);
});
