import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { SIM_KEY, connect, startBridge, type TestBridge, type TestClient } from './helpers.js';
import { ResultMsg } from '../../src/protocol/messages.js';

/** On-demand `get` for every listed resource, and the REST passthrough, against the simulator. */
describe('bridge on-demand lookups', () => {
  let tb: TestBridge;
  let c: TestClient;
  beforeAll(async () => {
    tb = await startBridge();
    c = await connect(tb);
  });
  afterAll(async () => {
    c?.close();
    await tb?.bridge.stop();
  });

  const cases: [string, string, string | undefined, Record<string, unknown> | undefined, (data: Record<string, unknown>) => void][] = [
    ['master', 'kospi', '005930', undefined, (d) => expect(d).toMatchObject({ isuSrtCd: '005930', isuCd: 'KR7005930003' })],
    ['master', 'kosdaq', '247540', undefined, (d) => expect(d).toMatchObject({ isuSrtCd: '247540' })],
    ['selectivemaster', 'kospi', '005930', { fields: ['prevddClsprc', 'wk52HgstPrc'] }, (d) => expect(typeof d.prevddClsprc).toBe('number')],
    ['history', 'kospi', '005930', { period: 'D', from: '20261001', to: '20261120', count: 20 }, (d) => expect((d.hisLists as unknown[]).length).toBe(20)],
    ['history', 'kosdaq', '247540', { period: 'W', from: '20260101', to: '20261120', count: 5 }, (d) => expect((d.hisLists as unknown[]).length).toBe(5)],
    ['intraday', 'kospi', '005930', { interval: 600, from: '0900', to: '1200' }, (d) => expect(Array.isArray(d.hisLists)).toBe(true)],
    ['lists', 'konex', undefined, undefined, (d) => expect((d.isuLists as unknown[]).length).toBeGreaterThan(50)],
    ['closeprice', 'kospi', '005930', undefined, (d) => expect(typeof d.trdPrc).toBe('number')],
    ['investors', 'kospi', '005930', undefined, (d) => expect((d.invstLists as unknown[]).length).toBeGreaterThan(0)],
    ['investors', 'kosdaq', undefined, undefined, (d) => expect((d.invstLists as unknown[]).length).toBeGreaterThan(0)],
    ['shortsell', 'kospi', '005930', { from: '20261101', to: '20261120' }, (d) => expect(Array.isArray(d.hisLists)).toBe(true)],
    ['foreignhistory', 'kosdaq', '247540', { from: '20261101', to: '20261120', count: 10 }, (d) => expect(Array.isArray(d.hisLists)).toBe(true)],
    ['traderanking', 'kospi', '005930', undefined, (d) => expect(typeof d.bidTrdMbr1).toBe('string')],
    ['closenav', 'kospi', '069500', undefined, (d) => expect(typeof d.nav).toBe('number')],
    ['index', 'kospi', 'K1', undefined, (d) => expect(d).toMatchObject({ isuSrtCd: 'K1' })],
    ['index', 'kosdaq', undefined, undefined, (d) => expect(typeof d.trdPrc).toBe('number')],
    ['price', 'kosdaq', '247540', undefined, (d) => expect(typeof d.trdTm).toBe('string')],
    ['orderbook', 'kospi', '005930', undefined, (d) => expect(typeof d.askStep10BstordPrc).toBe('number')],
  ];

  it.each(cases)('get %s %s %s', async (resource, market, code, params, check) => {
    const r = await c.request({ op: 'get', resource, market, ...(code ? { code } : {}), ...(params ? { params } : {}) });
    expect(r.type, JSON.stringify(r)).toBe('result');
    const res = ResultMsg.parse(r);
    check(res.data);
  });

  it('answers a repeated lookup from the cache (one upstream call)', async () => {
    const before = tb.bridge.sim!.stats.snapshot().byEndpoint['v2.stocks.master'] ?? 0;
    await Promise.all([1, 2, 3, 4].map(() => c.request({ op: 'get', resource: 'master', market: 'kospi', code: '000660' })));
    await c.request({ op: 'get', resource: 'master', market: 'kospi', code: '000660' });
    expect((tb.bridge.sim!.stats.snapshot().byEndpoint['v2.stocks.master'] ?? 0) - before).toBe(1);
  });

  it('maps upstream refusals to coded errors', async () => {
    expect(await c.request({ op: 'get', resource: 'master', market: 'kospi', code: '999999' })).toMatchObject({ type: 'error', code: 'invalid_code' });
    expect(await c.request({ op: 'get', resource: 'history', market: 'kospi', code: '005930', params: { from: 'x' } })).toMatchObject({
      type: 'error',
      code: 'invalid_params',
    });
  });

  it('passes /api/v2 and /api/v3 through with the server key and the same cache', async () => {
    const r2 = await request(`${tb.url}/api/v2/market/stocks/kospi/005930/master`);
    expect(r2.statusCode).toBe(200);
    const b2 = (await r2.body.json()) as { data: Record<string, unknown>; cached: boolean };
    expect(b2.data.isuSrtCd).toBe('005930');
    const r3 = await request(`${tb.url}/api/v3/market/closed/kosdaq/247540/history?trnsmCycleTpCd=D&inqStrtDd=20261101&inqEndDd=20261120&reqCnt=3`);
    expect(r3.statusCode).toBe(200);
    const b3 = (await r3.body.json()) as { data: { hisLists: unknown[] } };
    expect(b3.data.hisLists).toHaveLength(3);
    const bad = await request(`${tb.url}/api/v3/market/closed/kosdaq/999999/master`);
    expect(bad.statusCode).toBe(400);
    const text = await bad.body.text();
    expect(text).toContain('invalid_code');
    expect(text).not.toContain(SIM_KEY);
    const nf = await request(`${tb.url}/api/v9/nothing`);
    expect(nf.statusCode).toBe(404);
    await nf.body.text();
  });
});

describe('bridge on-demand share of the budget', () => {
  it('refuses lookups past BUDGET_RESERVE of the daily limit, without calling the upstream', async () => {
    // A daily limit of 100 with a 5% share: 5 on-demand calls (the symbol lists take 2 of them).
    const tb = await startBridge({ BUDGET_RESERVE: 0.05, LOOKUP_CLIENT_SHARE: 1 }, { simulator: { dailyLimit: 100 } });
    try {
      const c = await connect(tb);
      const codes = ['005930', '000660', '035420', '005380', '000270', '068270'];
      const replies = [];
      for (const code of codes) replies.push(await c.request({ op: 'get', resource: 'master', market: 'kospi', code }));
      const refused = replies.filter((r) => r.type === 'error');
      expect(refused.length).toBeGreaterThan(0);
      expect(refused[0]).toMatchObject({ code: 'upstream_rate_limited', retryable: true });
      // The client learns it is the lookups' share that is spent, not the upstream's budget.
      expect(refused[0]!.message).toContain('kept for lookups');
      const calls = tb.bridge.sim!.stats.snapshot().byEndpoint['v2.stocks.master'] ?? 0;
      expect(calls).toBe(replies.length - refused.length);
      const status = (await (await request(`${tb.url}/status`)).body.json()) as { budget: { onDemand: { used: number; cap: number } } };
      expect(status.budget.onDemand).toEqual({ used: 5, cap: 5 });
      c.close();
    } finally {
      await tb.bridge.stop();
    }
  });
});
