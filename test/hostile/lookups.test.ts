import { afterEach, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { TestClient, startBridge, type TestBridge } from '../bridge/helpers.js';

/**
 * Lookups as an outsider spends them: one address opening many connections,
 * switching between `get` and `/api`, asking for codes that are not listed,
 * or making the upstream fail. Each limit is per client, and the day's share
 * counts only the upstream calls actually made.
 */

let tb: TestBridge | undefined;
const clients: TestClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await tb?.bridge.stop();
  tb = undefined;
});

async function open(n: number, headers: Record<string, string> = {}): Promise<TestClient[]> {
  const out = await Promise.all(Array.from({ length: n }, () => new TestClient(tb!.wsUrl, headers).ready()));
  clients.push(...out);
  return out;
}

const upstreamCalls = (id: string): number => tb!.bridge.sim!.stats.snapshot().byEndpoint[id] ?? 0;
const historyGet = (i: number) => ({
  op: 'get',
  resource: 'history',
  market: 'kospi',
  code: '005930',
  params: { period: 'D', from: '20260101', to: '20261120', count: 1 + (i % 100) },
});

describe('lookup limits per client', () => {
  it('holds one address to its rate across all its connections and /api', async () => {
    tb = await startBridge({ GETS_PER_MINUTE: 20 });
    const conns = await open(8);
    const replies = await Promise.all(
      conns.flatMap((c) => [0, 1, 2, 3, 4].map(() => c.request({ op: 'get', resource: 'master', market: 'kospi', code: '005930' }))),
    );
    const results = replies.filter((r) => r.type === 'result').length;
    expect(results).toBeLessThanOrEqual(21);
    expect(results).toBeGreaterThanOrEqual(19);
    expect(replies.filter((r) => r.type === 'error' && (r as { code?: string }).code === 'rate_limited').length).toBe(40 - results);
    // The same client's /api requests draw on the same bucket.
    const api = await request(`${tb.url}/api/v2/market/stocks/kospi/005930/master`);
    expect(api.statusCode).toBe(429);
    expect(((await api.body.json()) as { error: { code: string } }).error.code).toBe('rate_limited');
  });

  it('caps one client at its part of the day’s lookup share; another client still gets answers', async () => {
    // The simulator's limit 10,000 × BUDGET_RESERVE 0.01 = a share of 100 calls; one client may spend 0.1 of it.
    tb = await startBridge({ SIM_DAILY_LIMIT: 10_000, BUDGET_RESERVE: 0.01, LOOKUP_CLIENT_SHARE: 0.1, AUTH_TOKENS: ['tok-a', 'tok-b'] });
    await expect.poll(() => tb!.bridge.budget.limit, { timeout: 10_000 }).toBe(10_000);
    const [a] = await open(1, { Authorization: 'Bearer tok-a' });
    const codes: string[] = [];
    for (let i = 0; i < 14; i++) {
      const r = await a!.request(historyGet(i));
      codes.push(r.type === 'result' ? 'ok' : ((r as { code?: string }).code ?? r.type));
    }
    expect(codes.slice(0, 10)).toEqual(Array(10).fill('ok'));
    expect(codes.slice(10)).toEqual(Array(4).fill('rate_limited'));
    // A cached answer costs nothing and is still served.
    expect((await a!.request(historyGet(0))).type).toBe('result');
    const [b] = await open(1, { Authorization: 'Bearer tok-b' });
    expect((await b!.request(historyGet(50))).type).toBe('result');
    // The refused requests were not counted against the share.
    expect(tb.bridge.allowance.used).toBe(11);
  });
});

describe('the reproductions, as an outsider tried them', () => {
  it('reconnecting does not refill the bucket: 60 connections in turn, 20 gets each, get at most the minute’s allowance', async () => {
    tb = await startBridge({ GETS_PER_MINUTE: 30 });
    let results = 0;
    let refused = 0;
    for (let i = 0; i < 60; i++) {
      const [c] = await open(1);
      const replies = await Promise.all(Array.from({ length: 20 }, () => c!.request({ op: 'get', resource: 'master', market: 'kospi', code: '005930' })));
      results += replies.filter((r) => r.type === 'result').length;
      refused += replies.filter((r) => r.type === 'error' && (r as { code?: string }).code === 'rate_limited').length;
      c!.close();
    }
    // A bucket of 30 a minute, refilled by at most a few in the seconds this takes.
    expect(results).toBeGreaterThanOrEqual(30);
    expect(results).toBeLessThan(45);
    expect(results + refused).toBe(1200);
  }, 60_000);

  it('60 tokenless connections of one address cannot spend the day’s lookup share; another client still gets answers', async () => {
    // A share of 100 upstream calls (10,000 × 0.01); one address may spend 0.2 of it.
    tb = await startBridge({ SIM_DAILY_LIMIT: 10_000, BUDGET_RESERVE: 0.01, GETS_PER_MINUTE: 100_000 });
    await expect.poll(() => tb!.bridge.budget.limit, { timeout: 10_000 }).toBe(10_000);
    const conns = await open(60);
    // Every request a different range: each would be an upstream call.
    const replies = await Promise.all(
      conns.flatMap((c, i) =>
        [0, 1, 2, 3, 4].map((j) =>
          c.request({
            ...historyGet(0),
            params: { period: 'D', from: '20250101', to: `202611${String(1 + ((i * 5 + j) % 28)).padStart(2, '0')}`, count: 1 + ((i * 5 + j) % 100) },
          }),
        ),
      ),
    );
    const results = replies.filter((r) => r.type === 'result').length;
    expect(results).toBeGreaterThan(0);
    expect(tb.bridge.allowance.used).toBeLessThanOrEqual(20);
    // Another address.
    const other = await new TestClient(tb.wsUrl, {}, '127.0.0.2').ready();
    clients.push(other);
    expect((await other.request(historyGet(77))).type).toBe('result');
  }, 60_000);

  it('at most 32 gets wait for their answer on one connection; the rest are refused at once', async () => {
    tb = await startBridge({ GETS_PER_MINUTE: 1000 });
    tb.bridge.sim!.faults.set({ latency: { ms: 1500, match: '/history' } });
    const [c] = await open(1);
    const replies = await Promise.all(Array.from({ length: 40 }, (_, i) => c!.request(historyGet(i))));
    const refused = replies.filter((r) => r.type === 'error' && /at most 32 get requests unanswered/.test((r as { message?: string }).message ?? ''));
    expect(refused).toHaveLength(8);
    // The 32 admitted were each answered: a result, or the upstream's timeout behind the slow calls.
    expect(replies.filter((r) => r.type === 'result').length).toBeGreaterThan(0);
    expect(replies.filter((r) => r.type === 'result' || /did not answer in time/.test((r as { message?: string }).message ?? ''))).toHaveLength(32);
  }, 30_000);
});

describe('lookup accounting', () => {
  it('refuses codes that are not listed before any upstream call, on /api as on get', async () => {
    tb = await startBridge();
    // Both markets' lists: the second one's call would otherwise land among the counted ones.
    await expect.poll(() => tb!.bridge.symbols.loaded('kospi') && tb!.bridge.symbols.loaded('kosdaq'), { timeout: 10_000 }).toBe(true);
    const before = tb.bridge.sim!.stats.snapshot().total;
    for (const path of [
      '/api/v2/market/stocks/kospi/999999/master',
      '/api/v2/market/stocks/kospi/999998/history?trnsmCycleTpCd=D&inqStrtDd=20261101&inqEndDd=20261120&reqCnt=5',
      '/api/v2/market/multiquote/stocks/kospi/price?isuCd=005930,999997',
      '/api/v2/market/index/kospi/Q001/index',
    ]) {
      const r = await request(`${tb.url}${path}`);
      expect(r.statusCode, path).toBe(400);
      expect(((await r.body.json()) as { error: { code: string } }).error.code).toBe('invalid_code');
    }
    expect(tb.bridge.sim!.stats.snapshot().total).toBe(before);
    expect(tb.bridge.allowance.used).toBe(0);
  });

  it('caches an answer that the request is not valid (negative caching)', async () => {
    tb = await startBridge();
    const [c] = await open(1);
    const ask = { op: 'get', resource: 'master', market: 'kospi', code: '005930' };
    tb.bridge.sim!.faults.set({});
    // An unknown derivative code is not checked locally; the upstream's refusal is cached.
    const path = '/api/v2/market/futures/kospi200/KR4101ZZ0000/master';
    const r1 = await request(`${tb.url}${path}`);
    const calls = tb.bridge.sim!.stats.snapshot().total;
    const r2 = await request(`${tb.url}${path}`);
    expect(r1.statusCode).toBe(r2.statusCode);
    await r1.body.dump();
    await r2.body.dump();
    expect(r1.statusCode).toBe(400);
    expect(tb.bridge.sim!.stats.snapshot().total).toBe(calls);
    expect((await c!.request(ask)).type).toBe('result');
  });

  it('counts every attempt of a retried call, and none of a call refused before any request', async () => {
    tb = await startBridge({ UPSTREAM_RETRIES: 2 });
    await expect.poll(() => tb!.bridge.budget.limit, { timeout: 10_000 }).not.toBeNull();
    const [c] = await open(1);
    tb.bridge.sim!.faults.set({ error: { rate: 1, match: '/master', status: [503] } });
    const before = upstreamCalls('v2.stocks.master');
    const used = tb.bridge.allowance.used;
    expect(await c!.request({ op: 'get', resource: 'master', market: 'kospi', code: '000660' })).toMatchObject({ type: 'error', code: 'upstream_unavailable' });
    expect(upstreamCalls('v2.stocks.master') - before).toBe(3);
    expect(tb.bridge.allowance.used - used).toBe(3);
  });
});
