import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { NON_NUMERIC } from '../../src/sim/index.js';
import { ERROR_BODIES } from '../../src/upstream/wire.js';
import { startSim, type Running } from './helpers.js';

/**
 * Faults switched at run time through `/_sim/faults`, observed from a
 * client; statistics; pausing and stepping the market.
 */

let s: Running;
const KOSPI_LIST = '/v3/market/realtime/kospi/multiquote/stocks/lists';
const KOSDAQ_LIST = '/v3/market/realtime/kosdaq/multiquote/stocks/lists';
const PRICE = '/v3/market/realtime/kospi/stocks/005930/price';

async function control(method: 'GET' | 'PUT' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<{ status: number; json: unknown }> {
  const res = await request(`${s.url}/_sim/${path}`, { method, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const text = await res.body.text();
  return { status: res.statusCode, json: JSON.parse(text) as unknown };
}

beforeAll(async () => {
  s = await startSim({ clock: 'open' });
});
afterAll(() => s.stop());
beforeEach(async () => {
  await control('DELETE', 'faults');
});

describe('faults', () => {
  it('server errors, limited to matching paths', async () => {
    await control('PUT', 'faults', { error: { status: [503], match: '/kosdaq/' } });
    expect((await s.get(KOSDAQ_LIST)).status).toBe(503);
    expect((await s.get(KOSPI_LIST)).status).toBe(200);
    await control('PUT', 'faults', { error: { status: [502], match: '/\\/price$/' } });
    expect((await s.get(PRICE)).status).toBe(502);
    expect((await s.get(KOSDAQ_LIST)).status).toBe(200);
  });

  it('hangs a request until the client gives up', async () => {
    await control('PUT', 'faults', { timeout: { match: 'ohlclists' } });
    const t0 = Date.now();
    await expect(
      request(`${s.url}/v3/market/realtime/kospi/multiquote/stocks/ohlclists`, { headers: { apikey: 'sim-key' }, headersTimeout: 300 }),
    ).rejects.toMatchObject({
      code: 'UND_ERR_HEADERS_TIMEOUT',
    });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
    expect((await s.get(KOSPI_LIST)).status).toBe(200);
  });

  it('truncates bodies so they no longer parse', async () => {
    await control('PUT', 'faults', { malformed: {} });
    const r = await s.get(PRICE);
    expect(r.status).toBe(200);
    expect(() => JSON.parse(r.text)).toThrow();
  });

  it('drifts the schema: renames, drops and non-numeric strings', async () => {
    await control('PUT', 'faults', { drift: { rename: { trdPrc: 'tradePrice' }, drop: ['mktcap'], nonNumeric: ['accTrdvol'] } });
    const body = (await s.get(KOSPI_LIST)).json() as { isuLists: Record<string, unknown>[] };
    const row = body.isuLists[0]!;
    expect(row).not.toHaveProperty('trdPrc');
    expect(typeof row.tradePrice).toBe('number');
    expect(row).not.toHaveProperty('mktcap');
    expect(row.accTrdvol).toBe(NON_NUMERIC);
  });

  it('resets connections', async () => {
    await control('PUT', 'faults', { reset: { match: '/price' } });
    await expect(request(`${s.url}${PRICE}`, { headers: { apikey: 'sim-key' } })).rejects.toThrow();
    expect((await s.get(KOSPI_LIST)).status).toBe(200);
  });

  it('forces 429 and 401', async () => {
    await control('PUT', 'faults', { rateLimit: { match: 'lists' }, unauthorized: { match: '/price' } });
    const limited = await s.get(KOSPI_LIST);
    expect([limited.status, limited.json()]).toEqual([429, ERROR_BODIES.rateLimited]);
    const denied = await s.get(PRICE);
    expect([denied.status, denied.json()]).toEqual([401, ERROR_BODIES.badKey]);
  });

  it('adds latency and applies a rate', async () => {
    await control('PUT', 'faults', { latency: { ms: 150, jitter: 20 }, error: { rate: 0 } });
    const t0 = Date.now();
    expect((await s.get(PRICE)).status).toBe(200);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(145);
  });

  it('merges, lists, clears and validates fault settings', async () => {
    await control('PUT', 'faults', { error: { status: [500] } });
    await control('PUT', 'faults', { malformed: { rate: 0.5 } });
    expect(Object.keys((await control('GET', 'faults')).json as object).sort()).toEqual(['error', 'malformed']);
    await control('PUT', 'faults', { error: null });
    expect(Object.keys((await control('GET', 'faults')).json as object)).toEqual(['malformed']);
    expect((await control('PUT', 'faults', { error: { status: [404] } })).status).toBe(400);
    expect((await control('DELETE', 'faults')).json).toEqual({});
  });
});

describe('stats', () => {
  it('counts calls per endpoint, per second and the most in flight per path, and keeps their arrival times', async () => {
    await control('POST', 'stats/reset');
    const t0 = Date.now();
    await Promise.all([s.get(KOSPI_LIST), s.get(KOSPI_LIST), s.get(PRICE)]);
    await control('PUT', 'faults', { latency: { ms: 150, match: 'quotelists' } });
    const q = '/v3/market/realtime/kospi/multiquote/stocks/quotelists';
    await Promise.all([s.get(q), s.get(q), s.get(q), s.get(q)]);
    await s.get('/nothing');
    const st = (await control('GET', 'stats')).json as {
      total: number;
      notFound: number;
      byEndpoint: Record<string, number>;
      perSecond: Record<string, [number, number][]>;
      maxInFlight: Record<string, number>;
      byStatus: Record<string, number>;
    };
    expect(st.total).toBe(7);
    expect(st.notFound).toBe(1);
    expect(st.byEndpoint).toEqual({ 'v3.realtime.multiquote.lists': 2, 'v3.realtime.stocks.price': 1, 'v3.realtime.multiquote.quotelists': 4 });
    expect(st.perSecond['v3.realtime.multiquote.quotelists']!.reduce((a, [, n]) => a + n, 0)).toBe(4);
    expect(st.maxInFlight[q]).toBe(4);
    expect(st.byStatus['200']).toBe(7);
    expect(s.sim.stats.snapshot().total).toBe(7);
    const times = s.sim.stats.callTimes('v3.realtime.multiquote.quotelists');
    expect(times).toHaveLength(4);
    for (const t of times) expect(t).toBeGreaterThanOrEqual(t0);
    expect(s.sim.stats.callTimes('v3.realtime.multiquote.lists')).toHaveLength(2);
    expect(s.sim.stats.callTimes('v2.index.index')).toEqual([]);
  });
});

describe('pause and tick', () => {
  it('freezes the market for a stable truth and steps it on demand', async () => {
    await control('POST', 'pause');
    const a = await s.get(KOSPI_LIST);
    const b = await s.get(KOSPI_LIST);
    expect(b.text).toBe(a.text);
    const row = (a.json() as { isuLists: { isuSrtCd: string; trdPrc: number; accTrdvol: number }[] }).isuLists.find((r) => r.isuSrtCd === '005930')!;
    const truth = (await control('GET', 'truth/005930')).json as { last: number; vol: number };
    expect([row.trdPrc, row.accTrdvol]).toEqual([truth.last, truth.vol]);
    await control('POST', 'tick');
    const c = await s.get(KOSPI_LIST);
    expect(c.text).not.toBe(a.text);
    const health = (await control('POST', 'resume')).json as { paused: boolean };
    expect(health.paused).toBe(false);
  });
});
