import { GET_MARKETS, RESOURCES, type Market, type Resource } from '../protocol/constants.js';
import { RESOURCE_CODE, RESOURCE_PARAMS } from '../protocol/resources.js';
import { INDEX_CODE, STOCK_CODE } from '../protocol/topics.js';
import { endpoint } from '../upstream/catalogue.js';
import { KrxCalendar } from '../market/calendar.js';
import { withDefaultDates, type LookupDates } from './dates.js';
import { issuesText } from '../protocol/issues.js';
import { wireError, type WireError } from '../protocol/errors.js';

/** Defaults from the system clock and the calendar without operator closures (tests, tools). */
const SYSTEM_DATES: LookupDates = { calendar: new KrxCalendar(), now: Date.now };

/**
 * The mapping of a `get` request (resource, market, code, friendly params)
 * to one upstream catalogue endpoint and its parameters, by the API family
 * configured per market. Pure. See docs/PROTOCOL.md §get.
 */

/** An upstream API family. */
export type Family = 'v2' | 'v3';

/** API family per market; KONEX (symbol list only) follows KOSPI unless set. */
export interface Families {
  readonly kospi: Family;
  readonly kosdaq: Family;
  readonly konex?: Family;
}

/** What `get` asks for, as the client sent it (already schema-checked). */
export interface GetRequest {
  readonly resource: string;
  readonly market: string;
  readonly code?: string | undefined;
  readonly params?: Readonly<Record<string, unknown>> | undefined;
}

/** A resolved `get`: the endpoint to call and its validated upstream parameters. */
export interface ResolvedGet {
  readonly resource: Resource;
  readonly market: string;
  readonly code?: string;
  /** Catalogue id, e.g. `v2.stocks.history`. */
  readonly endpointId: string;
  /** Parameters by upstream name, as the endpoint's schema outputs them. */
  readonly params: Record<string, unknown>;
}

/** Either a resolved `get` or the wire error that refuses it. */
export type GetResolution = { ok: true; value: ResolvedGet } | { ok: false; error: WireError };

type ByFamily = Readonly<Record<Family, string>>;

/** Endpoint ids per resource and family; `bare` is used when the request has no code. */
export const RESOURCE_ENDPOINTS: Readonly<Record<Resource, { withCode: ByFamily; bare?: ByFamily }>> = {
  master: { withCode: { v2: 'v2.stocks.master', v3: 'v3.closed.master' } },
  selectivemaster: { withCode: { v2: 'v2.stocks.selectivemaster', v3: 'v3.closed.selectivemaster' } },
  history: { withCode: { v2: 'v2.stocks.history', v3: 'v3.closed.history' } },
  intraday: { withCode: { v2: 'v2.stocks.intraday', v3: 'v3.realtime.stocks.intraday' } },
  lists: { withCode: { v2: 'v2.stocks.lists', v3: 'v3.closed.lists' }, bare: { v2: 'v2.stocks.lists', v3: 'v3.closed.lists' } },
  closeprice: { withCode: { v2: 'v2.stocks.closeprice', v3: 'v3.closed.closeprice' } },
  investors: {
    withCode: { v2: 'v2.stocks.investors', v3: 'v3.investors.issue' },
    bare: { v2: 'v2.stocks.marketinvestors', v3: 'v3.investors.market' },
  },
  shortsell: { withCode: { v2: 'v2.stocks.shortsell', v3: 'v3.closed.shortsell' } },
  foreignhistory: { withCode: { v2: 'v2.stocks.foreignhistory', v3: 'v3.closed.foreignhistory' } },
  traderanking: { withCode: { v2: 'v2.stocks.traderanking', v3: 'v3.realtime.stocks.traderanking' } },
  closenav: { withCode: { v2: 'v2.stocks.closenav', v3: 'v3.closed.etf.closenav' } },
  index: {
    withCode: { v2: 'v2.index.index', v3: 'v3.realtime.index.index' },
    bare: { v2: 'v2.stocks.index', v3: 'v3.closed.index' },
  },
  price: { withCode: { v2: 'v2.stocks.price', v3: 'v3.realtime.stocks.price' } },
  orderbook: { withCode: { v2: 'v2.stocks.orderbook', v3: 'v3.realtime.stocks.orderbook' } },
};

type Friendly = Record<string, unknown>;

/** Friendly parameter names to upstream names, per resource (after RESOURCE_PARAMS). */
const MAP_PARAMS: Readonly<Partial<Record<Resource, (p: Friendly) => Friendly>>> = {
  selectivemaster: (p) => ({ fields: p.fields }),
  history: (p) => ({ trnsmCycleTpCd: p.period, inqStrtDd: p.from, inqEndDd: p.to, reqCnt: p.count }),
  intraday: (p) => ({ inddCycleTpCd: String(p.interval), inqStrtDd: p.date, strtTm: p.from, endTm: p.to }),
  shortsell: (p) => ({ inqStrtDd: p.from, inqEndDd: p.to }),
  foreignhistory: (p) => ({ inqStrtDd: p.from, inqEndDd: p.to, reqCnt: p.count }),
};

const RESOURCE_SET: ReadonlySet<string> = new Set(RESOURCES);
const GET_MARKET_SET: ReadonlySet<string> = new Set(GET_MARKETS);

/** The industry-code prefix of each streamable market's indexes (K… KOSPI, Q… KOSDAQ). */
export const INDEX_PREFIX: Readonly<Record<Market, string>> = { kospi: 'K', kosdaq: 'Q' };

/** Whether `code` is an industry code of `market` (K… on KOSPI, Q… on KOSDAQ). */
export function isIndexCodeOf(market: string, code: string): boolean {
  return INDEX_CODE.test(code) && code[0] === INDEX_PREFIX[market as Market];
}

function fail(code: WireError['code'], message: string): GetResolution {
  return { ok: false, error: wireError(code, message) };
}

function checkCode(resource: Resource, market: string, code: string | undefined): WireError | undefined {
  const rule = RESOURCE_CODE[resource];
  if (code === undefined) {
    return rule === 'required' ? wireError('invalid_params', `resource ${resource} requires a code`) : undefined;
  }
  if (rule === 'none') return wireError('invalid_params', `resource ${resource} takes no code`);
  if (resource === 'index') {
    return isIndexCodeOf(market, code) ? undefined : wireError('invalid_code', `not an index code of ${market}: ${JSON.stringify(code)}`);
  }
  return STOCK_CODE.test(code) ? undefined : wireError('invalid_code', `not a stock code: ${JSON.stringify(code)}`);
}

function withoutUndefined(o: Friendly): Friendly {
  const out: Friendly = {};
  for (const k in o) if (o[k] !== undefined) out[k] = o[k];
  return out;
}

/**
 * Resolves a `get` request to its endpoint and upstream parameters, or to
 * the error that refuses it: `invalid_resource`, `invalid_market` (KONEX
 * only for `lists`), `invalid_code` (syntax; listing is checked by the
 * caller), `invalid_params` (friendly params, then the endpoint's schema).
 */
export function resolveGet(req: GetRequest, families: Families, dates: LookupDates = SYSTEM_DATES): GetResolution {
  const { market, code } = req;
  if (!RESOURCE_SET.has(req.resource)) return fail('invalid_resource', `unknown resource: ${JSON.stringify(req.resource)}`);
  const resource = req.resource as Resource;
  if (!GET_MARKET_SET.has(market)) return fail('invalid_market', `unknown market: ${JSON.stringify(market)}`);
  if (market === 'konex' && resource !== 'lists') return fail('invalid_market', `konex offers only the lists resource`);
  const codeError = checkCode(resource, market, code);
  if (codeError) return { ok: false, error: codeError };
  const friendly = RESOURCE_PARAMS[resource].safeParse(req.params ?? {});
  if (!friendly.success) return fail('invalid_params', issuesText(friendly.error));
  const dated = withDefaultDates(resource, friendly.data as Friendly, dates);
  if (typeof dated === 'string') return fail('invalid_params', dated);
  const family: Family = market === 'konex' ? (families.konex ?? families.kospi) : families[market as Market];
  const ids = RESOURCE_ENDPOINTS[resource];
  const id = (code === undefined && ids.bare ? ids.bare : ids.withCode)[family];
  const mapped = MAP_PARAMS[resource]?.(dated) ?? {};
  const raw = withoutUndefined({ marketcode: market, ...(code !== undefined ? { issuecode: code } : {}), ...mapped });
  const parsed = endpoint(id).params.safeParse(raw);
  if (!parsed.success) {
    const onCode = parsed.error.issues.some((i) => i.path[0] === 'issuecode' || i.path[0] === 'marketcode');
    return fail(onCode ? 'invalid_code' : 'invalid_params', issuesText(parsed.error));
  }
  return {
    ok: true,
    value: { resource, market, ...(code !== undefined ? { code } : {}), endpointId: id, params: parsed.data },
  };
}
