import { isKrxError, type IntradayRow, type KrxClient, type Market, type PriceRow } from '../client/index.js';
import { Board } from './board.js';
import { OrderBook } from './book.js';
import { IntradayChart } from './chart.js';
import { setOneOf, setText } from './dom.js';
import { changePct, chartCaption, direction, fmtInt, fmtPct, fmtSigned, isoDate } from './format.js';
import { kstEpoch } from './replay.js';
import { SymbolSearch, type SymbolMatch } from './search.js';
import { StatusPanel, type ServerStatus } from './status.js';
import type { SymbolNames } from './symbols.js';
import type { Watchlist } from './watchlist.js';

/**
 * The demo page's controller: keeps the SDK's subscriptions in step with
 * what is shown (`price` for the board's codes of the chosen market, `book`
 * for the selected symbol), feeds the SDK's events to the board, ladder,
 * chart and health panel, and polls `/status` for the call budget. The
 * client can be swapped (`useClient`): a replay's client (`{ replay }`)
 * plays a recorded day onto the same board, book and chart, and a live one
 * brings the page back.
 */

/** The page elements the app drives. */
export interface AppElements {
  readonly board: HTMLTableElement;
  readonly book: HTMLElement;
  readonly chart: HTMLElement;
  /** The chart's caption (what its candles are of). */
  readonly chartHint?: HTMLElement;
  readonly pill: HTMLElement;
  readonly status: HTMLElement;
  /** The market marker (closed, and when it opens). */
  readonly market?: HTMLElement;
  readonly search: HTMLInputElement;
  readonly matches: HTMLElement;
  readonly marketButtons: readonly HTMLButtonElement[];
  /** Title parts of the selected symbol (shared by the chart and book headers). */
  readonly selName: readonly HTMLElement[];
  readonly selPrice: HTMLElement;
  readonly selChange: HTMLElement;
  /** A live region for errors and notices. */
  readonly notice: HTMLElement;
}

/** What the app needs. */
export interface AppDeps {
  /** The first client (live); `useClient` swaps it. */
  readonly client: KrxClient;
  readonly names: SymbolNames;
  readonly watchlist: Watchlist;
  readonly els: AppElements;
  /** Fetches `/status` (JSON). */
  readonly fetchStatus: () => Promise<ServerStatus>;
  /** `/status` poll period, ms; default 3000. */
  readonly statusEveryMs?: number;
}

const DIRS = ['up', 'down', 'flat'] as const;
const INTRADAY_PAGES = 4;

/** A replay the page shows: its day and window (`HHMMSS` KST). */
export interface ShownReplay {
  readonly date: string;
  readonly from: string;
  readonly to: string;
}

/** The demo page. */
export class DemoApp {
  private readonly board: Board;
  private readonly book: OrderBook;
  private readonly chart: IntradayChart;
  private readonly health: StatusPanel;
  private selected: string | undefined;
  private noticeTimer: ReturnType<typeof setTimeout> | undefined;
  private client: KrxClient;
  /** The replay shown, and its clock (the last replayed change's `ts`); undefined while live. */
  private replay: { readonly shown: ShownReplay; clock: number } | undefined;
  /** The bridge's clock less this browser's, ms, from the last live `welcome`: the page's day and hour are the bridge's. */
  private skew = 0;

  /** Builds the components; nothing is subscribed until `start()`. */
  constructor(private readonly deps: AppDeps) {
    const { els } = deps;
    this.client = deps.client;
    this.board = new Board(els.board, { select: (c) => this.select(c), remove: (c) => this.remove(c) });
    this.book = new OrderBook(els.book);
    // The chart's day is the replay's while replaying: its candles are of the replayed trades.
    this.chart = new IntradayChart(
      els.chart,
      (code) => this.intraday(code),
      () => this.replay?.clock ?? this.now(),
      (e) => this.client.state !== 'closed' && this.notify(`chart: ${isKrxError(e) ? `${e.code}: ${e.message}` : String(e)}`),
    );
    this.health = new StatusPanel({ pill: els.pill, panel: els.status, ...(els.market ? { market: els.market } : {}) }, () => this.now());
    new SymbolSearch({ input: els.search, list: els.matches, find: (q) => deps.names.search(this.market, q), pick: (m) => this.add(m) });
    for (const b of els.marketButtons) b.addEventListener('click', () => this.switchMarket(b.value as Market));
    this.bind(this.client);
  }

  /** The client in use. */
  get current(): KrxClient {
    return this.client;
  }

  /**
   * Shows what `client` streams instead of the client before (which the
   * caller closes): a replay's client with `replay` (no lookups: the chart
   * draws the replayed trades), or a live one without. The board's codes
   * are subscribed again and their rows cleared until the new client's
   * snapshots come.
   */
  useClient(client: KrxClient, replay?: ShownReplay): void {
    this.client = client;
    this.replay = replay ? { shown: replay, clock: kstEpoch(replay.date, replay.from) } : undefined;
    if (this.deps.els.chartHint)
      setText(this.deps.els.chartHint, replay ? `1-minute candles of the replayed trades · ${isoDate(replay.date)} · KST` : this.caption());
    this.bind(client);
    this.health.connection(client.state);
    this.selected = undefined;
    this.book.clear();
    this.showMarket();
  }

  /** Feeds a client's events to the page (only while it is the client in use). */
  private bind(client: KrxClient): void {
    const mine = () => client === this.client;
    client.on('price', (code, row, change) => {
      if (!mine()) return;
      if (this.replay && change.ts > this.replay.clock) this.replay.clock = change.ts;
      if (change.market !== this.market) return;
      this.board.update(code, row);
      if (code === this.selected) {
        this.chart.tick(code, row);
        this.showSelectedPrice(row);
        this.captionChart();
      }
    });
    client.on('book', (code, row, change) => {
      if (!mine() || change.market !== this.market || code !== this.selected) return;
      const p = client.row('price', this.market, code);
      const prev = typeof p?.trdPrc === 'number' && typeof p.cmpprevddPrc === 'number' ? p.trdPrc - p.cmpprevddPrc : undefined;
      this.book.render(row, p?.trdPrc ?? undefined, prev);
    });
    // A replay's statuses are of the recorded day (its feeds' states then, and `replay ended`), not of the bridge now.
    client.on('status', (s) => {
      if (!mine()) return;
      // The book's feed says why it has nothing to show (closed: not provided at this hour); the empty ladder says so too.
      if (s.channel === 'book' && s.market === this.market) this.book.explain(s.state === 'live' ? undefined : s.reason);
      if (!this.replay) this.health.feed(s);
      this.captionChart();
    });
    client.on('state', (_prev, next) => mine() && this.health.connection(next));
    client.on('error', (e) => mine() && this.notify(`${e.code}: ${e.message}`));
    client.on('welcome', (w) => {
      if (!mine()) return;
      // A replay's welcome is stamped with the time it opened, as any; the bridge's clock is the same either way.
      this.skew = w.ts - Date.now();
      setTimeout(() => this.ping(), 200);
      void this.pollStatus();
    });
  }

  /** The market shown. */
  get market(): Market {
    return this.deps.watchlist.market;
  }

  /** Shows the remembered market, subscribes, and starts the health polls. */
  start(): void {
    this.health.connection(this.client.state);
    this.showMarket();
    const every = this.deps.statusEveryMs ?? 3000;
    const poll = () => void this.pollStatus().finally(() => setTimeout(poll, every));
    poll();
    setInterval(() => this.ping(), 5000);
  }

  private ping(): void {
    const client = this.client;
    if (client.state === 'open')
      client.ping().then(
        (ms) => client === this.client && this.health.roundTrip(ms),
        () => undefined,
      );
  }

  /** Switches the board to another market. */
  switchMarket(market: Market): void {
    if (market === this.market) return;
    const { watchlist } = this.deps;
    const old = this.market;
    this.unsubscribe('price', old, watchlist.codes(old));
    if (this.selected !== undefined) this.unsubscribe('book', old, [this.selected]);
    this.selected = undefined;
    watchlist.show(market);
    this.showMarket();
  }

  /** Adds a searched symbol to the board (and selects it). */
  add(m: SymbolMatch): void {
    const market = m.market as Market;
    if (market !== this.market) return this.notify(`${m.code} is listed on ${m.market.toUpperCase()}; switch market to add it`);
    this.deps.names.remember(m);
    if (this.deps.watchlist.add(market, m.code)) {
      this.board.add(m.code, m.abbr || m.name);
      this.subscribe('price', market, [m.code]);
    }
    this.select(m.code);
  }

  /** Removes a symbol from the board. */
  remove(code: string): void {
    const market = this.market;
    this.deps.watchlist.remove(market, code);
    this.board.remove(code);
    this.unsubscribe('price', market, [code]);
    if (code === this.selected) {
      this.unsubscribe('book', market, [code]);
      this.selected = undefined;
      const next = this.board.codes()[0];
      if (next !== undefined) this.select(next);
    }
  }

  /** Selects a symbol: its book and chart are shown. */
  select(code: string): void {
    if (code === this.selected) return;
    const market = this.market;
    if (this.selected !== undefined) this.unsubscribe('book', market, [this.selected]);
    this.selected = code;
    this.board.select(code);
    this.book.clear();
    const name = this.deps.names.cached(market, code) ?? code;
    for (const n of this.deps.els.selName) setText(n, `${name} ${code}`);
    const price = this.client.row('price', market, code);
    setText(this.deps.els.selPrice, '');
    setText(this.deps.els.selChange, '');
    if (price !== undefined) this.showSelectedPrice(price);
    this.subscribe('book', market, [code]);
    const client = this.client;
    // A closed client's requests fail with it: its own `error` (a refused connection) or a swap of clients already said why.
    this.chart
      .show(code, price)
      .then(() => this.captionChart())
      .catch((e: unknown) => client.state !== 'closed' && this.notify(`chart: ${isKrxError(e) ? `${e.code}: ${e.message}` : String(e)}`));
  }

  private showMarket(): void {
    const market = this.market;
    const codes = this.deps.watchlist.codes(market);
    for (const b of this.deps.els.marketButtons) b.setAttribute('aria-pressed', String(b.value === market));
    this.deps.els.search.placeholder = `Search ${market.toUpperCase()} by name or code`;
    this.board.setRows(codes.map((code) => ({ code, name: this.deps.names.cached(market, code) ?? code })));
    if (codes.length > 0) this.subscribe('price', market, codes);
    void this.loadNames(market, codes);
    const first = codes[0];
    if (first !== undefined) this.select(first);
  }

  /** Fills in names the board does not know, retrying while the bridge is still loading its symbol lists. */
  private async loadNames(market: Market, codes: readonly string[], attempt = 0): Promise<void> {
    const missing = codes.filter((c) => this.deps.names.cached(market, c) === undefined);
    const found = await Promise.all(missing.map((c) => this.deps.names.name(market, c).catch(() => undefined)));
    missing.forEach((code, i) => {
      const name = found[i];
      if (name === undefined) return;
      this.board.rename(code, name);
      if (code === this.selected && market === this.market) for (const n of this.deps.els.selName) setText(n, `${name} ${code}`);
    });
    if (found.includes(undefined) && attempt < 10) setTimeout(() => void this.loadNames(market, codes, attempt + 1), 2000);
  }

  private showSelectedPrice(row: PriceRow): void {
    const dir = direction(row.cmpprevddTpCd, row.cmpprevddPrc);
    setText(this.deps.els.selPrice, fmtInt(row.trdPrc));
    setText(this.deps.els.selChange, `${fmtSigned(row.cmpprevddPrc)} (${fmtPct(changePct(row.trdPrc, row.cmpprevddPrc))})`);
    setOneOf(this.deps.els.selPrice, DIRS, dir);
    setOneOf(this.deps.els.selChange, DIRS, dir);
  }

  /** Today's 1-minute bars of a code, paging back from the close (100 bars a call); none in a replay (it has no lookups). */
  private async intraday(code: string): Promise<IntradayRow[]> {
    if (this.replay) return [];
    const market = this.market;
    const rows: IntradayRow[] = [];
    let to: string | undefined;
    for (let page = 0; page < INTRADAY_PAGES; page++) {
      const data = await this.client.intraday(market, code, { interval: 60, ...(to !== undefined ? { to } : {}) });
      rows.push(...data.hisLists);
      const oldest = data.hisLists[data.hisLists.length - 1]?.inddTm;
      if (data.hisLists.length < 100 || oldest === undefined) break;
      // Bars are labelled by their end; the next page ends one minute before this page's oldest bar.
      const hhmm = Number(oldest.padStart(8, '0').slice(0, 4));
      const mins = Math.floor(hhmm / 100) * 60 + (hhmm % 100) - 1;
      if (mins < 9 * 60) break;
      to = `${String(Math.floor(mins / 60)).padStart(2, '0')}${String(mins % 60).padStart(2, '0')}`;
    }
    return rows;
  }

  /**
   * Subscribes codes. The server refuses a whole message for one code it
   * does not list (e.g. a remembered code delisted since), so a refused
   * group is retried code by code, and only the refused code leaves the board.
   */
  private subscribe(channel: 'price' | 'book', market: Market, codes: readonly string[]): void {
    const client = this.client;
    client.subscribe(channel, market, codes).catch((e: unknown) => {
      if (client.state === 'closed') return;
      const unlisted = isKrxError(e) && e.code === 'invalid_code';
      if (unlisted && codes.length > 1) return codes.forEach((c) => this.subscribe(channel, market, [c]));
      this.notify(isKrxError(e) ? `${codes.join(', ')}: ${e.message}` : String(e));
      const code = codes[0];
      if (unlisted && channel === 'price' && code !== undefined && market === this.market && this.board.has(code)) this.remove(code);
    });
  }

  private unsubscribe(channel: 'price' | 'book', market: Market, codes: readonly string[]): void {
    if (codes.length === 0) return;
    this.client.unsubscribe(channel, market, codes).catch(() => undefined);
  }

  private async pollStatus(): Promise<void> {
    try {
      this.health.server(await this.deps.fetchStatus());
      this.captionChart();
    } catch {
      // The connection pill already tells when the bridge is away.
    }
  }

  /** The time now on the bridge's clock (this browser's, corrected by the last welcome's), ms epoch. */
  private now(): number {
    return Date.now() + this.skew;
  }

  /** What the live chart's caption says now. */
  private caption(): string {
    const row = this.selected === undefined ? undefined : this.client.row('price', this.market, this.selected);
    return chartCaption(this.now(), this.health.shownFeeds(), row?.trdTm);
  }

  /** Says whose day the live chart's candles are (a replay's caption is its day's). */
  private captionChart(): void {
    const hint = this.deps.els.chartHint;
    if (hint !== undefined && !this.replay) setText(hint, this.caption());
  }

  private notify(text: string): void {
    const n = this.deps.els.notice;
    n.textContent = text;
    n.hidden = false;
    if (this.noticeTimer !== undefined) clearTimeout(this.noticeTimer);
    this.noticeTimer = setTimeout(() => (n.hidden = true), 6000);
  }
}
