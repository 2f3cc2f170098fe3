import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalBus } from '../../src/bus/bus.js';
import { connect, startBridge, until, type TestBridge } from '../bridge/helpers.js';

/** Without REDIS_URL nothing of cluster mode runs: one process, the in-process bus, no Redis. */
describe('single-process mode', () => {
  let tb: TestBridge;
  beforeAll(async () => {
    tb = await startBridge();
  });
  afterAll(async () => {
    await tb?.bridge.stop();
  });

  it('uses the in-process bus and reports no cluster', async () => {
    expect(tb.bridge.config.REDIS_URL).toBeUndefined();
    expect(tb.bridge.topology.kind).toBe('local');
    expect(tb.bridge.bus).toBeInstanceOf(LocalBus);
    const status = (await (await fetch(`${tb.url}/status`)).json()) as Record<string, unknown>;
    expect(status).not.toHaveProperty('cluster');
    expect(await (await fetch(`${tb.url}/metrics`)).text()).not.toContain('krx_cluster_');
    const c = await connect(tb);
    await c.request({ op: 'subscribe', channel: 'quote', market: 'kospi', codes: ['005930'] });
    await until(() => c.seqs.has('quote.kospi.005930'), 10_000, 'a snapshot');
    expect(c.epoch).toBe(tb.bridge.store.epoch);
    c.close();
  });
});
