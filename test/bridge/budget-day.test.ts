import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { nextReset } from '../../src/upstream/budget.js';
import { connect, startBridge, type TestBridge } from './helpers.js';

/**
 * The budget's new day shows where no call starts it: after the 00:00 GMT
 * reset a bridge that calls nothing (a market closed for the weekend) still
 * reported the last day's remainder in `/status` and `krx_budget_remaining`.
 */
describe('the budget day in /status and /metrics', () => {
  let tb: TestBridge;
  let offset = 0;
  const now = (): number => Date.now() + offset;
  beforeAll(async () => {
    tb = await startBridge({}, { now });
  });
  afterAll(async () => {
    await tb?.bridge.stop();
  });

  async function status(): Promise<{ limit: number; remaining: number; resetAt: number }> {
    const r = await request(`${tb.url}/status`);
    return ((await r.body.json()) as { budget: { limit: number; remaining: number; resetAt: number } }).budget;
  }

  async function gauge(): Promise<number> {
    const text = await (await request(`${tb.url}/metrics`)).body.text();
    return Number(/^krx_budget_remaining (\S+)$/m.exec(text)![1]);
  }

  it('shows the full limit once the reset has passed, with the next reset', async () => {
    // A call spends from the budget: the remainder is below the limit.
    const c = await connect(tb);
    expect(await c.request({ op: 'get', resource: 'master', market: 'kospi', code: '005930' })).toMatchObject({ type: 'result' });
    c.close();
    const before = await status();
    expect(before.remaining).toBeLessThan(before.limit);
    expect(await gauge()).toBe(before.remaining);
    // The clock passes the reset with no call made.
    offset = before.resetAt - Date.now() + 60_000;
    const metricFirst = await gauge();
    const after = await status();
    expect(metricFirst).toBe(before.limit);
    expect(after).toMatchObject({ limit: before.limit, remaining: before.limit, resetAt: nextReset(before.resetAt + 60_000) });
  });
});
