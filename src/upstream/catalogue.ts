import { z } from 'zod';
import type { Provision } from '../market/provision.js';
import * as F from './fields.js';
import type { FieldTable, FieldType } from './fields.js';
import {
  DERIVATIVE_MARKETS,
  INDEX_MARKETS,
  LIST_MARKETS,
  MAX_CODES_PER_CALL,
  MAX_ROWS_PER_CALL,
  NATION_CODES,
  QUERY,
  STOCK_MARKETS,
  derivativeCode,
  indexCode,
  stockCode,
  type QueryName,
} from './params.js';

/**
 * The endpoint catalogue: one declarative entry for every endpoint of the
 * upstream API (spec documents 1 and 2, the provider's URI list, and the v3
 * derivative and index paths of the provider's published examples).
 *
 * Everything that talks to the upstream (client, poller, passthrough,
 * simulator, docs) reads these entries; nothing hard-codes a path.
 */

/** `bare`: fields at the top level. `wrapped`: `{ jsonrpc: "2.0", result: {…} }`. */
export type Envelope = 'bare' | 'wrapped';

/** What the data is: streamed snapshots, end-of-day data, or the extra (ETF/holiday) service. */
export type EndpointKind = 'realtime' | 'closing' | 'extra';

/** A list inside a response: its key, the aliases payloads use, and its rows. */
export interface ListSpec {
  /** Key of the array in the (unwrapped) body, as the spec names it. */
  readonly key: string;
  /** Other keys the same array arrives under. */
  readonly aliases: readonly string[];
  /** Field table of an object row, or the type of a scalar row. */
  readonly row: FieldTable | FieldType;
  /** Field that identifies a row; a row without it is dropped. */
  readonly rowKey?: string;
  /** Fields a row must carry to be usable; a row missing one is dropped. */
  readonly required?: readonly string[];
}

/** Shape of a response body after its envelope is removed. */
export interface ResponseSpec {
  /** Top-level fields. */
  readonly top: FieldTable;
  /** The response's row list, if it has one. */
  readonly list?: ListSpec;
}

/** Request limits of an endpoint. */
export interface Limits {
  /** Most issue codes per call (`isuCd`). */
  readonly maxCodes?: number;
  /** Most rows per call (`reqCnt`). */
  readonly maxRows?: number;
}

/** Which path parameter carries which kind of code. */
export type CodeKind = 'stock' | 'index' | 'derivative';

/** One upstream endpoint. */
export interface Endpoint {
  /** Stable identifier, e.g. `v3.realtime.multiquote.lists`. */
  readonly id: string;
  /** What it returns, in a few words. */
  readonly title: string;
  /** Path template, e.g. `/v2/market/stocks/{marketcode}/{issuecode}/master`. */
  readonly path: string;
  /** Parameters (path and query), by upstream name. */
  readonly params: z.ZodType<Record<string, unknown>>;
  /** Names of the parameters that go in the query string, in order. */
  readonly query: readonly QueryName[];
  /** The query parameters among `query` that a call must carry. */
  readonly requiredQuery: readonly QueryName[];
  /** Allowed `{marketcode}` values (empty when the path has none). */
  readonly markets: readonly string[];
  /** Kind of `{issuecode}`, when the path has one. */
  readonly code?: CodeKind;
  /** Response envelope. */
  readonly envelope: Envelope;
  /** Response shape. */
  readonly response: ResponseSpec;
  /** Realtime, closing or extra data. */
  readonly kind: EndpointKind;
  /** When the data is provided. */
  readonly provision: Provision;
  /** Codes and rows per call. */
  readonly limits: Limits;
  /** API family: the path's version prefix. */
  readonly family: 'v2' | 'v3';
  /** The date the provider ended the service, for the extra endpoints. */
  readonly ended?: string;
}

interface Def {
  id: string;
  title: string;
  path: string;
  envelope: Envelope;
  kind: EndpointKind;
  provision: Provision;
  response: ResponseSpec;
  markets?: readonly string[];
  code?: CodeKind;
  query?: Partial<Record<QueryName, 'required' | 'optional'>>;
  ended?: string;
}

const CODE_SCHEMAS = { stock: stockCode, index: indexCode, derivative: derivativeCode } as const;

function define(d: Def): Endpoint {
  const shape: Record<string, z.ZodType> = {};
  if (d.path.includes('{marketcode}')) {
    if (!d.markets?.length) throw new Error(`${d.id}: path has {marketcode} but no markets`);
    shape.marketcode = z.enum(d.markets as [string, ...string[]]);
  }
  if (d.path.includes('{issuecode}')) {
    if (!d.code) throw new Error(`${d.id}: path has {issuecode} but no code kind`);
    shape.issuecode = CODE_SCHEMAS[d.code];
  }
  if (d.path.includes('{nationcode}')) shape.nationcode = z.enum(NATION_CODES);
  const query = Object.keys(d.query ?? {}) as QueryName[];
  for (const name of query) {
    const schema = QUERY[name] as z.ZodType;
    shape[name] = d.query?.[name] === 'required' ? schema : schema.optional();
  }
  const limits: Limits = {
    ...(query.includes('isuCd') ? { maxCodes: MAX_CODES_PER_CALL } : {}),
    ...(d.response.list && /hisLists/.test(d.response.list.key) ? { maxRows: MAX_ROWS_PER_CALL } : {}),
  };
  return {
    id: d.id,
    title: d.title,
    path: d.path,
    params: z.object(shape).strict() as unknown as z.ZodType<Record<string, unknown>>,
    query,
    requiredQuery: query.filter((name) => d.query?.[name] === 'required'),
    markets: d.markets ?? [],
    ...(d.code ? { code: d.code } : {}),
    envelope: d.envelope,
    response: d.response,
    kind: d.kind,
    provision: d.provision,
    limits,
    family: d.path.startsWith('/v3/') ? 'v3' : 'v2',
    ...(d.ended ? { ended: d.ended } : {}),
  };
}

// --- response shapes -------------------------------------------------------

const top = (t: FieldTable): ResponseSpec => ({ top: t });
const withList = (
  t: FieldTable,
  key: string,
  row: FieldTable | FieldType,
  opts: { aliases?: string[]; rowKey?: string; required?: string[] } = {},
): ResponseSpec => ({
  top: t,
  list: {
    key,
    aliases: opts.aliases ?? [],
    row,
    ...(opts.rowKey ? { rowKey: opts.rowKey } : {}),
    ...(opts.required ? { required: opts.required } : {}),
  },
});

const SYMBOLS = withList(F.LIST_TOP, 'isuLists', F.LIST_ITEM, { rowKey: 'isuSrtCd' });
const HISTORY = withList(F.HISTORY_TOP, 'hisLists', F.HISTORY_ROW, { rowKey: 'trdDd' });
const INTRADAY = withList(F.HISTORY_TOP, 'hisLists', F.INTRADAY_ROW, { rowKey: 'inddTm' });
const SHORTSELL = withList({ isuSrtCd: 'c' }, 'hisLists', F.SHORTSELL_ROW, { rowKey: 'trdDd' });
const FOREIGN = withList({ isuSrtCd: 'c' }, 'hisLists', F.FOREIGN_ROW, { rowKey: 'trdDd' });
const INVESTORS = withList(F.INVESTOR_TOP, 'invstLists', F.INVESTOR_ROW, { rowKey: 'invstCd' });
const NAV_HISTORY = withList({ isuSrtCd: 'c' }, 'hisLists', F.NAV_ROW, { rowKey: 'trdDd' });
const PDF = withList(F.PDF_TOP, 'Lists', F.PDF_ROW, { rowKey: 'isuCd' });
const HOLIDAYS = withList(F.HOLIDAY_TOP, 'lists', 's8');

const mqList = (row: FieldTable, required: string[]) => withList(F.MQ_TOP, 'isuLists', row, { aliases: ['isulist'], rowKey: 'isuSrtCd', required });
const mqMulti = (row: FieldTable, required: string[]) => withList({}, 'isulist', row, { aliases: ['isuLists', 'isuList'], rowKey: 'isuSrtCd', required });

// --- provision -------------------------------------------------------------

const REALTIME: Provision = { type: 'realtime', strict: false };
const REALTIME_STRICT: Provision = { type: 'realtime', strict: true };
// The snapshots the poller polls (the 1-second multi-quote lists, multi-quote
// price and order book, index values) are the realtime feed of the trading
// day: the provider lists them as realtime, and a realtime endpoint called
// outside its provision time answers 400 (spec document 1, part 7). They are
// read as served during the day's sessions only, where the day's last state
// still stands after the close (15:30–15:40, after-hours); at other hours a
// closed market's last state comes from the closing-data endpoints.
const SNAPSHOT: Provision = REALTIME_STRICT;
const BATCH: Provision = { type: 'batch', at: '06:30' };
const after = (at: string): Provision => ({ type: 'afterClose', at });

// --- the entries -----------------------------------------------------------

const HIST_Q = { trnsmCycleTpCd: 'required', inqStrtDd: 'required', inqEndDd: 'required', reqCnt: 'optional' } as const;
const INTRA_Q = { inddCycleTpCd: 'required', inqStrtDd: 'optional', strtTm: 'required', endTm: 'required' } as const;
const RANGE_Q = { inqStrtDd: 'required', inqEndDd: 'required' } as const;
const FOREIGN_Q = { inqStrtDd: 'required', inqEndDd: 'required', reqCnt: 'optional' } as const;

const v2Stocks = (
  suffix: string,
  title: string,
  rest: Omit<Def, 'id' | 'title' | 'path' | 'markets' | 'envelope'> & { envelope?: Envelope; perIssue?: boolean },
): Def => ({
  id: `v2.stocks.${suffix.replace('/', '.')}`,
  title,
  path: `/v2/market/stocks/{marketcode}${rest.perIssue === false ? '' : '/{issuecode}'}/${suffix}`,
  markets: STOCK_MARKETS,
  envelope: rest.envelope ?? 'wrapped',
  ...(rest.perIssue === false ? {} : { code: 'stock' as const }),
  kind: rest.kind,
  provision: rest.provision,
  response: rest.response,
  ...(rest.query ? { query: rest.query } : {}),
});

const V2_STOCKS: Def[] = [
  {
    id: 'v2.stocks.lists',
    title: 'Symbol list of a market',
    path: '/v2/market/stocks/{marketcode}/lists',
    markets: LIST_MARKETS,
    envelope: 'bare',
    kind: 'closing',
    provision: BATCH,
    response: SYMBOLS,
  },
  v2Stocks('master', 'Master data of an issue', { kind: 'closing', provision: BATCH, response: top(F.STOCK_MASTER) }),
  v2Stocks('selectivemaster', 'Selected master fields of an issue', {
    kind: 'closing',
    provision: BATCH,
    response: top(F.SELECTIVE_MASTER),
    query: { fields: 'optional' },
  }),
  v2Stocks('closeprice', 'Closing price of an issue', { kind: 'closing', provision: after('15:40'), response: top(F.CLOSE) }),
  v2Stocks('price', 'Last trade of an issue', { kind: 'realtime', provision: REALTIME_STRICT, response: top(F.STOCK_PRICE) }),
  v2Stocks('orderbook', '10-level order book of an issue (LP quotes excluded)', {
    kind: 'realtime',
    provision: REALTIME_STRICT,
    response: top(F.ORDERBOOK_10),
  }),
  v2Stocks('investors', 'Trading by investor type in an issue (closing)', {
    kind: 'closing',
    provision: after('15:30'),
    response: INVESTORS,
  }),
  {
    ...v2Stocks('investors', 'Trading by investor type in the market (closing)', {
      kind: 'closing',
      provision: after('15:40'),
      response: INVESTORS,
      perIssue: false,
    }),
    id: 'v2.stocks.marketinvestors',
  },
  v2Stocks('index', 'Market index (KOSPI/KOSDAQ)', { kind: 'realtime', provision: REALTIME, response: top(F.INDEX_CLOSE), perIssue: false }),
  v2Stocks('traderanking', 'Top 5 trading members on each side', {
    kind: 'realtime',
    provision: REALTIME,
    response: top(F.TRADE_RANKING),
  }),
  v2Stocks('closenav', 'ETF net asset value after the close', { kind: 'closing', provision: after('16:00'), response: top(F.NAV) }),
  v2Stocks('shortsell', 'Short selling and lending balance by day', {
    kind: 'closing',
    provision: after('18:00'),
    response: SHORTSELL,
    query: { inqStrtDd: 'optional', inqEndDd: 'required' },
  }),
  v2Stocks('intraday', 'Intraday bars (10 s, 1 min, 10 min)', { kind: 'realtime', provision: REALTIME, response: INTRADAY, query: INTRA_Q }),
  v2Stocks('foreignhistory', 'Foreign holding by day', { kind: 'closing', provision: BATCH, response: FOREIGN, query: FOREIGN_Q }),
  v2Stocks('history', 'Daily, weekly or monthly bars', { kind: 'closing', provision: BATCH, response: HISTORY, query: HIST_Q }),
];

const V2_EXTRA: Def[] = (
  [
    { ...v2Stocks('pdf', 'ETF constituents', { kind: 'extra', provision: BATCH, response: PDF, envelope: 'bare' }), id: 'v2.extra.pdf' },
    { ...v2Stocks('nav', 'ETF net asset value, realtime', { kind: 'extra', provision: REALTIME, response: top(F.NAV) }), id: 'v2.extra.nav' },
    {
      ...v2Stocks('navhistory', 'ETF net asset value by day', {
        kind: 'extra',
        provision: BATCH,
        response: NAV_HISTORY,
        query: HIST_Q,
      }),
      id: 'v2.extra.navhistory',
    },
    {
      id: 'v2.extra.holiday',
      title: 'Market holidays of a country',
      path: '/v2/market/stocks/{nationcode}/holiday',
      envelope: 'bare',
      kind: 'extra',
      provision: REALTIME,
      response: HOLIDAYS,
    },
  ] satisfies Def[]
).map((d) => ({ ...d, ended: '2024-06-30' }));

const mq = (family: 'v2' | 'v3', name: string, title: string, response: ResponseSpec, multi: boolean): Def => ({
  id: `${family}.${family === 'v3' ? 'realtime.' : ''}multiquote.${name}`,
  title,
  path: family === 'v2' ? `/v2/market/multiquote/stocks/{marketcode}/${name}` : `/v3/market/realtime/{marketcode}/multiquote/stocks/${name}`,
  markets: STOCK_MARKETS,
  envelope: multi ? 'wrapped' : 'bare',
  kind: 'realtime',
  provision: SNAPSHOT,
  response,
  ...(multi ? { query: { isuCd: 'required' as const } } : {}),
});

const MULTIQUOTE = (family: 'v2' | 'v3'): Def[] => [
  mq(family, 'lists', 'Whole-market snapshot: price, volume, value, market cap (1 s)', mqList(F.MQ_QUOTE, ['trdPrc']), false),
  mq(family, 'ohlclists', 'Whole-market snapshot: open, high, low, close (1 s)', mqList(F.MQ_OHLC, ['trdPrc']), false),
  mq(family, 'ahtohlclists', 'Whole-market snapshot: after-hours single price OHLC (1 s)', mqList(F.MQ_OHLC, ['trdPrc']), false),
  mq(family, 'quotelists', 'Whole-market snapshot: price and best bid/ask (1 s)', mqList(F.MQ_TOP_OF_BOOK, ['trdPrc']), false),
  mq(family, 'price', 'Last trade of up to 20 issues', mqMulti(F.STOCK_PRICE, ['trdPrc']), true),
  mq(family, 'orderbook', '10-level order book of up to 20 issues', mqMulti(F.ORDERBOOK_10, ['askStep1BstordPrc']), true),
];

const derivative = (product: 'futures' | 'options', family: 'v2' | 'v3-closed' | 'v3-realtime'): Def[] => {
  const base =
    family === 'v2' ? `/v2/market/${product}/{marketcode}` : `/v3/market/${family === 'v3-closed' ? 'closed' : 'realtime'}/derivative/${product}/{marketcode}`;
  const idBase = family === 'v2' ? `v2.${product}` : `v3.${family === 'v3-closed' ? 'closed' : 'realtime'}.${product}`;
  const d = (
    name: string,
    title: string,
    kind: EndpointKind,
    provision: Provision,
    response: ResponseSpec,
    opts: { perIssue?: boolean; envelope?: Envelope; query?: Def['query'] } = {},
  ): Def => ({
    id: `${idBase}.${name.replace('/', '')}`,
    title: `${product === 'futures' ? 'Futures' : 'Options'}: ${title}`,
    path: `${base}${opts.perIssue === false ? '' : '/{issuecode}'}/${name}`,
    markets: DERIVATIVE_MARKETS,
    ...(opts.perIssue === false ? {} : { code: 'derivative' as const }),
    envelope: opts.envelope ?? 'wrapped',
    kind,
    provision,
    response,
    ...(opts.query ? { query: opts.query } : {}),
  });
  const investorRow = product === 'futures' ? F.FUTURES_INVESTOR_ROW : F.OPTIONS_INVESTOR_ROW;
  const price = product === 'futures' ? F.FUTURES_PRICE : F.OPTIONS_PRICE;
  const lists = d('lists', 'contract list', 'closing', BATCH, SYMBOLS, { perIssue: false, envelope: 'bare' });
  const master = d('master', 'contract master data', 'closing', BATCH, top(F.DERIVATIVE_MASTER));
  const close = d('closeprice', 'closing price', 'closing', after('15:50'), top(F.CLOSE));
  const history = d('history', 'daily, weekly or monthly bars', 'closing', BATCH, HISTORY, { query: HIST_Q });
  const live = [
    d('price', 'last trade', 'realtime', REALTIME, top(price)),
    d('orderbook', '5-level order book', 'realtime', REALTIME, top(F.DERIVATIVE_ORDERBOOK)),
    d('market/investors', 'trading by investor type (30 s)', 'realtime', REALTIME, withList({ Tm: 's8' }, 'invstLists', investorRow, { rowKey: 'invstCd' }), {
      perIssue: false,
    }),
    d('intraday', 'intraday bars', 'realtime', REALTIME, INTRADAY, { query: INTRA_Q }),
  ];
  if (family === 'v2') return [lists, master, close, ...live, history];
  if (family === 'v3-closed') return [lists, master, close, history];
  return [{ ...master, kind: 'realtime' as const }, ...live];
};

const indexV2 = (name: string, title: string, kind: EndpointKind, provision: Provision, response: ResponseSpec, query?: Def['query']): Def => ({
  id: `v2.index.${name}`,
  title: `Index: ${title}`,
  path: `/v2/market/index/{marketcode}/{issuecode}/${name}`,
  markets: INDEX_MARKETS,
  code: 'index',
  envelope: 'wrapped',
  kind,
  provision,
  response,
  ...(query ? { query } : {}),
});

const V2_INDEX: Def[] = [
  // The provider's URI list and field tables both name this path `closeindex`
  // (as v3 does); the `closeprice` of spec document 1 would answer 404.
  indexV2('closeindex', 'closing value', 'closing', after('15:40'), top(F.INDEX_CLOSE)),
  indexV2('index', 'realtime value', 'realtime', SNAPSHOT, top(F.INDEX_VALUE)),
  indexV2('prospectindex', 'expected value', 'realtime', REALTIME, top(F.PROSPECT_INDEX)),
  indexV2('marketcap', 'market capitalisation', 'realtime', REALTIME, top(F.INDEX_MARKETCAP)),
  indexV2('investors', 'trading by investor type', 'realtime', REALTIME, INVESTORS),
  indexV2('intraday', 'intraday bars', 'realtime', REALTIME, INTRADAY, INTRA_Q),
  indexV2('history', 'daily, weekly or monthly values', 'closing', BATCH, HISTORY, HIST_Q),
];

const closed = (
  name: string,
  title: string,
  provision: Provision,
  response: ResponseSpec,
  opts: { perIssue?: boolean; envelope?: Envelope; query?: Def['query']; markets?: readonly string[] } = {},
): Def => ({
  id: `v3.closed.${name}`,
  title,
  path: `/v3/market/closed/{marketcode}${opts.perIssue === false ? '' : '/{issuecode}'}/${name}`,
  markets: opts.markets ?? STOCK_MARKETS,
  ...(opts.perIssue === false ? {} : { code: 'stock' as const }),
  envelope: opts.envelope ?? 'wrapped',
  kind: 'closing',
  provision,
  response,
  ...(opts.query ? { query: opts.query } : {}),
});

const V3_CLOSED: Def[] = [
  closed('lists', 'Symbol list of a market', BATCH, SYMBOLS, { perIssue: false, envelope: 'bare', markets: LIST_MARKETS }),
  closed('master', 'Master data of an issue (with English name)', BATCH, top(F.STOCK_MASTER)),
  closed('selectivemaster', 'Selected master fields of an issue', BATCH, top(F.SELECTIVE_MASTER), { query: { fields: 'optional' } }),
  closed('closeprice', 'Closing price of an issue', after('15:40'), top(F.CLOSE)),
  closed('index', 'Market index at the close', after('15:40'), top(F.INDEX_CLOSE), { perIssue: false }),
  closed('shortsell', 'Short selling and lending balance by day', after('18:00'), SHORTSELL, { query: RANGE_Q }),
  closed('foreignhistory', 'Foreign holding by day', BATCH, FOREIGN, { query: FOREIGN_Q }),
  closed('history', 'Daily, weekly or monthly bars', BATCH, HISTORY, { query: HIST_Q }),
  {
    id: 'v3.closed.etf.closenav',
    title: 'ETF net asset value after the close',
    path: '/v3/market/closed/etf/{marketcode}/{issuecode}/closenav',
    markets: STOCK_MARKETS,
    code: 'stock',
    envelope: 'wrapped',
    kind: 'closing',
    provision: after('16:00'),
    response: top(F.NAV),
  },
  {
    id: 'v3.closed.index.closeindex',
    title: 'Index: closing value',
    path: '/v3/market/closed/index/{marketcode}/{issuecode}/closeindex',
    markets: INDEX_MARKETS,
    code: 'index',
    envelope: 'wrapped',
    kind: 'closing',
    provision: after('15:40'),
    response: top(F.INDEX_CLOSE),
  },
  {
    id: 'v3.closed.index.history',
    title: 'Index: daily, weekly or monthly values',
    path: '/v3/market/closed/index/{marketcode}/{issuecode}/history',
    markets: INDEX_MARKETS,
    code: 'index',
    envelope: 'wrapped',
    kind: 'closing',
    provision: BATCH,
    response: HISTORY,
    query: HIST_Q,
  },
];

const rtIndex = (name: string, title: string, response: ResponseSpec, query?: Def['query'], provision: Provision = REALTIME): Def => ({
  id: `v3.realtime.index.${name}`,
  title: `Index: ${title}`,
  path: `/v3/market/realtime/index/{marketcode}/{issuecode}/${name}`,
  markets: INDEX_MARKETS,
  code: 'index',
  envelope: 'wrapped',
  kind: 'realtime',
  provision,
  response,
  ...(query ? { query } : {}),
});

const V3_REALTIME_INDEX: Def[] = [
  rtIndex('marketcap', 'market capitalisation', top(F.INDEX_MARKETCAP)),
  rtIndex('prospectindex', 'expected value', top(F.PROSPECT_INDEX)),
  rtIndex('intraday', 'intraday bars', INTRADAY, INTRA_Q),
  rtIndex('index', 'realtime value', top(F.INDEX_VALUE), undefined, SNAPSHOT),
  rtIndex('investors', 'trading by investor type', INVESTORS),
];

const rtStock = (name: string, title: string, provision: Provision, response: ResponseSpec, query?: Def['query']): Def => ({
  id: `v3.realtime.stocks.${name}`,
  title,
  path: `/v3/market/realtime/{marketcode}/stocks/{issuecode}/${name}`,
  markets: STOCK_MARKETS,
  code: 'stock',
  envelope: 'wrapped',
  kind: 'realtime',
  provision,
  response,
  ...(query ? { query } : {}),
});

const V3_REALTIME_STOCKS: Def[] = [
  rtStock('price', 'Last trade of an issue', REALTIME_STRICT, top(F.STOCK_PRICE)),
  rtStock('orderbook', '10-level order book of an issue (LP quotes excluded)', REALTIME_STRICT, top(F.ORDERBOOK_10)),
  rtStock('intraday', 'Intraday bars (10 s, 1 min, 10 min)', REALTIME, INTRADAY, INTRA_Q),
  rtStock('traderanking', 'Top 5 trading members on each side', REALTIME, top(F.TRADE_RANKING)),
];

const V3_INVESTORS: Def[] = [
  {
    id: 'v3.investors.issue',
    title: 'Trading by investor type in an issue (closing)',
    path: '/v3/market/investors/{marketcode}/{issuecode}/investors',
    markets: STOCK_MARKETS,
    code: 'stock',
    envelope: 'wrapped',
    kind: 'closing',
    provision: after('15:30'),
    response: INVESTORS,
  },
  {
    id: 'v3.investors.market',
    title: 'Trading by investor type in the market (closing)',
    path: '/v3/market/investors/{marketcode}/investors',
    markets: STOCK_MARKETS,
    envelope: 'wrapped',
    kind: 'closing',
    provision: after('15:40'),
    response: INVESTORS,
  },
];

const V3_EXTRA: Def[] = (
  [
    {
      id: 'v3.extra.pdf',
      title: 'ETF constituents',
      path: '/v3/market/extra/stocks/{marketcode}/{issuecode}/pdf',
      markets: STOCK_MARKETS,
      code: 'stock',
      envelope: 'bare',
      kind: 'extra',
      provision: BATCH,
      response: PDF,
    },
    {
      id: 'v3.extra.nav',
      title: 'ETF net asset value, realtime',
      path: '/v3/market/extra/stocks/{marketcode}/{issuecode}/nav',
      markets: STOCK_MARKETS,
      code: 'stock',
      envelope: 'wrapped',
      kind: 'extra',
      provision: REALTIME,
      response: top(F.NAV),
    },
    {
      id: 'v3.extra.navhistory',
      title: 'ETF net asset value by day',
      path: '/v3/market/extra/stocks/{marketcode}/{issuecode}/navhistory',
      markets: STOCK_MARKETS,
      code: 'stock',
      envelope: 'wrapped',
      kind: 'extra',
      provision: BATCH,
      response: NAV_HISTORY,
      query: HIST_Q,
    },
    {
      id: 'v3.extra.holiday',
      title: 'Market holidays of a country',
      path: '/v3/market/extra/stocks/{nationcode}/holiday',
      envelope: 'bare',
      kind: 'extra',
      provision: REALTIME,
      response: HOLIDAYS,
    },
  ] satisfies Def[]
).map((d) => ({ ...d, ended: '2024-06-30' }));

/** Every endpoint, in document order. */
export const CATALOGUE: readonly Endpoint[] = [
  ...V2_STOCKS,
  ...V2_EXTRA,
  ...MULTIQUOTE('v2'),
  ...derivative('options', 'v2'),
  ...derivative('futures', 'v2'),
  ...V2_INDEX,
  ...V3_CLOSED,
  ...derivative('futures', 'v3-closed'),
  ...derivative('options', 'v3-closed'),
  ...V3_REALTIME_INDEX,
  ...MULTIQUOTE('v3'),
  ...V3_REALTIME_STOCKS,
  ...derivative('futures', 'v3-realtime'),
  ...derivative('options', 'v3-realtime'),
  ...V3_INVESTORS,
  ...V3_EXTRA,
].map(define);

const BY_ID = new Map(CATALOGUE.map((e) => [e.id, e]));
if (BY_ID.size !== CATALOGUE.length) throw new Error('duplicate endpoint id in the catalogue');

/** Identifier of a catalogue entry. */
export type EndpointId = string;

/** The entry with this id; throws for an unknown id (a programming error). */
export function endpoint(id: EndpointId): Endpoint {
  const e = BY_ID.get(id);
  if (!e) throw new Error(`unknown endpoint id: ${id}`);
  return e;
}

/** The entry with this id, or undefined. */
export function findEndpoint(id: string): Endpoint | undefined {
  return BY_ID.get(id);
}
