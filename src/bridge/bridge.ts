import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Authenticator } from '../access/auth.js';
import { LookupLimits } from '../access/lookups.js';
import type { Bus } from '../bus/bus.js';
import type { Config } from '../config/config.js';
import { Gateway } from '../gateway/gateway.js';
import { onClientError, onConnect } from '../http/client-errors.js';
import { createHttpHandler } from '../http/handler.js';
import { createLogger, type Logger } from '../log.js';
import { KrxCalendar, coveredYears, operatorHolidays } from '../market/calendar.js';
import { marketClock } from '../market/clock.js';
import { EXAM_DAYS, Sessions } from '../market/session.js';
import { Metrics } from '../metrics/metrics.js';
import { StateJournal } from '../persist/journal.js';
import type { Demand } from '../poller/demand.js';
import type { Families } from '../poller/feeds.js';
import { Poller } from '../poller/poller.js';
import { CHANNELS, MARKETS, type Market } from '../protocol/constants.js';
import type { Recorder } from '../recorder/recorder.js';
import type { Simulator, SimulatorOptions } from '../sim/index.js';
import { EnglishNames } from '../state/names.js';
import type { StateStore } from '../state/store.js';
import { SymbolDirectory } from '../state/symbols.js';
import { createTopology, restoredInfo, stateDir, type Topology } from '../topology/index.js';
import { DataDirLock } from '../persist/lock.js';
import { OnDemandAllowance } from '../upstream/allowance.js';
import { Budget, nextReset } from '../upstream/budget.js';
import { OnDemandCache } from '../upstream/cache.js';
import type { UpstreamClient } from '../upstream/client.js';
import { packageVersion } from '../version.js';
import { startRecording } from './recording.js';
import { SymbolLoader } from './symbols.js';
import { lookupCaller, startUpstream } from './upstream.js';

/**
 * The bridge: upstream client (or the built-in simulator), poller, state,
 * bus, gateway and HTTP routes on one port, wired together on a topology
 * (one process, or a cluster joined by Redis when REDIS_URL is set; the
 * topology is the only part that differs). `createBridge` resolves to a
 * running bridge; `stop()` drains and shuts it down. See README.md and
 * docs/ARCHITECTURE.md.
 */

/** Options of `createBridge` beyond the configuration. */
export interface BridgeOptions {
  /** Logger; default `bridgeLogger(config)`. */
  readonly logger?: Logger;
  /** Metrics registry; default a new one. */
  readonly metrics?: Metrics;
  /** Overrides of the built-in simulator's options (tests). */
  readonly simulator?: Partial<SimulatorOptions>;
  /** Directory of the demo page; default `public/` beside the built code, if it exists. */
  readonly staticDir?: string;
  /** Clock, ms epoch; default Date.now. */
  readonly now?: () => number;
  /** Poller retry timings (tests): after a 401, default 60,000 ms; longest backoff, default 30,000 ms. */
  readonly poller?: { readonly authRetryMs?: number; readonly maxBackoffMs?: number };
}

/** Where a bridge listens. */
export interface BridgeAddress {
  /** HTTP base URL, e.g. `http://127.0.0.1:8080`. */
  readonly url: string;
  /** WebSocket URL, e.g. `ws://127.0.0.1:8080/ws`. */
  readonly wsUrl: string;
  readonly port: number;
}

/** Sockets the HTTP server takes beyond MAX_CONNECTIONS: plain requests, and upgrades it will refuse with a status. */
const HTTP_SOCKET_MARGIN = 512;

/** The logger of a bridge for `config`: LOG_LEVEL and LOG_FORMAT, with every secret of the configuration redacted. */
export function bridgeLogger(config: Config): Logger {
  const secrets = [config.UPSTREAM_API_KEY, config.AUTH_JWT_SECRET, redisPassword(config.REDIS_URL), ...(config.AUTH_TOKENS ?? [])].filter(
    (s): s is string => !!s,
  );
  return createLogger({ level: config.LOG_LEVEL, secrets, base: { app: 'krx-bridge' }, format: config.LOG_FORMAT });
}

/** The parts of a running bridge. */
export interface BridgeParts {
  readonly config: Config;
  readonly logger: Logger;
  readonly metrics: Metrics;
  /** One process or a cluster: the store, bus and demand come from it. */
  readonly topology: Topology;
  /** Daily call budget. */
  readonly budget: Budget;
  /** The KRX calendar (public holidays, the year-end closure, MARKET_HOLIDAYS). */
  readonly calendar: KrxCalendar;
  /** The KRX sessions on that calendar (late opens included). */
  readonly sessions: Sessions;
  /** Listed symbols per market. */
  readonly symbols: SymbolDirectory;
  readonly upstream: UpstreamClient;
  /** The built-in simulator, when no UPSTREAM_URL is configured. */
  readonly sim: Simulator | undefined;
  /** On-demand lookups (`get`, `/api`). */
  readonly cache: OnDemandCache;
  /** The on-demand share of the daily budget. */
  readonly allowance: OnDemandAllowance;
  readonly poller: Poller;
  readonly gateway: Gateway;
  readonly server: Server;
  /** The state journal; undefined with STATE=off. */
  readonly journal: StateJournal | undefined;
  /** The hold on DATA_DIR while the state journal or the recorder writes there (see persist/lock.ts); undefined with both off. */
  readonly dataLock: DataDirLock | undefined;
  /** The recorder; undefined with RECORD=off. */
  readonly recorder: Recorder | undefined;
  /** Access control; undefined when access is open. */
  readonly auth: Authenticator | undefined;
}

/**
 * Builds and starts a bridge for `config`: the upstream (or simulator), the
 * topology, poller, journal, recorder, gateway and HTTP server, listening
 * when it resolves. What started is stopped again if a later step fails
 * (e.g. the port is taken), and the error is rethrown.
 */
export async function createBridge(config: Config, opts: BridgeOptions = {}): Promise<Bridge> {
  const now = opts.now ?? Date.now;
  const logger = opts.logger ?? bridgeLogger(config);
  const metrics = opts.metrics ?? new Metrics();
  const undo: (() => Promise<unknown> | unknown)[] = [];
  try {
    const calendar = new KrxCalendar(operatorHolidays(config.MARKET_HOLIDAYS), (year) =>
      logger.warn(
        { year, covered: coveredYears() },
        'no public holidays known for this year: only weekends, the year-end closure and MARKET_HOLIDAYS apply (update @hyunbinseo/holidays-kr)',
      ),
    );
    const sessions = new Sessions(calendar, [...EXAM_DAYS, ...operatorHolidays(config.MARKET_EXAM_DAYS)]);
    const budget = new Budget();
    // One process per DATA_DIR: taken before the state files are read, let go last.
    const dataLock = config.STATE === 'on' || config.RECORD === 'on' ? DataDirLock.acquire(config.DATA_DIR) : undefined;
    undo.push(() => dataLock?.release());
    // The state files are loaded here, before anything can serve them.
    const topology = createTopology(config, { budget, metrics, logger, now });
    undo.push(() => topology.close());
    const up = await startUpstream(config, { budget, metrics, logger, sessions, now, simulator: opts.simulator });
    undo.push(
      () => up.sim?.stop(),
      () => up.client.close(),
    );
    await topology.start();
    undo.push(() => topology.stop());
    const families: Families = { kospi: config.KOSPI_FAMILY, kosdaq: config.KOSDAQ_FAMILY };
    // On-demand lookups spend at most their share of the day's calls (what the poller leaves aside), counted for every process together.
    const allowance = new OnDemandAllowance(budget, config.BUDGET_RESERVE, now, topology.sharedAllowance);
    const shared = topology.sharedCache ? { shared: topology.sharedCache } : {};
    const cache = new OnDemandCache({
      caller: lookupCaller(up.client, allowance, metrics),
      now,
      sessions,
      onLookup: (r) => metrics.cache.inc({ result: r }),
      ...shared,
    });
    const clockMode = config.MARKET_CLOCK ?? (up.sim && config.SIM_CLOCK !== 'kst' ? 'always' : 'kst');
    const poller = new Poller({
      caller: up.client,
      budget,
      store: topology.pollStore,
      bus: topology.bus,
      demand: topology.pollDemand,
      mayPoll: () => topology.mayPoll(),
      clock: marketClock(clockMode, sessions, now),
      logger: logger.child({ component: 'poller' }),
      metrics,
      families,
      baseMs: config.POLL_BASE_MS,
      idleGraceMs: config.IDLE_GRACE_MS,
      roundHoldMs: config.ROUND_HOLD_MS,
      reserve: config.BUDGET_RESERVE,
      // The lookups' share of the day, less what they spent, is left to them.
      lookupsLeft: () => {
        const cap = allowance.cap;
        return cap === null ? null : Math.max(0, cap - allowance.used);
      },
      lastRefresh: (channel, market) => journal?.lastRefresh(channel, market) ?? topology.restored?.loaded.feeds.get(`${channel}.${market}`)?.ok,
      ...opts.poller,
    });
    topology.attach(poller);
    undo.push(() => poller.stop());
    let journal: StateJournal | undefined;
    if (config.STATE === 'on') {
      journal = new StateJournal(
        { dir: stateDir(config), store: topology.store, logger: logger.child({ component: 'state' }), now, enabled: () => topology.mayPoll() },
        topology.bus,
        topology.restored?.loaded.feeds,
      );
      await journal.start();
      const j = journal;
      undo.push(() => j.stop());
    }
    const recording = startRecording(config, { store: topology.store, bus: topology.bus, metrics, logger, now, enabled: () => topology.mayPoll() });
    if (recording) undo.push(() => recording.recorder.stop());
    // A request head must arrive whole within HTTP_HEADERS_TIMEOUT_MS (checked every second, not Node's 30 s), and the
    // process holds at most its WebSocket cap plus a margin of sockets, below its open-file limit.
    const server = createServer({
      headersTimeout: config.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeout: Math.max(config.HTTP_HEADERS_TIMEOUT_MS, 30_000),
      connectionsCheckingInterval: 1000,
      // Answered by the handler, with a coded body like every other refusal (Node's own answer is a bare 400).
      requireHostHeader: false,
    });
    server.maxConnections = config.MAX_CONNECTIONS + HTTP_SOCKET_MARGIN;
    server.on('clientError', onClientError);
    server.on('connect', onConnect);
    const auth = authenticator(config);
    const lookups = new LookupLimits({
      perMinute: config.GETS_PER_MINUTE,
      clientShare: config.LOOKUP_CLIENT_SHARE,
      shareCap: () => allowance.cap,
      resetAt: () => budget.resetAt,
      now,
    });
    const symbols = new SymbolDirectory();
    const gateway = new Gateway({
      server,
      store: topology.store,
      bus: topology.bus,
      demand: topology.demand,
      symbols,
      onDemand: cache,
      lookups,
      ...(recording ? { replay: recording.replay } : {}),
      calendar,
      sessions,
      alwaysOpen: clockMode === 'always',
      metrics,
      families,
      statuses: () => topology.statuses(),
      logger: logger.child({ component: 'gateway' }),
      ...(auth ? { auth } : {}),
      limits: {
        maxTopics: config.MAX_TOPICS,
        maxWildcards: config.MAX_WILDCARDS,
        maxMessagesPerSecond: config.MAX_MESSAGES_PER_SECOND,
        maxPayloadBytes: config.MAX_PAYLOAD_BYTES,
        getsPerMinute: config.GETS_PER_MINUTE,
      },
      heartbeatMs: config.HEARTBEAT_MS,
      maxConnectionsPerIp: config.MAX_CONNECTIONS_PER_IP,
      maxConnections: config.MAX_CONNECTIONS,
      maxReplays: config.MAX_REPLAYS,
      maxReplaysPerIp: config.MAX_REPLAYS_PER_IP,
      trustProxy: config.TRUST_PROXY,
      perMessageDeflate: config.PERMESSAGE_DEFLATE,
      directWrite: config.WS_DIRECT_WRITE,
      slow: { conflateBytes: config.SLOW_CONFLATE_BYTES, closeBytes: config.SLOW_CLOSE_BYTES, replyBytes: config.SLOW_REPLY_BYTES },
      now,
    });
    undo.push(() => gateway.close());
    const parts: BridgeParts = {
      config,
      logger,
      metrics,
      topology,
      budget,
      calendar,
      sessions,
      symbols,
      upstream: up.client,
      sim: up.sim,
      cache,
      allowance,
      poller,
      gateway,
      server,
      journal,
      dataLock,
      recorder: recording?.recorder,
      auth,
    };
    const startedAt = now();
    const staticDir = opts.staticDir ?? defaultStaticDir();
    server.on(
      'request',
      createHttpHandler({
        metrics,
        symbols,
        onDemand: cache,
        lookups,
        ...(recording ? { recordings: recording.source } : {}),
        ready: () => MARKETS.every((m) => symbols.loaded(m)),
        status: () => statusBody(parts, startedAt, now),
        gateway,
        ...(auth ? { auth } : {}),
        ...(staticDir ? { staticDir } : {}),
        apiPerMinute: config.API_REQUESTS_PER_MINUTE,
        infoPerMinute: config.INFO_REQUESTS_PER_MINUTE,
        ...(config.ALLOWED_ORIGINS ? { allowedOrigins: config.ALLOWED_ORIGINS } : {}),
        sourceMaps: config.SOURCE_MAPS,
        trustProxy: config.TRUST_PROXY,
        logger: logger.child({ component: 'http' }),
        now,
      }),
    );
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.PORT, config.HOST, () => {
        server.off('error', reject);
        resolve();
      });
    });
    undo.push(() => new Promise<void>((r) => server.close(() => r())));
    const port = (server.address() as AddressInfo).port;
    const host = config.HOST === '0.0.0.0' || config.HOST === '::' ? '127.0.0.1' : config.HOST;
    const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
    const address: BridgeAddress = { url, wsUrl: `${url.replace(/^http/, 'ws')}/ws`, port };
    // The symbol lists are the bridge's own need, not a client's lookup: outside the on-demand share, shared in a cluster.
    const symbolCache = new OnDemandCache({ caller: { call: (id, p) => up.client.call(id, p) }, now, sessions, ...shared });
    const loader = new SymbolLoader({ symbols, cache: symbolCache, families, logger, now, ...(config.STATE === 'on' ? { dir: stateDir(config) } : {}) });
    const names = config.NAMES_PER_DAY > 0 ? englishNames(config, symbols, cache, topology.demand, families, logger, now) : undefined;
    const bridge = new Bridge(parts, address, up.origin, startedAt, now, loader, names);
    poller.start();
    loader.start();
    names?.start();
    logger.info(
      { url, page: `${url}/`, ws: address.wsUrl, market: marketLine(clockMode, sessions, now()), clock: clockMode, families, topology: topology.kind },
      'krx-bridge listening',
    );
    return bridge;
  } catch (err) {
    for (const step of undo.reverse()) await Promise.resolve(step()).catch(() => undefined);
    throw err;
  }
}

/** A running bridge: its parts, all started. */
export class Bridge implements BridgeParts {
  readonly config: Config;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly topology: Topology;
  readonly budget: Budget;
  readonly calendar: KrxCalendar;
  readonly sessions: Sessions;
  readonly symbols: SymbolDirectory;
  readonly upstream: UpstreamClient;
  readonly sim: Simulator | undefined;
  readonly cache: OnDemandCache;
  readonly allowance: OnDemandAllowance;
  readonly poller: Poller;
  readonly gateway: Gateway;
  readonly server: Server;
  readonly journal: StateJournal | undefined;
  readonly dataLock: DataDirLock | undefined;
  readonly recorder: Recorder | undefined;
  readonly auth: Authenticator | undefined;
  private stopping: Promise<void> | undefined;

  /** A bridge of started parts (`createBridge` makes one). */
  constructor(
    parts: BridgeParts,
    /** Where it listens. */
    readonly address: BridgeAddress,
    /** Origin of the upstream in use (the simulator's loopback URL when simulated); never shown to clients. */
    readonly upstreamOrigin: string,
    private readonly startedAt: number,
    private readonly now: () => number,
    private readonly loader: SymbolLoader,
    private readonly names: EnglishNames | undefined,
  ) {
    this.config = parts.config;
    this.logger = parts.logger;
    this.metrics = parts.metrics;
    this.topology = parts.topology;
    this.budget = parts.budget;
    this.calendar = parts.calendar;
    this.sessions = parts.sessions;
    this.symbols = parts.symbols;
    this.upstream = parts.upstream;
    this.sim = parts.sim;
    this.cache = parts.cache;
    this.allowance = parts.allowance;
    this.poller = parts.poller;
    this.gateway = parts.gateway;
    this.server = parts.server;
    this.journal = parts.journal;
    this.dataLock = parts.dataLock;
    this.recorder = parts.recorder;
    this.auth = parts.auth;
  }

  /** The state clients are served from. */
  get store(): StateStore {
    return this.topology.store;
  }

  /** The bus between the poller and the gateway. */
  get bus(): Bus {
    return this.topology.bus;
  }

  /** This process's subscriber demand. */
  get demand(): Demand {
    return this.topology.demand;
  }

  /**
   * Drains and stops: clients get close 1001, the poller stops, in-flight
   * HTTP requests finish, then the upstream client and simulator close.
   */
  stop(): Promise<void> {
    this.stopping ??= this.shutdown();
    return this.stopping;
  }

  /**
   * Re-reads `AUTH_TOKENS_FILE` (the CLI does on SIGHUP): new connections
   * and requests are checked against the new tokens at once, and sessions
   * whose token was removed are closed with 4001 (`token revoked`); sessions
   * on tokens still listed keep the limits they started with. A file that
   * cannot be read or parsed changes nothing and is logged as an error
   * (with the line number, never a token). Returns whether it was applied.
   */
  reloadTokens(): boolean {
    if (!this.auth || !this.config.AUTH_TOKENS_FILE) {
      this.logger.warn('token file not re-read: AUTH_TOKENS_FILE is not set');
      return false;
    }
    let tokens: number;
    try {
      tokens = this.auth.reload();
    } catch (err) {
      this.logger.error({ err: (err as Error).message }, 'token file not re-read; the previous tokens stay');
      return false;
    }
    const closed = this.gateway.revokeDropped();
    this.logger.info({ tokens, closed }, 'token file re-read');
    return true;
  }

  /** The body of `/status`: upstream, budget, feeds, symbols (never the API key, nor the upstream's address). */
  status(): Promise<Record<string, unknown>> {
    return statusBody(this, this.startedAt, this.now);
  }

  private async shutdown(): Promise<void> {
    try {
      await this.stopParts();
    } finally {
      // Whatever failed on the way, the directory is free for the next start.
      this.dataLock?.release();
    }
    this.logger.info('krx-bridge stopped');
  }

  private async stopParts(): Promise<void> {
    this.loader.stop();
    this.names?.stop();
    this.poller.stop();
    await this.journal?.stop();
    await this.recorder?.stop();
    // The lease goes first, so another process takes over while this one drains its clients.
    await this.topology.stop().catch((err: unknown) => this.logger.warn({ err: (err as Error).message }, 'cluster stop failed'));
    await this.gateway.close();
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeIdleConnections();
    });
    await this.upstream.close();
    await this.topology.close();
    await this.sim?.stop();
  }
}

/** The body of `/status` of a bridge's parts: upstream, budget, feeds, symbols (never the API key, nor the upstream's address). */
async function statusBody(p: BridgeParts, startedAt: number, now: () => number): Promise<Record<string, unknown>> {
  p.budget.refresh(now());
  const b = p.budget.snapshot();
  const families = { kospi: p.config.KOSPI_FAMILY, kosdaq: p.config.KOSDAQ_FAMILY };
  const cluster = p.topology.info();
  return {
    version: packageVersion(),
    epoch: p.topology.store.epoch,
    uptimeS: Math.round((now() - startedAt) / 1000),
    upstream: { simulated: p.sim !== undefined, families, calls: p.poller.calls },
    budget: { ...b, onDemand: { used: p.allowance.used, cap: p.allowance.cap } },
    feeds: p.topology.statuses().map((s) => {
      const f = p.poller.feed(s.channel, s.market);
      return { ...s, calls: f?.calls ?? 0, lastOkTs: f?.lastOkTs ?? null };
    }),
    symbols: Object.fromEntries(MARKETS.map((m) => [m, p.symbols.list(m).length])),
    topicsHeld: p.topology.store.size,
    ...(p.journal ? { state: { ...p.journal.info(), restored: restoredInfo(p.topology.restored) } } : {}),
    ...(p.recorder ? { recorder: await p.recorder.info() } : {}),
    ...(cluster ? { cluster } : {}),
  };
}

/** Fills in English names for `/symbols` from master data, in the background (state/names.ts), for the codes clients subscribe to. */
function englishNames(
  config: Config,
  symbols: SymbolDirectory,
  cache: OnDemandCache,
  demand: Demand,
  families: Families,
  logger: Logger,
  now: () => number,
): EnglishNames {
  return new EnglishNames({
    symbols,
    markets: ['kospi', 'kosdaq'],
    perDay: config.NAMES_PER_DAY,
    logger: logger.child({ component: 'names' }),
    now,
    dayEnd: nextReset,
    lookup: async (market, code) => {
      const id = families[market as Market] === 'v2' ? 'v2.stocks.master' : 'v3.closed.master';
      const r = await cache.get(id, { marketcode: market, issuecode: code });
      const name = r.data.isuEngNm;
      return typeof name === 'string' ? name : undefined;
    },
    wanted: function* () {
      for (const market of MARKETS) for (const channel of CHANNELS) for (const code of demand.codes(channel, market)) yield [market, code] as const;
    },
  });
}

/** Whether the market is open now, or when it opens, for the first log lines. */
function marketLine(mode: 'kst' | 'always', sessions: Sessions, now: number): string {
  if (mode === 'always') return 'open at every hour (MARKET_CLOCK=always)';
  const phase = sessions.phase(now);
  if (phase !== 'closed') return `open (${phase})`;
  const at = new Date(sessions.opensAt(now) + 9 * 3600_000).toISOString();
  return `closed; opens ${at.slice(0, 10)} ${at.slice(11, 16)} KST`;
}

function authenticator(c: Config): Authenticator | undefined {
  if (!c.AUTH_TOKENS && !c.AUTH_TOKENS_FILE && !c.AUTH_JWT_SECRET && !c.ALLOWED_ORIGINS) return undefined;
  return new Authenticator({
    ...(c.AUTH_TOKENS ? { tokens: c.AUTH_TOKENS } : {}),
    ...(c.AUTH_TOKENS_FILE ? { tokenFile: c.AUTH_TOKENS_FILE } : {}),
    ...(c.AUTH_JWT_SECRET ? { jwtSecret: c.AUTH_JWT_SECRET } : {}),
    ...(c.ALLOWED_ORIGINS ? { origins: c.ALLOWED_ORIGINS } : {}),
  });
}

/** The password in a Redis URL, if any (kept out of logs). */
function redisPassword(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    return decodeURIComponent(new URL(url).password) || undefined;
  } catch {
    return undefined;
  }
}

/** `public/` beside the built code (dist/public), when the demo page has been built. */
function defaultStaticDir(): string | undefined {
  const dir = fileURLToPath(new URL('../public/', import.meta.url));
  return existsSync(dir) ? dir : undefined;
}
