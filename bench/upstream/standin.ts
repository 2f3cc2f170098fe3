import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { endpoint } from '../../src/upstream/catalogue.js';
import { API_KEY_HEADER, ERROR_BODIES, LIMIT_HEADER, REMAINING_HEADER } from '../../src/upstream/wire.js';
import { SyntheticMarket, wallMs } from '../lib/market.js';
import { symbolsByMarket, type ListingMarket } from '../lib/listing.js';
import { subscriberCounts, type SubsLayout } from '../lib/subs.js';
import { Ticker } from '../server/ticker.js';

/**
 * The end-to-end scenario's upstream: a fixed-rate stand-in for the
 * provider over real HTTP. It serves the symbol lists and the whole-market
 * `quote` lists of KOSPI (v2 path) and KOSDAQ (v3 path) as the provider
 * shapes them (bare envelope, `trdDd`/`trdTm`, rows under `isuLists`, a
 * `" -"` market cap on every 200th row). Once started, a drift-free timer
 * changes a fixed share of all symbols every period.
 *
 * Each row carries one extra field, `answeredUs`: the wall-clock time, in
 * whole microseconds, of the response that first carried the row's current
 * values. It is taken when the stand-in answers a request, just before the
 * body is assembled and written, and it changes only when the row does, so
 * it travels to clients inside each change's patch and the load measures
 * latency from the upstream's answer. An unchanged row keeps its bytes.
 */

/** The row field that carries the answer time of the row's last change, µs since the epoch. */
export const STAMP_FIELD = 'answeredUs';

/** Options of the stand-in. */
export interface StandInOptions {
  readonly symbols: number;
  readonly seed: number;
  /** Share of all symbols changed per period. */
  readonly changeRatio: number;
  /** Period of the changes, ms (the provider refreshes once a second). */
  readonly periodMs: number;
  /** The API key requests must carry. */
  readonly apiKey: string;
  /** The load's subscriptions, to count the deliveries each served change calls for. */
  readonly subs?: SubsLayout;
}

/** Cumulative counters of the stand-in. */
export interface StandInCounts {
  /** Periods run since `go`. */
  readonly steps: number;
  /** Symbol changes made. */
  readonly changes: number;
  /** Changes overwritten by a later one before any response carried them (a poll missed a period). */
  readonly superseded: number;
  /** Changes carried by a response (each counted once, by its first). */
  readonly served: number;
  /** Deliveries the served changes call for (their subscribers). */
  readonly offered: number;
  /** Quote-list responses, and their bytes. */
  readonly quoteResponses: number;
  readonly quoteBytes: number;
  /** Other answered requests (symbol lists, refusals). */
  readonly otherResponses: number;
}

// Row states: 0 served, 1 not served since the start, 2 changed since last served.
const SERVED = 0;
const INITIAL = 1;
const CHANGED = 2;

/** The stand-in upstream. */
export class StandIn {
  private readonly market: SyntheticMarket;
  private readonly bySymbol: Record<ListingMarket, number[]>;
  private readonly texts: Record<ListingMarket, string[]>;
  private readonly state: Uint8Array;
  private readonly counts: Int32Array;
  private readonly routes = new Map<string, () => { status: number; body: string }>();
  private readonly http: Server;
  private ticker: Ticker | undefined;
  private trdTm = '090000';
  private readonly lastAnswerMs: Record<ListingMarket, number> = { kospi: 0, kosdaq: 0 };
  private readonly c = { steps: 0, changes: 0, superseded: 0, served: 0, offered: 0, quoteResponses: 0, quoteBytes: 0, otherResponses: 0 };

  /** A stand-in whose market is at rest until `go`. */
  constructor(private readonly opts: StandInOptions) {
    this.market = new SyntheticMarket({ symbols: opts.symbols, seed: opts.seed, changeRatio: opts.changeRatio });
    this.bySymbol = symbolsByMarket(opts.symbols);
    this.state = new Uint8Array(opts.symbols).fill(INITIAL);
    this.counts = opts.subs ? subscriberCounts(opts.subs) : new Int32Array(opts.symbols);
    this.texts = { kospi: this.bySymbol.kospi.map(() => ''), kosdaq: this.bySymbol.kosdaq.map(() => '') };
    const path = (id: string, market: string): string => endpoint(id).path.replace('{marketcode}', market);
    this.routes.set(path('v2.stocks.lists', 'kospi'), () => this.symbolList('kospi'));
    this.routes.set(path('v3.closed.lists', 'kosdaq'), () => this.symbolList('kosdaq'));
    this.routes.set(path('v2.multiquote.lists', 'kospi'), () => this.quoteList('kospi'));
    this.routes.set(path('v3.realtime.multiquote.lists', 'kosdaq'), () => this.quoteList('kosdaq'));
    this.http = createServer((req, res) => this.answer(req, res));
    this.http.keepAliveTimeout = 65_000;
  }

  /** Listens on 127.0.0.1, port 0; resolves with the base URL. */
  listen(): Promise<string> {
    return new Promise((resolve) => this.http.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(this.http.address() as AddressInfo).port}`)));
  }

  /** Starts the changes: one step every period, the first one period from now. */
  go(): void {
    this.ticker?.stop();
    this.ticker = new Ticker(this.opts.periodMs, () => this.step());
    this.ticker.start();
  }

  /** Stops the changes; the lists keep being served as they stand. */
  pause(): void {
    this.ticker?.stop();
  }

  /** The counters so far. */
  counters(): StandInCounts {
    return { ...this.c };
  }

  /** Wall time of each market's last quote-list answer, ms since the epoch (0 before the first). */
  lastQuoteAnswers(): number[] {
    return [this.lastAnswerMs.kospi, this.lastAnswerMs.kosdaq];
  }

  /** Ticks skipped because the process fell a whole period behind (should stay 0). */
  get skippedSteps(): number {
    return this.ticker?.skipped ?? 0;
  }

  /** Stops the changes and closes the listener and its keep-alive connections. */
  close(): Promise<void> {
    this.pause();
    return new Promise((resolve) => {
      this.http.close(() => resolve());
      this.http.closeAllConnections();
    });
  }

  private step(): void {
    const changes = this.market.step();
    this.c.steps++;
    this.c.changes += changes.length;
    for (const ch of changes) {
      if (this.state[ch.index] === CHANGED) this.c.superseded++;
      this.state[ch.index] = CHANGED;
    }
    const s = 9 * 3600 + (this.c.steps % 23_400);
    this.trdTm = [Math.floor(s / 3600), Math.floor(s / 60) % 60, s % 60].map((n) => String(n).padStart(2, '0')).join('');
  }

  private answer(req: IncomingMessage, res: ServerResponse): void {
    const route = this.routes.get((req.url ?? '').split('?')[0]!);
    let out: { status: number; body: string };
    if (req.headers[API_KEY_HEADER] === undefined) out = { status: 401, body: JSON.stringify(ERROR_BODIES.noKey) };
    else if (req.headers[API_KEY_HEADER] !== this.opts.apiKey) out = { status: 401, body: JSON.stringify(ERROR_BODIES.badKey) };
    else if (req.method !== 'GET' || !route) out = { status: 404, body: JSON.stringify(ERROR_BODIES.notFound) };
    else out = route();
    res.writeHead(out.status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(out.body),
      [LIMIT_HEADER]: '1000000000',
      [REMAINING_HEADER]: '999000000',
    });
    res.end(out.body);
  }

  /** The market's symbol list (`v2.stocks.lists` / `v3.closed.lists` shape). */
  private symbolList(market: ListingMarket): { status: number; body: string } {
    this.c.otherResponses++;
    const isuLists = this.bySymbol[market].map((i) => {
      const code = this.market.codes[i]!;
      return { isuSrtCd: code, isuCd: `KR7${code}000`, isuKorNm: `종목${code}`, isuKorAbbr: `종목${code}`, map_to: `${code}*001` };
    });
    return { status: 200, body: JSON.stringify({ trdDd: '20240603', mktEndTm: '1530', isuLists }) };
  }

  /**
   * The market's whole quote list as it stands. Rows changed since they were
   * last served take this moment as their answer time.
   */
  private quoteList(market: ListingMarket): { status: number; body: string } {
    const now = wallMs();
    this.lastAnswerMs[market] = now;
    const us = Math.round(now * 1000);
    const list = this.bySymbol[market];
    const texts = this.texts[market];
    for (let k = 0; k < list.length; k++) {
      const i = list[k]!;
      const st = this.state[i]!;
      if (st === SERVED) continue;
      if (st === CHANGED) {
        this.c.served++;
        this.c.offered += this.counts[i]!;
      }
      texts[k] = this.rowText(i, us);
      this.state[i] = SERVED;
    }
    const body = `{"trdDd":"20240603","trdTm":"${this.trdTm}","isuLists":[${texts.join(',')}]}`;
    this.c.quoteResponses++;
    this.c.quoteBytes += body.length;
    return { status: 200, body };
  }

  private rowText(i: number, us: number): string {
    const r = this.market.rows[i]!;
    // Suspended issues show a placeholder market cap, as the provider's examples do.
    const mktcap = i % 200 === 199 ? ' -' : r.mktcap;
    return JSON.stringify({ isuSrtCd: r.isuSrtCd, trdPrc: r.trdPrc, accTrdvol: r.accTrdvol, accTrdval: r.accTrdval, mktcap, [STAMP_FIELD]: us });
  }
}
