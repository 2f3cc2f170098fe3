import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { SIM_KEY, connect, sleep, startBridge, until, type TestBridge, type TestClient } from '../bridge/helpers.js';
import { MemoryLog, ProcessWatch, statusesOf } from './helpers.js';

/**
 * Chaos, the upstream refusing the bridge: a 429 (the daily budget) and a
 * 401 (the credentials). On a 429 nothing is called until the daily reset,
 * then the feed resumes by itself; on a 401 the feed reports `error`, one
 * log line says what to do, and the upstream is retried at most once per
 * `authRetryMs` until it accepts the key again. The bridge's clock is set
 * shortly before the daily reset (00:00 GMT) so the 429 wait ends within
 * the test; timers are real.
 */
describe('chaos: the upstream refuses the bridge (429, 401)', () => {
  const ENDPOINT = 'v2.multiquote.lists';
  const AUTH_RETRY_MS = 1500;
  const resetIn = 7000;
  let offset = 0;
  const log = new MemoryLog();
  let tb: TestBridge;
  let c: TestClient;
  let watch: ProcessWatch;

  beforeAll(async () => {
    watch = new ProcessWatch();
    const logger = createLogger({ level: 'info', secrets: [SIM_KEY], destination: log });
    // Set as late as possible, so start-up time does not eat into the wait before the reset.
    offset = Math.ceil(Date.now() / 86_400_000) * 86_400_000 - Date.now() - resetIn;
    tb = await startBridge({}, { now: () => Date.now() + offset, logger, poller: { authRetryMs: AUTH_RETRY_MS } });
    c = await connect(tb);
    await c.request({ op: 'subscribe', channel: 'quote', market: 'kospi', codes: ['005930'] });
    await until(() => statusesOf(c, 'quote', 'kospi').at(-1)?.state === 'live', 5000, 'live');
  });
  afterAll(async () => {
    c?.close();
    await tb?.bridge.stop();
    watch?.dispose();
  });

  const last = () => statusesOf(c, 'quote', 'kospi').at(-1);
  const feedCalls = () => tb.bridge.sim!.stats.snapshot().byEndpoint[ENDPOINT] ?? 0;

  it('429: rate_limited, not one upstream call until the reset (gets refused locally), then live again', async () => {
    const sim = tb.bridge.sim!;
    sim.faults.set({ rateLimit: {} });
    await until(() => last()?.state === 'rate_limited', 5000, 'rate_limited');
    expect(last()!.reason).toMatch(/daily call budget spent until .*T00:00:00/);
    sim.faults.set({});
    const calls = sim.stats.snapshot().total;
    // Lookups are refused without spending a call, over WebSocket and over HTTP.
    expect(await c.request({ op: 'get', resource: 'master', market: 'kospi', code: '005930' })).toMatchObject({
      type: 'error',
      code: 'upstream_rate_limited',
      retryable: true,
    });
    const api = await fetch(`${tb.url}/api/v2/market/stocks/kospi/005930/master`);
    expect(api.status).toBe(429);
    expect(Number(api.headers.get('retry-after'))).toBeGreaterThan(0);
    // A window, not a wait: a poller that went on would call within its 1 s interval.
    await sleep(1500);
    expect(sim.stats.snapshot().total).toBe(calls);
    await until(() => last()?.state === 'live', resetIn + 8000, 'live after the reset');
    const mark = c.messages.length;
    await until(() => c.messages.slice(mark).some((m) => m.type === 'patch'), 5000, 'patches after the reset');
    expect(c.problems).toEqual([]);
    expect(c.closed).toBeUndefined();
  }, 30_000);

  it('401: error with one log line, at most one retry per authRetryMs, live again once the key is accepted', async () => {
    const sim = tb.bridge.sim!;
    const mark = statusesOf(c, 'quote', 'kospi').length;
    sim.faults.set({ unauthorized: {} });
    await until(() => last()?.state === 'error', 5000, 'error');
    expect(last()!.reason).toBe('upstream refused the credentials (401)');
    const from = feedCalls();
    const t0 = Date.now();
    // A window, not a wait: the retries are counted against the time they had.
    await sleep(3 * AUTH_RETRY_MS + 300);
    const retries = feedCalls() - from;
    expect(retries).toBeGreaterThanOrEqual(2);
    expect(retries).toBeLessThanOrEqual(Math.floor((Date.now() - t0) / AUTH_RETRY_MS) + 1);
    // A lookup says the bridge's credentials are refused, without naming them.
    const g = await c.request({ op: 'get', resource: 'master', market: 'kospi', code: '000660' });
    expect(g).toMatchObject({ type: 'error', code: 'upstream_unavailable', retryable: true });
    expect(JSON.stringify(g)).toMatch(/credentials/);
    sim.faults.set({});
    await until(() => last()?.state === 'live', AUTH_RETRY_MS + 5000, 'live once the key is accepted');
    expect(
      statusesOf(c, 'quote', 'kospi')
        .slice(mark)
        .map((s) => s.state),
    ).toEqual(['error', 'live']);
    const lines = log.matching(/401/);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 50, msg: 'upstream refused the bridge credentials (401); check UPSTREAM_API_KEY' });
    expect(log.text).not.toContain(SIM_KEY);
    expect(c.problems).toEqual([]);
    expect(c.closed).toBeUndefined();
    expect(watch.events).toEqual([]);
  }, 30_000);
});
