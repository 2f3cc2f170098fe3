import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays } from '../../src/sim/calendar.js';
import { CATALOGUE, type Endpoint } from '../../src/upstream/catalogue.js';
import { normaliseBody } from '../../src/upstream/normalise.js';
import { renderPath } from '../../src/upstream/paths.js';
import { startSim, type Running } from './helpers.js';

/**
 * Every catalogue entry, asked with a valid sample request: 200, a body the
 * project's own normaliser accepts without dropping a row.
 */

let s: Running;

beforeAll(async () => {
  s = await startSim({ clock: 'open' });
});

afterAll(() => s.stop());

const ETF_OPS = /\/(closenav|nav|navhistory|pdf)$/;

function sampleParams(e: Endpoint): Record<string, unknown> {
  const m = s.sim.market;
  const market = e.markets.includes('kospi') ? 'kospi' : e.markets.includes('kospi200') ? 'kospi200' : e.markets[0];
  const p: Record<string, unknown> = {};
  if (e.path.includes('{marketcode}')) p.marketcode = market;
  if (e.path.includes('{nationcode}')) p.nationcode = 'KR';
  if (e.code === 'stock') p.issuecode = ETF_OPS.test(e.path) ? '069500' : '005930';
  if (e.code === 'index') p.issuecode = 'K1';
  if (e.code === 'derivative') p.issuecode = e.path.includes('/options/') ? m.contracts.find((c) => c.right === 'C')!.code : 'K2FA001';
  const end = m.lastCompleteDay();
  const q: Record<string, unknown> = {
    isuCd: ['005930', '000660', '069500'],
    trnsmCycleTpCd: 'D',
    inqStrtDd: addDays(end, -40),
    inqEndDd: end,
    reqCnt: 10,
    inddCycleTpCd: '60',
    strtTm: '0900',
    endTm: '1530',
    fields: ['prevddClsprc', 'dd20AvgPrc', 'wk52HgstPrc', 'CrdtGrd'],
  };
  for (const name of e.query) p[name] = q[name];
  // Intraday bars are those of the day asked for: the last complete day always has some.
  if (e.query.includes('inddCycleTpCd')) p.inqStrtDd = end;
  return e.params.parse(p);
}

describe('catalogue', () => {
  it.each(CATALOGUE.map((e) => [e.id, e] as const))('%s answers 200 with a normalisable body', async (_id, e) => {
    const res = await s.get(renderPath(e, sampleParams(e)));
    expect(res.status, res.text).toBe(200);
    const n = normaliseBody(e.response, res.json());
    expect(n.ok).toBe(true);
    if (!n.ok) return;
    expect(n.value.dropped, JSON.stringify(n.value.issues)).toBe(0);
    if (e.response.list && typeof e.response.list.row === 'object') expect(n.value.rows.length).toBeGreaterThan(0);
  });

  it('answers 404, 400 invalid code and 400 bad parameter like the provider', async () => {
    expect((await s.get('/v3/market/closed/kospi/005930/nothing')).json()).toEqual({ message: 'no Route matched with those values' });
    const invalid = { error: '소속시장 또는 종목코드가 유효하지 않습니다.' };
    const bad = { error: '입력 에러입니다.입력하신 데이터를 다시 확인하시기 바랍니다' };
    for (const path of [
      '/v3/market/closed/kospi/247540/master',
      '/v3/market/closed/nyse/005930/master',
      '/v3/market/closed/kospi/99/master',
      '/v3/market/realtime/kospi/multiquote/stocks/price?isuCd=005930,999999',
      '/v3/market/closed/etf/kospi/005930/closenav',
      '/v3/market/closed/index/kospi/Q1/closeindex',
    ]) {
      const r = await s.get(path);
      expect([r.status, r.json()], path).toEqual([400, invalid]);
    }
    const many = Array.from({ length: 21 }, (_, i) => String(i * 10).padStart(6, '0')).join(',');
    for (const path of [
      `/v3/market/realtime/kospi/multiquote/stocks/price?isuCd=${many}`,
      '/v3/market/closed/kospi/005930/history?trnsmCycleTpCd=X&inqStrtDd=20240101&inqEndDd=20240201',
      '/v3/market/closed/kospi/005930/history?trnsmCycleTpCd=D&inqStrtDd=20240101',
      '/v3/market/closed/kospi/005930/history?trnsmCycleTpCd=D&inqStrtDd=20240101&inqEndDd=20240201&reqCnt=101',
    ]) {
      const r = await s.get(path);
      expect([r.status, r.json()], path).toEqual([400, bad]);
    }
  });

  it('serves thousands of rows per market list and only the asked selectivemaster fields', async () => {
    const kospi = (await s.get('/v2/market/multiquote/stocks/kospi/lists')).json() as { isuLists: unknown[]; trdTm: string };
    const kosdaq = (await s.get('/v3/market/realtime/kosdaq/multiquote/stocks/lists')).json() as { isuLists: unknown[] };
    expect(kospi.isuLists.length).toBeGreaterThan(2000);
    expect(kosdaq.isuLists.length).toBeGreaterThan(1500);
    expect(kospi.trdTm).toMatch(/^\d{6}$/);
    const sel = (await s.get('/v3/market/closed/kospi/005930/selectivemaster?dd20AvgPrc&CrdtGrd')).json() as { result: Record<string, unknown> };
    expect(Object.keys(sel.result).sort()).toEqual(['CrdtGrd', 'dd20AvgPrc', 'isuSrtCd']);
  });
});
