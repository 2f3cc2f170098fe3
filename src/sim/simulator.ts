import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../log.js';
import { silentLogger } from '../log.js';
import { matchPath, requestParams, type PathMatch } from '../upstream/paths.js';
import { API_KEY_HEADER, ERROR_BODIES, LIMIT_HEADER, REMAINING_HEADER } from '../upstream/wire.js';
import type { Sessions } from '../market/session.js';
import { SimClock, type ClockMode } from './clock.js';
import { Market } from './market/market.js';
import { seedOf } from './random.js';
import { build, envelope } from './responses/dispatch.js';
import { DailyBudget } from './server/budget.js';
import { CONTROL_PREFIX, handleControl } from './server/control.js';
import { FaultSwitch, applyDrift, truncate, type FaultsInput } from './server/faults.js';
import { sendJson, sleep } from './server/http.js';
import { Stats } from './server/stats.js';

/**
 * The upstream simulator: a real HTTP server that answers every endpoint of
 * the catalogue like the provider does (envelopes, field names and quirks,
 * errors, rate-limit headers, provision times) from a seeded, ticking market,
 * with switchable faults and a control API under `/_sim/`.
 */

/** Options of `Simulator`. */
export interface SimulatorOptions {
  /** The API key clients must send in the `apikey` header; default `sim-key`. */
  readonly apiKey?: string;
  /** Clock mode; default `open` (the regular session at any hour). */
  readonly clock?: ClockMode;
  /** Market seed (number or any string); default 1. */
  readonly seed?: number | string;
  /** Calls allowed per GMT day; default 50,000. */
  readonly dailyLimit?: number;
  /** Milliseconds between market ticks; default 1000. 0 ticks only on demand (`tick()`). */
  readonly tickMs?: number;
  /** Market seconds per wall second in `fast` mode; default 60. */
  readonly speed?: number;
  /** Faults switched on from the start. */
  readonly faults?: FaultsInput;
  /** Logger; default silent. The API key is never logged. */
  readonly logger?: Logger;
  /** Wall clock in epoch milliseconds (tests inject one); default `Date.now`. */
  readonly now?: () => number;
  /**
   * The KRX sessions the market trades by and the provision times follow
   * (src/market: the calendar with the operator's closures, the late opens);
   * default the KRX calendar without operator closures. The bridge hands in
   * its own, so both read the same days.
   */
  readonly sessions?: Sessions;
}

/** Where a started simulator listens. */
export interface SimulatorAddress {
  /** Base URL, e.g. `http://127.0.0.1:9090`. */
  readonly url: string;
  readonly port: number;
}

/** Default API key of the simulator. */
export const DEFAULT_API_KEY = 'sim-key';
/** Default daily call limit (the provider's documented example). */
export const DEFAULT_DAILY_LIMIT = 50_000;

/** The simulator. */
export class Simulator {
  /** The clock that drives the market. */
  readonly clock: SimClock;
  /** The market: its state is the truth the responses are built from. */
  readonly market: Market;
  /** Fault switches. */
  readonly faults: FaultSwitch;
  /** Call statistics. */
  readonly stats: Stats;
  /** The daily call budget. */
  readonly budget: DailyBudget;
  /** Milliseconds between ticks (0: manual only). */
  readonly tickMs: number;
  private readonly apiKey: string;
  private readonly logger: Logger;
  private server: Server | undefined;
  private timer: NodeJS.Timeout | undefined;
  private paused_ = false;
  private cacheGeneration = -1;
  private readonly cache = new Map<string, { status: number; text: string }>();

  /** A simulator; the market is built (and caught up to the clock) here, the server in `start`. */
  constructor(opts: SimulatorOptions = {}) {
    const now = opts.now ?? Date.now;
    const seed = seedOf(opts.seed ?? 1);
    this.clock = new SimClock({
      mode: opts.clock ?? 'open',
      now,
      ...(opts.speed !== undefined ? { speed: opts.speed } : {}),
      ...(opts.sessions ? { sessions: opts.sessions } : {}),
    });
    this.market = new Market(seed, this.clock.marketTime(), this.clock.sessions);
    this.faults = new FaultSwitch(seed, opts.faults ?? {});
    this.stats = new Stats(now);
    this.budget = new DailyBudget(opts.dailyLimit ?? DEFAULT_DAILY_LIMIT, now);
    this.tickMs = opts.tickMs ?? 1000;
    this.apiKey = opts.apiKey ?? DEFAULT_API_KEY;
    this.logger = opts.logger ?? silentLogger();
  }

  /** True while the market is frozen. */
  get paused(): boolean {
    return this.paused_;
  }

  /** Freezes the market: bodies stay identical until `resume` or `tick`. */
  pause(): void {
    this.paused_ = true;
  }

  /** Unfreezes the market; it catches up with the clock on the next tick. */
  resume(): void {
    this.paused_ = false;
  }

  /** Advances the market by one tick (`tickMs`, or 1 s when ticking is manual) of market time. */
  tick(): void {
    this.market.advance(this.clock.later(this.market.time, this.tickMs || 1000));
    this.market.touch();
  }

  /** The market's internal state of an issue, index or contract code (undefined when unknown). */
  truth(code: string): Record<string, unknown> | undefined {
    const m = this.market;
    const issue = m.universe.byCode.get(code);
    if (issue)
      return { kind: 'issue', code, market: issue.market, name: issue.korAbbrv, ...m.params[issue.idx], ...m.live[issue.idx], generation: m.generation };
    const idx = m.indexLive.get(code);
    if (idx)
      return {
        kind: 'index',
        code,
        prevClose: idx.prevClose,
        value: idx.value,
        open: idx.open,
        high: idx.high,
        low: idx.low,
        vol: idx.vol,
        val: idx.val,
        generation: m.generation,
      };
    const c = m.contract(code);
    const l = c ? m.contractLive.get(c.code) : undefined;
    if (c && l)
      return {
        kind: 'contract',
        code: c.code,
        base: l.base,
        last: l.last,
        open: l.open,
        high: l.high,
        low: l.low,
        vol: l.vol,
        val: l.val,
        bid: l.bid,
        ask: l.ask,
        generation: m.generation,
      };
    return undefined;
  }

  /** Starts listening; resolves with the URL. Port 0 picks a free port. */
  async start(opts: { port?: number; host?: string } = {}): Promise<SimulatorAddress> {
    if (this.server) throw new Error('simulator already started');
    const host = opts.host ?? '127.0.0.1';
    const server = createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => {
        this.logger.error({ err }, 'simulator request failed');
        if (!res.headersSent) sendJson(res, 500, { message: 'An unexpected error occurred' });
        else res.destroy();
      });
    });
    server.keepAliveTimeout = 30_000;
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(opts.port ?? 0, host, () => resolve());
    });
    if (this.tickMs > 0) {
      this.timer = setInterval(() => this.autoTick(), this.tickMs);
      this.timer.unref();
    }
    const port = (server.address() as AddressInfo).port;
    const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
    this.logger.info({ url, clock: this.clock.mode, issues: this.market.universe.issues.length }, 'simulator listening');
    return { url, port };
  }

  /** Stops the server, drops every open connection (hung requests included) and the tick timer. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    this.logger.info('simulator stopped');
  }

  private autoTick(): void {
    if (!this.paused_) this.market.advance(this.clock.marketTime());
  }

  private rateHeaders(): Record<string, number> {
    return { [LIMIT_HEADER]: this.budget.limit, [REMAINING_HEADER]: this.budget.remaining() };
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://sim');
    if (url.pathname.startsWith(CONTROL_PREFIX)) return handleControl(this, req, res, url.pathname);
    const target = url.pathname + url.search;
    const match = req.method === 'GET' || req.method === undefined ? matchPath(url.pathname) : undefined;
    this.stats.begin(url.pathname, match?.endpoint.id);
    res.on('close', () => this.stats.end(url.pathname, res.headersSent ? res.statusCode : 0));
    const latency = this.faults.fires('latency', target);
    if (latency) await sleep(latency.ms + this.faults.random() * latency.jitter);
    if (this.faults.fires('reset', target)) {
      req.socket.resetAndDestroy();
      return;
    }
    // A hung request: accepted, never answered; `stop` drops its connection.
    if (this.faults.fires('timeout', target)) return;
    if (!match) return sendJson(res, 404, ERROR_BODIES.notFound);
    if (this.faults.fires('unauthorized', target)) return sendJson(res, 401, ERROR_BODIES.badKey);
    const key = req.headers[API_KEY_HEADER];
    if (key === undefined) return sendJson(res, 401, ERROR_BODIES.noKey);
    if (key !== this.apiKey) return sendJson(res, 401, ERROR_BODIES.badKey);
    if (this.faults.fires('rateLimit', target)) return sendJson(res, 429, ERROR_BODIES.rateLimited, this.rateHeaders());
    if (!this.budget.take()) return sendJson(res, 429, ERROR_BODIES.rateLimited, this.rateHeaders());
    const headers = this.rateHeaders();
    const error = this.faults.fires('error', target);
    if (error) {
      const status = error.status[Math.floor(this.faults.random() * error.status.length)]!;
      return sendJson(res, status, { message: 'An unexpected error occurred' }, headers);
    }
    if (this.clock.enforcesProvision && this.clock.outsideProvision(match.endpoint.provision, this.clock.marketTime())) {
      return sendJson(res, 400, ERROR_BODIES.notProvided, headers);
    }
    const { status, text } = this.respond(match, url);
    sendJson(res, status, status === 200 ? this.corrupt(target, text) : text, headers);
  }

  private respond(match: PathMatch, url: URL): { status: number; text: string } {
    if (this.cacheGeneration !== this.market.generation) {
      this.cache.clear();
      this.cacheGeneration = this.market.generation;
    }
    const key = url.pathname + url.search;
    const hit = this.cache.get(key);
    if (hit) return hit;
    const out = build(this.market, match.endpoint, requestParams(match, url.searchParams));
    const answer = out.ok
      ? { status: 200, text: JSON.stringify(envelope(match.endpoint, out.body)) }
      : { status: 400, text: JSON.stringify(ERROR_BODIES[out.refusal]) };
    this.cache.set(key, answer);
    return answer;
  }

  private corrupt(target: string, text: string): string {
    let out = text;
    const drift = this.faults.fires('drift', target);
    if (drift) out = JSON.stringify(applyDrift(JSON.parse(out) as unknown, drift));
    if (this.faults.fires('malformed', target)) out = truncate(out);
    return out;
  }
}
