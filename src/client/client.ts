import { CHANNELS, LIST_CHANNELS, MARKETS, WILDCARD, type Channel, type Market, type Resource } from '../protocol/constants.js';
import { viewOf, type RowView } from './view.js';
import { checkRange, dayBefore, toDate8, type DateLike } from './dates.js';
import type { ResultMsg, SubscribedMsg, UnsubscribedMsg } from '../protocol/wire.js';
import { topicOf } from '../protocol/topics.js';
import { KrxCore } from './core.js';
import { CLIENT_ERROR_CODES, KrxError } from './errors.js';
import type { RequestOptions } from './requests.js';
import type {
  AnyRow,
  BookRow,
  ChannelRows,
  ClosePriceData,
  CloseNavData,
  HistoryRow,
  IndexData,
  InvestorsData,
  ListsData,
  MasterData,
  PriceRow,
  ResourceData,
  SelectiveMasterData,
  SelectiveMasterField,
  TradeRankingData,
} from './rows.js';
import type { FeedSubscription } from './subscriptions.js';
import type { GetMarket } from './types.js';

/**
 * The typed client of a krx-bridge server: subscriptions with local state
 * that survives reconnects, and promise helpers for every on-demand
 * resource. Runs unchanged in browsers and Node. See src/client/README.md and
 * docs/PROTOCOL.md.
 */

/** Bars a page of `historyPages` asks for (the upstream's most). */
const PAGE = 100;

/**
 * Waits before asking a page again after a retryable `rate_limited` (the
 * lookups per minute of `welcome.limits`, refilled a few a second): a long
 * range outruns the rate, and the pages already read are not thrown away.
 * After the last the error stands.
 */
const PAGE_RETRY_MS = [1000, 2000, 4000, 8000, 16_000] as const;

/** Resolves after `ms`, or at once when `signal` aborts (the next request then rejects with `aborted`). */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    if (signal?.aborted) done();
    else signal?.addEventListener('abort', done);
  });
}

/** One page of `historyPages`. */
export interface HistoryPage {
  /** Bars, newest first. */
  readonly rows: readonly HistoryRow[];
  /** Whether older bars remain in the range (another page follows). */
  readonly hasMore: boolean;
}

type Dated = { readonly from?: unknown; readonly to?: unknown; readonly date?: unknown };

/** `params` with the day fields `keys` as `YYYYMMDD`, checked: a bad date, or `from` after `to`, throws `invalid_params`. */
function datedParams(params: Dated, keys: readonly ('from' | 'to' | 'date')[]): Record<string, unknown> {
  const out: Record<string, unknown> = { ...params };
  for (const k of keys) if (params[k] !== undefined) out[k] = toDate8(params[k] as DateLike, k);
  checkRange(out.from as string | undefined, out.to as string | undefined);
  return out;
}

/** A `get` whose day fields are checked here first, so a bad date costs no request. */
function dated<T>(params: Dated, keys: readonly ('from' | 'to' | 'date')[], send: (p: Record<string, unknown>) => Promise<T>): Promise<T> {
  let p: Record<string, unknown>;
  try {
    p = datedParams(params, keys);
  } catch (err) {
    return Promise.reject(err as Error);
  }
  return send(p);
}

const RANGE = ['from', 'to'] as const;

/** A date, `YYYYMMDD` (string or number). */
export type Date8 = string | number;
/** A time of day, `HHMM` (string or number; 900 is 09:00). */
export type Time4 = string | number;

/** Parameters of `history`; with none, the last 20 daily bars up to today. */
export interface HistoryParams {
  /** Bar period: day, week or month; default `D`. */
  readonly period?: 'D' | 'W' | 'M';
  /** First day; default far enough back for `count` bars. */
  readonly from?: DateLike;
  /** Last day; default today (KST). */
  readonly to?: DateLike;
  /** Most bars, 1–100 (the newest); default 20 when `from` is left out. */
  readonly count?: number;
}

/** Parameters of `intraday`. */
export interface IntradayParams {
  /** Bar length in seconds; default 60. */
  readonly interval?: 10 | 60 | 600;
  /** Day; default today once the market opened, else the last session. */
  readonly date?: DateLike;
  /** First bar time; default 0900. */
  readonly from?: Time4;
  /** Last bar time; default 1530. */
  readonly to?: Time4;
}

/** Parameters of `shortsell`; with none, the last 20 business days up to today. */
export interface ShortSellParams {
  /** First day; default `count` business days back from `to`. */
  readonly from?: DateLike;
  /** Last day; default today (KST). */
  readonly to?: DateLike;
  /** Business days back from `to` when `from` is left out, 1–100; default 20. */
  readonly count?: number;
}

/** Parameters of `foreignhistory`; with none, the last 20 rows up to today. */
export interface ForeignHistoryParams {
  /** First day; default far enough back for `count` rows. */
  readonly from?: DateLike;
  /** Last day; default today (KST). */
  readonly to?: DateLike;
  /** Most rows, 1–100 (the newest); default 20 when `from` is left out. */
  readonly count?: number;
}

/** The row type of a topic string, from its channel (`quote.kospi.005930` → `QuoteRow`). */
export type RowOfTopic<T extends string> = T extends `${infer C}.${string}` ? (C extends Channel ? ChannelRows[C] : AnyRow) : AnyRow;

const CHANNEL_SET: ReadonlySet<string> = new Set(CHANNELS);
const MARKET_SET: ReadonlySet<string> = new Set(MARKETS);
const LIST_SET: ReadonlySet<string> = new Set(LIST_CHANNELS);

/** The krx-bridge client. `new KrxClient('ws://host:port/ws', options)`; it connects at once. */
export class KrxClient extends KrxCore {
  /**
   * Subscribes to codes of a feed (`'*'` for the whole market, list channels
   * only). Resolves with the topics the server confirmed (a wildcard as
   * `channel.market.*`); rejects with the server's error, which also undoes
   * the subscription. A timeout or abort only stops the waiting: the
   * subscription stays registered and is made whenever the connection is up.
   */
  subscribe(channel: Channel, market: Market, codes: string | readonly string[], opts?: RequestOptions): Promise<string[]> {
    const list = codeList(codes);
    const invalid = checkFeed(channel, market, list);
    if (invalid !== undefined) return Promise.reject(invalid);
    if (this.state === 'closed') return Promise.reject(new KrxError('closed', 'the client is closed'));
    const added = this.stream.subs.add(channel, market, list);
    const plan = { channel, market, codes: list };
    return this.request(
      'subscribe',
      (id) => this.subscribeMsg({ ...plan, codes: list.filter((c) => this.stream.subs.has(channel, market, c)) }, id),
      (reply) => (reply === undefined ? [] : (reply as SubscribedMsg).topics),
      opts,
      {
        plan,
        onError: (e) => {
          if (e.code in CLIENT_ERROR_CODES) return;
          this.stream.subs.revert(channel, market, added);
          this.pruneFeed(channel, market);
        },
      },
    );
  }

  /**
   * Unsubscribes codes (or `'*'`) of a feed: their rows are dropped at once
   * and nothing more is delivered for them. Resolves with the topics the
   * server removed (or, while disconnected, the topics asked for).
   */
  unsubscribe(channel: Channel, market: Market, codes: string | readonly string[], opts?: RequestOptions): Promise<string[]> {
    const list = codeList(codes);
    const invalid = checkFeed(channel, market, list);
    if (invalid !== undefined) return Promise.reject(invalid);
    if (this.state === 'closed') return Promise.reject(new KrxError('closed', 'the client is closed'));
    this.stream.subs.remove(channel, market, list);
    this.pruneFeed(channel, market);
    const local = list.map((c) => topicOf(channel, market, c));
    if (!this.isLive) return Promise.resolve(local);
    return this.request(
      'unsubscribe',
      (id) => ({ op: 'unsubscribe', id, channel, market, codes: [...list] }),
      (reply) => (reply === undefined ? local : (reply as UnsubscribedMsg).topics),
      opts,
    );
  }

  /** The current local row of a topic (frozen), or undefined when none is held. */
  snapshot<T extends string>(topic: T): RowOfTopic<T> | undefined {
    return this.stream.table.row(topic) as RowOfTopic<T> | undefined;
  }

  /** The current local row of a channel's code, typed by channel. */
  row<C extends Channel>(channel: C, market: Market, code: string): ChannelRows[C] | undefined {
    return this.stream.table.row(topicOf(channel, market, code)) as ChannelRows[C] | undefined;
  }

  /** The readable view of a topic's local row (`price`, `change`, `volume`, `time`, …), if one is held. */
  view(channel: Channel, market: Market, code: string): RowView | undefined {
    const topic = topicOf(channel, market, code);
    const row = this.stream.table.row(topic);
    return row === undefined ? undefined : viewOf(row, this.stream.table.ts(topic) ?? 0);
  }

  /** The seq of a topic's local row, if one is held. */
  seq(topic: string): number | undefined {
    return this.stream.table.seq(topic);
  }

  /** Topics with a local row. */
  topics(): string[] {
    return this.stream.table.topics();
  }

  /** What is subscribed, per feed (including subscriptions still waiting for the connection). */
  subscriptions(): FeedSubscription[] {
    return this.stream.subs.list();
  }

  /** Round trip of a `ping` through the server, ms. */
  ping(opts?: RequestOptions): Promise<number> {
    return this.request(
      'ping',
      (id) => ({ op: 'ping', id }),
      (_reply, req) => performance.now() - req.sentAt,
      opts,
    );
  }

  /**
   * One on-demand lookup: resolves with the result's `data`, typed by
   * resource; rejects with the server's error, or `timeout` (default 10 s).
   */
  get<R extends Resource>(
    resource: R,
    market: GetMarket,
    code?: string,
    params?: Readonly<Record<string, unknown>>,
    opts?: RequestOptions,
  ): Promise<ResourceData[R]> {
    const p = params === undefined ? undefined : defined(params);
    return this.request(
      'get',
      (id) => ({
        op: 'get',
        id,
        resource,
        market,
        ...(code !== undefined ? { code } : {}),
        ...(p !== undefined && Object.keys(p).length > 0 ? { params: p } : {}),
      }),
      (reply) => {
        const r = reply as ResultMsg;
        // A partial drop travels beside the data; it is told with the rows.
        return (r.dropped ? { ...r.data, dropped: r.dropped } : r.data) as unknown as ResourceData[R];
      },
      opts,
    );
  }

  /** Master data of an issue. */
  master(market: Market, code: string, opts?: RequestOptions): Promise<MasterData> {
    return this.get('master', market, code, undefined, opts);
  }

  /** Only the named master fields of an issue (up to 85). */
  selectivemaster(
    market: Market,
    code: string,
    fields: readonly (SelectiveMasterField | (string & {}))[],
    opts?: RequestOptions,
  ): Promise<SelectiveMasterData> {
    return this.get('selectivemaster', market, code, { fields: [...fields] }, opts);
  }

  /**
   * Daily, weekly or monthly bars of an issue, newest first (at most 100; for
   * more, `historyPages` or `historyAll`). Dates are checked here: a bad one,
   * or `from` after `to`, rejects with `invalid_params` and sends nothing.
   */
  history(market: Market, code: string, params: HistoryParams = {}, opts?: RequestOptions): Promise<ResourceData['history']> {
    return dated(params, RANGE, (p) => this.get('history', market, code, p, opts));
  }

  /**
   * Pages through bars of any range, newest first, 100 a page: each page says
   * whether more remains (`hasMore`). Stops at `from` (default: as far as the
   * upstream has bars, the listing), or when the caller stops
   * iterating. A page refused for the lookup rate (`rate_limited`,
   * retryable) is asked again after 1, 2, 4, 8 and 16 s before the error
   * stands.
   */
  async *historyPages(
    market: Market,
    code: string,
    params: Omit<HistoryParams, 'count'> = {},
    opts?: RequestOptions,
  ): AsyncGenerator<HistoryPage, void, undefined> {
    const from = params.from === undefined ? undefined : toDate8(params.from, 'from');
    let to = params.to === undefined ? undefined : toDate8(params.to, 'to');
    checkRange(from, to);
    const first = from ?? '19000101';
    for (;;) {
      const ask = { ...(params.period ? { period: params.period } : {}), from: first, ...(to ? { to } : {}), count: PAGE };
      let page: ResourceData['history'];
      for (let attempt = 0; ; attempt++) {
        try {
          page = await this.history(market, code, ask, opts);
          break;
        } catch (err) {
          const wait = PAGE_RETRY_MS[attempt];
          if (wait === undefined || !(err instanceof KrxError) || err.code !== 'rate_limited' || !err.retryable) throw err;
          await pause(wait, opts?.signal);
        }
      }
      const rows = page.hisLists;
      const oldest = rows.at(-1)?.trdDd;
      const hasMore = rows.length === PAGE && typeof oldest === 'string' && oldest > first;
      yield { rows, hasMore };
      if (!hasMore) return;
      to = dayBefore(oldest);
    }
  }

  /** Every bar of a range (`historyPages` joined), newest first. */
  async historyAll(market: Market, code: string, params: Omit<HistoryParams, 'count'> = {}, opts?: RequestOptions): Promise<HistoryRow[]> {
    const out: HistoryRow[] = [];
    for await (const page of this.historyPages(market, code, params, opts)) out.push(...page.rows);
    return out;
  }

  /** Intraday bars of an issue (10, 60 or 600 s), newest first (at most 100). A bad `date` rejects with `invalid_params` and sends nothing. */
  intraday(market: Market, code: string, params: IntradayParams = {}, opts?: RequestOptions): Promise<ResourceData['intraday']> {
    return dated(params, ['date'], (p) => this.get('intraday', market, code, p, opts));
  }

  /** The symbol list of a market (`konex` too). */
  lists(market: GetMarket, opts?: RequestOptions): Promise<ListsData> {
    return this.get('lists', market, undefined, undefined, opts);
  }

  /** The closing price of an issue: the last session's before 08:30 KST and on closed days, the day's from 15:40; between them it rejects with `not_provided_now`. */
  closeprice(market: Market, code: string, opts?: RequestOptions): Promise<ClosePriceData> {
    return this.get('closeprice', market, code, undefined, opts);
  }

  /** Trading by investor type: of an issue with `code`, of the market without. */
  investors(market: Market, code?: string, opts?: RequestOptions): Promise<InvestorsData> {
    return this.get('investors', market, code, undefined, opts);
  }

  /** Short selling and lending balances of an issue by day. Dates are checked here, as for `history`. */
  shortsell(market: Market, code: string, params: ShortSellParams = {}, opts?: RequestOptions): Promise<ResourceData['shortsell']> {
    return dated(params, RANGE, (p) => this.get('shortsell', market, code, p, opts));
  }

  /** Foreign holding of an issue by day (at most 100 rows). Dates are checked here, as for `history`. */
  foreignhistory(market: Market, code: string, params: ForeignHistoryParams = {}, opts?: RequestOptions): Promise<ResourceData['foreignhistory']> {
    return dated(params, RANGE, (p) => this.get('foreignhistory', market, code, p, opts));
  }

  /** The top 5 trading members on each side of an issue. */
  traderanking(market: Market, code: string, opts?: RequestOptions): Promise<TradeRankingData> {
    return this.get('traderanking', market, code, undefined, opts);
  }

  /** An ETF's net asset value after the close. */
  closenav(market: Market, code: string, opts?: RequestOptions): Promise<CloseNavData> {
    return this.get('closenav', market, code, undefined, opts);
  }

  /** An index: a sector index with an industry `code` (`K1`, `Q1`, …), the market index without. */
  index(market: Market, code?: string, opts?: RequestOptions): Promise<IndexData> {
    return this.get('index', market, code, undefined, opts);
  }

  /** The last trade of one issue (one-off; subscribe to `price` for a stream). */
  price(market: Market, code: string, opts?: RequestOptions): Promise<PriceRow> {
    return this.get('price', market, code, undefined, opts);
  }

  /** The 10-level order book of one issue (one-off; subscribe to `book` for a stream). */
  orderbook(market: Market, code: string, opts?: RequestOptions): Promise<BookRow> {
    return this.get('orderbook', market, code, undefined, opts);
  }
}

/** The codes of a subscribe call as a list without repeats. */
function codeList(codes: string | readonly string[]): string[] {
  return [...new Set(typeof codes === 'string' ? [codes] : codes)];
}

/** A client-side check of a feed and its codes, so an obvious mistake costs no round trip. */
function checkFeed(channel: string, market: string, codes: readonly string[]): KrxError | undefined {
  if (!CHANNEL_SET.has(channel)) return new KrxError('invalid_channel', `no channel ${channel}`);
  if (!MARKET_SET.has(market)) return new KrxError('invalid_market', `no streamed market ${market}`);
  if (codes.length === 0) return new KrxError('invalid_code', 'no codes given');
  for (const c of codes) {
    if (typeof c !== 'string' || c.length === 0) return new KrxError('invalid_code', 'a code is empty');
    if (c === WILDCARD && !LIST_SET.has(channel)) return new KrxError('invalid_code', `${channel} takes explicit codes, not ${WILDCARD}`);
  }
  return undefined;
}

/** `params` without its undefined entries (they are absent, not null, on the wire). */
function defined(params: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k in params) if (params[k] !== undefined) out[k] = params[k];
  return out;
}
