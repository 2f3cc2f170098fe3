import { isKrxError, type IntradayRow, type KrxClient, type Market, type PriceRow } from '../client/index.js';
import { Board } from './board.js';
import { OrderBook } from './book.js';
import { IntradayChart } from './chart.js';
import { setOneOf, setText } from './dom.js';
import { changePct, direction, fmtInt, fmtPct, fmtSigned } from './format.js';
import { SymbolSearch, type SymbolMatch } from './search.js';
import { StatusPanel, type ServerStatus } from './status.js';
import type { SymbolNames } from './symbols.js';
import type { Watchlist } from './watchlist.js';

/**
 * The demo page's controller: keeps the SDK's subscriptions in step with
 * what is shown (`price` for the board's codes of the chosen market, `book`
 * for the selected symbol), feeds the SDK's events to the board, ladder,
 * chart and health panel, and polls `/status` for the call budget.
 */

/** The page elements the app drives. */
export interface AppElements {
  readonly board: HTMLTableElement;
  readonly book: HTMLElement;
  readonly chart: HTMLElement;
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

/** The demo page. */
export class DemoApp {
  private readonly board: Board;
  private readonly book: OrderBook;
  private readonly chart: IntradayChart;
  private readonly health: StatusPanel;
  private selected: string | undefined;
  private noticeTimer: ReturnType<typeof setTimeout> | undefined;

  /** Builds the components; nothing is subscribed until `start()`. */
  constructor(private readonly deps: AppDeps) {
    const { els, client } = deps;
    this.board = new Board(els.board, { select: (c) => this.select(c), remove: (c) => this.remove(c) });
    this.book = new OrderBook(els.book);
    this.chart = new IntradayChart(els.chart, (code) => this.intraday(code));
    this.health = new StatusPanel({ pill: els.pill, panel: els.status, ...(els.market ? { market: els.market } : {}) });
    new SymbolSearch({ input: els.search, list: els.matches, find: (q) => deps.names.search(this.market, q), pick: (m) => this.add(m) });
    for (const b of els.marketButtons) b.addEventListener('click', () => this.switchMarket(b.value as Market));
    client.on('price', (code, row, change) => {
      if (change.market !== this.market) return;
      this.board.update(code, row);
      if (code === this.selected) {
        this.chart.tick(code, row);
        this.showSelectedPrice(row);
      }
    });
    client.on('book', (code, row, change) => {
      if (change.market !== this.market || code !== this.selected) return;
      const p = client.row('price', this.market, code);
      const prev = typeof p?.trdPrc === 'number' && typeof p.cmpprevddPrc === 'number' ? p.trdPrc - p.cmpprevddPrc : undefined;
      this.book.render(row, p?.trdPrc ?? undefined, prev);
    });
    client.on('status', (s) => this.health.feed(s));
    client.on('state', (_prev, next) => this.health.connection(next));
    client.on('error', (e) => this.notify(`${e.code}: ${e.message}`));
  }

  /** The market shown. */
  get market(): Market {
    return this.deps.watchlist.market;
  }

  /** Shows the remembered market, subscribes, and starts the health polls. */
  start(): void {
    this.health.connection(this.deps.client.state);
    this.showMarket();
    const every = this.deps.statusEveryMs ?? 3000;
    const poll = () => void this.pollStatus().finally(() => setTimeout(poll, every));
    poll();
    const ping = () => {
      if (this.deps.client.state === 'open') this.deps.client.ping().then((ms) => this.health.roundTrip(ms), () => undefined);
    };
    setInterval(ping, 5000);
    this.deps.client.on('welcome', () => {
      setTimeout(ping, 200);
      void this.pollStatus();
    });
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
    const price = this.deps.client.row('price', market, code);
    setText(this.deps.els.selPrice, '');
    setText(this.deps.els.selChange, '');
    if (price !== undefined) this.showSelectedPrice(price);
    this.subscribe('book', market, [code]);
    this.chart.show(code, price).catch((e: unknown) => this.notify(`chart: ${isKrxError(e) ? `${e.code}: ${e.message}` : String(e)}`));
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

  /** Today's 1-minute bars of a code, paging back from the close (100 bars a call). */
  private async intraday(code: string): Promise<IntradayRow[]> {
    const market = this.market;
    const rows: IntradayRow[] = [];
    let to: string | undefined;
    for (let page = 0; page < INTRADAY_PAGES; page++) {
      const data = await this.deps.client.intraday(market, code, { interval: 60, ...(to !== undefined ? { to } : {}) });
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
    this.deps.client.subscribe(channel, market, codes).catch((e: unknown) => {
      const unlisted = isKrxError(e) && e.code === 'invalid_code';
      if (unlisted && codes.length > 1) return codes.forEach((c) => this.subscribe(channel, market, [c]));
      this.notify(isKrxError(e) ? `${codes.join(', ')}: ${e.message}` : String(e));
      const code = codes[0];
      if (unlisted && channel === 'price' && code !== undefined && market === this.market && this.board.has(code)) this.remove(code);
    });
  }

  private unsubscribe(channel: 'price' | 'book', market: Market, codes: readonly string[]): void {
    if (codes.length === 0) return;
    this.deps.client.unsubscribe(channel, market, codes).catch(() => undefined);
  }

  private async pollStatus(): Promise<void> {
    try {
      this.health.server(await this.deps.fetchStatus());
    } catch {
      // The connection pill already tells when the bridge is away.
    }
  }

  private notify(text: string): void {
    const n = this.deps.els.notice;
    n.textContent = text;
    n.hidden = false;
    if (this.noticeTimer !== undefined) clearTimeout(this.noticeTimer);
    this.noticeTimer = setTimeout(() => (n.hidden = true), 6000);
  }
}
