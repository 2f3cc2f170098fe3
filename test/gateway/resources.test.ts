import { describe, expect, it } from 'vitest';
import { RESOURCES } from '../../src/protocol/constants.js';
import { RESOURCE_ENDPOINTS, resolveGet, type Families, type GetRequest } from '../../src/lookups/resources.js';
import { findEndpoint } from '../../src/upstream/catalogue.js';
import { KrxCalendar } from '../../src/market/calendar.js';

/** Tuesday 2026-11-24, 12:00 KST: the market is open. */
const NOON = Date.parse('2026-11-24T03:00:00Z');
const DATES = { calendar: new KrxCalendar(), now: () => NOON };

const V2: Families = { kospi: 'v2', kosdaq: 'v2' };
const V3: Families = { kospi: 'v3', kosdaq: 'v3' };

function ok(req: GetRequest, families: Families) {
  const r = resolveGet(req, families, DATES);
  if (!r.ok) throw new Error(`${req.resource}: ${r.error.code} ${r.error.message}`);
  return r.value;
}

/** [request, v2 id, v3 id, expected upstream params (besides marketcode/issuecode)] */
const CASES: [GetRequest, string, string, Record<string, unknown>][] = [
  [{ resource: 'master', market: 'kospi', code: '005930' }, 'v2.stocks.master', 'v3.closed.master', {}],
  [
    { resource: 'selectivemaster', market: 'kospi', code: '005930', params: { fields: ['isuKorAbbrv', 'listShrs'] } },
    'v2.stocks.selectivemaster',
    'v3.closed.selectivemaster',
    { fields: ['isuKorAbbrv', 'listShrs'] },
  ],
  [
    { resource: 'history', market: 'kospi', code: '005930', params: { period: 'W', from: '20260101', to: 20261120, count: 30 } },
    'v2.stocks.history',
    'v3.closed.history',
    { trnsmCycleTpCd: 'W', inqStrtDd: '20260101', inqEndDd: '20261120', reqCnt: 30 },
  ],
  [
    { resource: 'history', market: 'kospi', code: '005930', params: { from: '20260101', to: '20261120' } },
    'v2.stocks.history',
    'v3.closed.history',
    { trnsmCycleTpCd: 'D', inqStrtDd: '20260101', inqEndDd: '20261120' },
  ],
  [
    { resource: 'intraday', market: 'kosdaq', code: '247540', params: { interval: 600, date: '20261120', from: 930, to: '1000' } },
    'v2.stocks.intraday',
    'v3.realtime.stocks.intraday',
    { inddCycleTpCd: '600', inqStrtDd: '20261120', strtTm: '0930', endTm: '1000' },
  ],
  [
    { resource: 'intraday', market: 'kosdaq', code: '247540' },
    'v2.stocks.intraday',
    'v3.realtime.stocks.intraday',
    { inddCycleTpCd: '60', inqStrtDd: '20261124', strtTm: '0900', endTm: '1530' },
  ],
  [{ resource: 'lists', market: 'konex' }, 'v2.stocks.lists', 'v3.closed.lists', {}],
  [{ resource: 'closeprice', market: 'kospi', code: '005930' }, 'v2.stocks.closeprice', 'v3.closed.closeprice', {}],
  [{ resource: 'investors', market: 'kospi', code: '005930' }, 'v2.stocks.investors', 'v3.investors.issue', {}],
  [{ resource: 'investors', market: 'kosdaq' }, 'v2.stocks.marketinvestors', 'v3.investors.market', {}],
  [
    { resource: 'shortsell', market: 'kospi', code: '005930', params: { from: '20261101', to: '20261120' } },
    'v2.stocks.shortsell',
    'v3.closed.shortsell',
    { inqStrtDd: '20261101', inqEndDd: '20261120' },
  ],
  [
    { resource: 'foreignhistory', market: 'kospi', code: '005930', params: { from: '20261101', to: '20261120', count: 5 } },
    'v2.stocks.foreignhistory',
    'v3.closed.foreignhistory',
    { inqStrtDd: '20261101', inqEndDd: '20261120', reqCnt: 5 },
  ],
  [{ resource: 'traderanking', market: 'kospi', code: '005930' }, 'v2.stocks.traderanking', 'v3.realtime.stocks.traderanking', {}],
  [{ resource: 'closenav', market: 'kospi', code: '069500' }, 'v2.stocks.closenav', 'v3.closed.etf.closenav', {}],
  [{ resource: 'index', market: 'kospi', code: 'K1' }, 'v2.index.index', 'v3.realtime.index.index', {}],
  [{ resource: 'index', market: 'kosdaq' }, 'v2.stocks.index', 'v3.closed.index', {}],
  [{ resource: 'price', market: 'kospi', code: '005930' }, 'v2.stocks.price', 'v3.realtime.stocks.price', {}],
  [{ resource: 'orderbook', market: 'kosdaq', code: '247540' }, 'v2.stocks.orderbook', 'v3.realtime.stocks.orderbook', {}],
];

describe('resolveGet', () => {
  it('covers every resource', () => {
    expect(new Set(CASES.map(([r]) => r.resource))).toEqual(new Set(RESOURCES));
  });

  it('every mapped endpoint id exists in the catalogue', () => {
    for (const r of Object.values(RESOURCE_ENDPOINTS)) {
      for (const ids of [r.withCode, r.bare]) if (ids) for (const id of Object.values(ids)) expect(findEndpoint(id), id).toBeDefined();
    }
  });

  it.each(CASES)('%o maps to %s / %s', (req, v2, v3, params) => {
    for (const [families, id] of [
      [V2, v2],
      [V3, v3],
    ] as const) {
      const r = ok(req, families);
      expect(r.endpointId).toBe(id);
      const base = { marketcode: req.market, ...(req.code ? { issuecode: req.code } : {}) };
      expect(r.params).toEqual({ ...base, ...params });
    }
  });

  it('follows the family of each market; KONEX follows KOSPI unless set', () => {
    const mixed: Families = { kospi: 'v2', kosdaq: 'v3' };
    expect(ok({ resource: 'master', market: 'kospi', code: '005930' }, mixed).endpointId).toBe('v2.stocks.master');
    expect(ok({ resource: 'master', market: 'kosdaq', code: '247540' }, mixed).endpointId).toBe('v3.closed.master');
    expect(ok({ resource: 'lists', market: 'konex' }, mixed).endpointId).toBe('v2.stocks.lists');
    expect(ok({ resource: 'lists', market: 'konex' }, { ...mixed, konex: 'v3' }).endpointId).toBe('v3.closed.lists');
  });

  const ERRORS: [GetRequest, string][] = [
    [{ resource: 'news', market: 'kospi' }, 'invalid_resource'],
    [{ resource: 'master', market: 'nyse', code: '005930' }, 'invalid_market'],
    [{ resource: 'master', market: 'konex', code: '005930' }, 'invalid_market'],
    [{ resource: 'master', market: 'kospi' }, 'invalid_params'],
    [{ resource: 'lists', market: 'kospi', code: '005930' }, 'invalid_params'],
    [{ resource: 'master', market: 'kospi', code: '5930' }, 'invalid_code'],
    [{ resource: 'index', market: 'kospi', code: 'Q1' }, 'invalid_code'],
    [{ resource: 'index', market: 'kosdaq', code: 'K1' }, 'invalid_code'],
    [{ resource: 'master', market: 'kospi', code: '005930', params: { x: 1 } }, 'invalid_params'],
    [{ resource: 'history', market: 'kospi', code: '005930', params: { from: '2026-01-01', to: '20261120' } }, 'invalid_params'],
    [{ resource: 'history', market: 'kospi', code: '005930', params: { from: '20260101', to: '20261120', count: 101 } }, 'invalid_params'],
    [{ resource: 'intraday', market: 'kospi', code: '005930', params: { interval: 30 } }, 'invalid_params'],
    [{ resource: 'selectivemaster', market: 'kospi', code: '005930', params: { fields: ['noSuchField'] } }, 'invalid_params'],
  ];
  it.each(ERRORS)('%o is refused with %s', (req, code) => {
    const r = resolveGet(req, V2, DATES);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.code).toBe(code);
  });

  it('shortsell without a start date starts 20 business days back, which the v3 endpoint requires; count places it and is not sent', () => {
    const req: GetRequest = { resource: 'shortsell', market: 'kospi', code: '005930', params: { to: '20261120' } };
    expect(ok(req, V2).params).toEqual({ marketcode: 'kospi', issuecode: '005930', inqStrtDd: '20261026', inqEndDd: '20261120' });
    expect(ok(req, V3).params).toMatchObject({ inqStrtDd: '20261026', inqEndDd: '20261120' });
    const three: GetRequest = { ...req, params: { to: '20261120', count: 3 } };
    expect(ok(three, V3).params).toEqual({ marketcode: 'kospi', issuecode: '005930', inqStrtDd: '20261118', inqEndDd: '20261120' });
  });
});
