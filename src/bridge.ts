import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { Config } from './config/config.js';
import { createLogger, type Logger } from './log.js';
import { Metrics } from './metrics/metrics.js';
import { LocalBus, type Bus, type FeedStatus } from './bus/bus.js';
import { StateStore } from './state/store.js';
import { StatusBoard } from './state/status.js';
import { SymbolDirectory } from './state/symbols.js';
import { Demand } from './poller/demand.js';
import { Poller } from './poller/poller.js';
import { marketClock } from './market/clock.js';
import { EXAM_DAYS, Sessions } from './market/session.js';
import { loadState, type LoadedState } from './persist/load.js';
import { restoreInto } from './persist/restore.js';
import { StateJournal } from './persist/journal.js';
import type { Families } from './poller/feeds.js';
import { Budget } from './upstream/budget.js';
import { UpstreamClient } from './upstream/client.js';
import { OnDemandCache, type Spender } from './upstream/cache.js';
import { requireRows } from './upstream/errors.js';
import { KrxCalendar, coveredYears, operatorHolidays } from './market/calendar.js';
import { LookupLimits } from './access/lookups.js';
import { OnDemandAllowance } from './upstream/allowance.js';
import { Gateway } from './gateway/gateway.js';
import { Authenticator } from './access/auth.js';
import { packageVersion } from './version.js';
import { createHttpHandler } from './http/handler.js';
import { onClientError } from './http/client-errors.js';
import { Simulator, type SimulatorOptions } from './sim/index.js';
import { CHANNELS, MARKETS, type Market } from './protocol/constants.js';
import { EnglishNames } from './state/names.js';
import { Recorder } from './recorder/recorder.js';
import { ReplayServer } from './replay/server.js';
import type { Damage } from './recorder/reader.js';
import type { RecordingsSource } from './http/recordings.js';
import { slowPolicy } from './gateway/slow.js';
import { nextReset } from './upstream/budget.js';
import { endpoint } from './upstream/catalogue.js';
import type { Row } from './upstream/normalise.js';
import { ClusterNode } from './cluster/node.js';

/**
 * The bridge: upstream client (or the built-in simulator), poller, state,
 * bus, gateway and HTTP routes on one port, wired together. `start()` to run,
 * `stop()` to drain and shut down. With REDIS_URL set, the process joins a
 * cluster (src/cluster): one process polls, every process serves. See
 * README.md and docs/DEPLOYMENT.md.
 */

/** Options of `Bridge` beyond the configuration. */
export interface BridgeOptions {
  /** Logger; default one built from LOG_LEVEL, writing to stdout. */
  readonly logger?: Logger;
  /** Overrides of the built-in simulator's options (tests). */
  readonly simulator?: Partial<SimulatorOptions>;
  /** Directory of the demo page; default `public/` beside the built code, if it exists. */
  readonly staticDir?: string;
  /** Clock, ms epoch; default Date.now. */
  readonly now?: () => number;
  /** Poller retry timings (tests): after a 401, default 60,000 ms; longest backoff, default 30,000 ms. */
  readonly poller?: { readonly authRetryMs?: number; readonly maxBackoffMs?: number };
}

/** Where a started bridge listens. */
export interface BridgeAddress {
  /** HTTP base URL, e.g. `http://127.0.0.1:8080`. */
  readonly url: string;
  /** WebSocket URL, e.g. `ws://127.0.0.1:8080/ws`. */
  readonly wsUrl: string;
  readonly port: number;
}

const SYMBOL_RETRY_MS = 60_000;
/** Sockets the HTTP server takes beyond MAX_CONNECTIONS: plain requests, and upgrades it will refuse with a status. */
const HTTP_SOCKET_MARGIN = 512;

/** The whole bridge in one process. */
export class Bridge {
  /** Its logger. */
  readonly logger: Logger;
  /** Its metrics registry. */
  readonly metrics = new Metrics();
  /** Topic state (latest rows, seqs, replay rings); in cluster mode the mirror of the shared state. */
  readonly store: StateStore;
  /** The bus between poller and gateway (through Redis in cluster mode). */
  readonly bus: Bus;
  /** This process's cluster membership, when REDIS_URL is set. */
  readonly cluster: ClusterNode | undefined;
  /** Subscriber demand. */
  readonly demand = new Demand();
  /** Latest feed states. */
  readonly statuses: StatusBoard;
  /** Listed symbols per market. */
  readonly symbols = new SymbolDirectory();
  /** Daily call budget. */
  readonly budget = new Budget();
  /** What the state files held at start (undefined when STATE=off or in cluster mode). */
  readonly restored: LoadedState | undefined;
  private readonly restoredCounts: { restored: number; rejected: string[] } | undefined;
  /** The state journal (after start; undefined when STATE=off). */
  journal: StateJournal | undefined;
  /** The KRX calendar (public holidays, the year-end closure, MARKET_HOLIDAYS). */
  readonly calendar: KrxCalendar;
  /** The KRX sessions on that calendar (late opens included). */
  readonly sessions: Sessions;
  /** The built-in simulator, when no UPSTREAM_URL is configured. */
  sim: Simulator | undefined;
  /** The upstream client (after start). */
  upstream: UpstreamClient | undefined;
  /** On-demand cache (after start). */
  cache: OnDemandCache | undefined;
  /** Symbol lists through the cluster's shared cache, outside the on-demand share (cluster only). */
  private symbolCache: OnDemandCache | undefined;
  /** The on-demand share of the daily budget (after start). */
  allowance: OnDemandAllowance | undefined;
  /** Access control, when configured (after start). */
  private auth: Authenticator | undefined;
  /** The poller (after start). */
  poller: Poller | undefined;
  /** The gateway (after start). */
  gateway: Gateway | undefined;
  /** The HTTP server (after start). */
  server: Server | undefined;
  private readonly families: Families;
  private readonly now: () => number;
  private readonly startedAt: number;
  private symbolTimer: NodeJS.Timeout | undefined;
  private stopping: Promise<void> | undefined;
  private names: EnglishNames | undefined;
  /** The recorder (after start; undefined when RECORD=off). */
  recorder: Recorder | undefined;
  private upstreamUrl = '';

  /** A bridge for `config`; nothing runs until `start()`. */
  constructor(
    readonly config: Config,
    private readonly opts: BridgeOptions = {},
  ) {
    this.now = opts.now ?? Date.now;
    this.startedAt = this.now();
    const secrets = [config.UPSTREAM_API_KEY, config.AUTH_JWT_SECRET, redisPassword(config.REDIS_URL), ...(config.AUTH_TOKENS ?? [])].filter(
      (s): s is string => !!s,
    );
    this.logger = opts.logger ?? createLogger({ level: config.LOG_LEVEL, secrets, base: { app: 'krx-bridge' }, format: config.LOG_FORMAT });
    // The state files: the last state of every topic, loaded before anything can serve it. In a cluster Redis holds it.
    this.restored = config.STATE === 'on' && !config.REDIS_URL ? loadState(this.stateDir, this.now()) : undefined;
    this.store = new StateStore({ ringSize: config.RING_SIZE, ...(this.restored?.cleanEpoch ? { epoch: this.restored.cleanEpoch } : {}) });
    this.restoredCounts = this.restored ? restoreInto(this.store, this.restored) : undefined;
    if (this.restored) {
      const r = this.restored;
      this.logger.info({ topics: this.restoredCounts!.restored, clean: r.cleanEpoch !== undefined, dir: this.stateDir }, 'state loaded');
      for (const p of r.problems) this.logger.warn({ file: p.file, line: p.line, reason: p.reason, setAside: p.setAside }, 'state file damaged');
      if (this.restoredCounts!.rejected.length) this.logger.warn({ topics: this.restoredCounts!.rejected.length }, 'state rows left out: checksum mismatch');
    }
    this.calendar = new KrxCalendar(operatorHolidays(config.MARKET_HOLIDAYS), (year) =>
      this.logger.warn({ year, covered: coveredYears() }, 'no public holidays known for this year: only weekends, the year-end closure and MARKET_HOLIDAYS apply (update @hyunbinseo/holidays-kr)'),
    );
    this.sessions = new Sessions(this.calendar, [...EXAM_DAYS, ...operatorHolidays(config.MARKET_EXAM_DAYS)]);
    this.cluster = config.REDIS_URL ? this.clusterNode(config.REDIS_URL) : undefined;
    this.bus = this.cluster?.bus ?? new LocalBus();
    this.statuses = new StatusBoard(this.bus);
    this.families = { kospi: config.KOSPI_FAMILY, kosdaq: config.KOSDAQ_FAMILY };
  }

  /** Starts the simulator (if needed), upstream client, poller, gateway and HTTP server. */
  async start(): Promise<BridgeAddress> {
    const c = this.config;
    const { baseUrl, apiKey } = await this.upstreamEndpoint();
    this.upstreamUrl = new URL(baseUrl).origin;
    const upstream = new UpstreamClient({
      baseUrl,
      apiKey,
      timeoutMs: c.UPSTREAM_TIMEOUT_MS,
      retries: c.UPSTREAM_RETRIES,
      connections: c.UPSTREAM_CONNECTIONS,
      logger: this.logger.child({ component: 'upstream' }),
      budget: this.budget,
      now: this.now,
    });
    this.upstream = upstream;
    this.observeUpstream(upstream);
    const cluster = this.cluster;
    if (cluster) await cluster.start();
    const shared = cluster ? { shared: cluster.cache } : {};
    // On-demand lookups spend at most their share of the day's calls (what the poller leaves aside).
    // In a cluster the share is counted in Redis, for all processes together.
    const allowance = new OnDemandAllowance(this.budget, c.BUDGET_RESERVE, this.now, cluster?.allowance);
    this.allowance = allowance;
    // The share counts the HTTP attempts actually made (retries too; a call refused before any request, none),
    // and so does the asking client's part of it.
    const caller = {
      call: async (id: string, params: Record<string, unknown>, spend?: Spender) => {
        const ticket = await allowance.take();
        let attempts = 0;
        try {
          const r = await upstream.call(id, params, { onAttempt: () => void attempts++ });
          // Every row dropped is schema drift, answered as an error: never an empty success.
          requireRows(r, id);
          return r;
        } catch (err) {
          if ((err as { drift?: unknown }).drift !== undefined) this.metrics.lookupDrift.inc({ endpoint: id });
          throw err;
        } finally {
          allowance.settle(ticket, attempts);
          spend?.spent(attempts);
        }
      },
    };
    const lookups = new LookupLimits({
      perMinute: c.GETS_PER_MINUTE,
      clientShare: c.LOOKUP_CLIENT_SHARE,
      shareCap: () => allowance.cap,
      resetAt: () => this.budget.resetAt,
      now: this.now,
    });
    const cache = new OnDemandCache({ caller, now: this.now, sessions: this.sessions, onLookup: (r) => this.metrics.cache.inc({ result: r }), ...shared });
    this.cache = cache;
    // Symbol lists are the bridge's own need, not a client's lookup: shared in a cluster, never capped.
    this.symbolCache = cluster
      ? new OnDemandCache({ caller: { call: (id, p) => upstream.call(id, p) }, now: this.now, sessions: this.sessions, shared: cluster.cache })
      : undefined;
    const clockMode = c.MARKET_CLOCK ?? (this.sim && c.SIM_CLOCK === 'kst' ? 'kst' : this.sim ? 'always' : 'kst');
    this.poller = new Poller({
      caller: upstream,
      budget: this.budget,
      store: cluster?.pollStore ?? this.store,
      bus: this.bus,
      demand: cluster?.union ?? this.demand,
      ...(cluster ? { mayPoll: () => cluster.mayPoll() } : {}),
      clock: marketClock(clockMode, this.sessions, this.now),
      logger: this.logger.child({ component: 'poller' }),
      metrics: this.metrics,
      families: this.families,
      baseMs: c.POLL_BASE_MS,
      idleGraceMs: c.IDLE_GRACE_MS,
      reserve: c.BUDGET_RESERVE,
      lastRefresh: (channel, market) => this.journal?.lastRefresh(channel, market) ?? this.restored?.feeds.get(`${channel}.${market}`)?.ok,
      ...this.opts.poller,
    });
    cluster?.attach(this.poller);
    if (c.STATE === 'on') {
      this.journal = new StateJournal(
        { dir: this.stateDir, store: this.store, logger: this.logger.child({ component: 'state' }), now: this.now, ...(cluster ? { enabled: () => cluster.mayPoll() } : {}) },
        this.bus,
        this.restored?.feeds,
      );
      await this.journal.start();
    }
    // A request head must arrive whole within HTTP_HEADERS_TIMEOUT_MS (checked every second, not Node's 30 s), and the
    // process holds at most its WebSocket cap plus a margin of sockets, below its open-file limit.
    const server = createServer({
      headersTimeout: c.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeout: Math.max(c.HTTP_HEADERS_TIMEOUT_MS, 30_000),
      connectionsCheckingInterval: 1000,
    });
    server.maxConnections = c.MAX_CONNECTIONS + HTTP_SOCKET_MARGIN;
    server.on('clientError', onClientError);
    this.server = server;
    const recordings = c.RECORD === 'on' ? this.startRecorder(join(c.DATA_DIR, 'recordings')) : undefined;
    const auth = this.authenticator();
    this.auth = auth;
    this.gateway = new Gateway({
      server,
      store: this.store,
      bus: this.bus,
      demand: this.demand,
      symbols: this.symbols,
      onDemand: cache,
      lookups,
      ...(recordings ? { replay: recordings.replay } : {}),
      calendar: this.calendar,
      metrics: this.metrics,
      families: this.families,
      statuses: () => this.feedStates(),
      logger: this.logger.child({ component: 'gateway' }),
      ...(auth ? { auth } : {}),
      limits: {
        maxTopics: c.MAX_TOPICS,
        maxWildcards: c.MAX_WILDCARDS,
        maxMessagesPerSecond: c.MAX_MESSAGES_PER_SECOND,
        maxPayloadBytes: c.MAX_PAYLOAD_BYTES,
        getsPerMinute: c.GETS_PER_MINUTE,
      },
      heartbeatMs: c.HEARTBEAT_MS,
      maxConnectionsPerIp: c.MAX_CONNECTIONS_PER_IP,
      maxConnections: c.MAX_CONNECTIONS,
      trustProxy: c.TRUST_PROXY,
      perMessageDeflate: c.PERMESSAGE_DEFLATE,
      slow: {
        conflateBytes: c.SLOW_CONFLATE_BYTES,
        closeBytes: c.SLOW_CLOSE_BYTES,
        replyBytes: c.SLOW_REPLY_BYTES,
      },
      now: this.now,
    });
    const staticDir = this.opts.staticDir ?? defaultStaticDir();
    server.on(
      'request',
      createHttpHandler({
        metrics: this.metrics,
        symbols: this.symbols,
        onDemand: cache,
        lookups,
        ...(recordings ? { recordings: recordings.source } : {}),
        ready: () => MARKETS.every((m) => this.symbols.loaded(m)),
        status: () => this.status(),
        gateway: this.gateway,
        ...(auth ? { auth } : {}),
        ...(staticDir ? { staticDir } : {}),
        apiPerMinute: c.API_REQUESTS_PER_MINUTE,
        infoPerMinute: c.INFO_REQUESTS_PER_MINUTE,
        ...(c.ALLOWED_ORIGINS ? { allowedOrigins: c.ALLOWED_ORIGINS } : {}),
        sourceMaps: c.SOURCE_MAPS,
        trustProxy: c.TRUST_PROXY,
        logger: this.logger.child({ component: 'http' }),
        now: this.now,
      }),
    );
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(c.PORT, c.HOST, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.poller.start();
    void this.loadSymbols();
    if (c.NAMES_PER_DAY > 0) this.startNames(cache);
    const port = (server.address() as AddressInfo).port;
    const host = c.HOST === '0.0.0.0' || c.HOST === '::' ? '127.0.0.1' : c.HOST;
    const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
    this.logger.info(
      { url, page: `${url}/`, ws: `${url.replace(/^http/, 'ws')}/ws`, market: this.marketLine(clockMode), clock: clockMode, families: this.families },
      'krx-bridge listening',
    );
    return { url, wsUrl: `${url.replace(/^http/, 'ws')}/ws`, port };
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
    const closed = this.gateway?.revokeDropped() ?? 0;
    this.logger.info({ tokens, closed }, 'token file re-read');
    return true;
  }

  /** Origin of the upstream in use (the built-in simulator's loopback URL when simulated). */
  get upstreamOrigin(): string {
    return this.upstreamUrl;
  }

  /**
   * Starts the recorder and makes what serves its recordings: the replay
   * server (`/ws/replay`) and the source of `/recordings`. RECORD=off
   * builds none of them, so both answer `recording_off`.
   */
  private startRecorder(dir: string): { replay: ReplayServer; source: RecordingsSource } {
    const c = this.config;
    const cluster = this.cluster;
    const m = this.metrics;
    const recorder = new Recorder(
      {
        dir,
        store: this.store,
        logger: this.logger.child({ component: 'recorder' }),
        keepDays: c.RECORD_DAYS,
        now: this.now,
        onWrite: (bytes) => m.recordedBytes.inc(bytes),
        onDrop: (reason, n) => m.recordDropped.inc({ reason }, n),
        ...(cluster ? { enabled: () => cluster.mayPoll() } : {}),
      },
      this.bus,
    );
    this.recorder = recorder;
    recorder.start();
    const log = this.logger.child({ component: 'replay' });
    const onDamage = (d: Damage) => {
      m.recordDamage.inc();
      log.warn({ file: d.file, line: d.line, reason: d.reason }, 'recording damaged; read up to the damage');
    };
    const replay = new ReplayServer({
      dir,
      logger: log,
      maxPayloadBytes: c.MAX_PAYLOAD_BYTES,
      heartbeatMs: c.HEARTBEAT_MS,
      server: `krx-bridge/${packageVersion()}`,
      slow: slowPolicy({ conflateBytes: c.SLOW_CONFLATE_BYTES, closeBytes: c.SLOW_CLOSE_BYTES, replyBytes: c.SLOW_REPLY_BYTES }),
      live: recorder.live,
      onDamage,
      onClose: (code) => m.closes.inc({ code: String(code) }),
      onSlow: (step) => m.slowConsumer.inc({ step }),
    });
    return { replay, source: { dir, live: recorder.live, onDamage } };
  }

  /** The body of `/status`: upstream, budget, feeds, symbols (never the API key). */
  async status(): Promise<Record<string, unknown>> {
    const b = this.budget.snapshot();
    return {
      version: packageVersion(),
      epoch: this.store.epoch,
      uptimeS: Math.round((this.now() - this.startedAt) / 1000),
      // Not the upstream's address: /status is public, and the address is the operator's business.
      upstream: { simulated: this.sim !== undefined, families: this.families, calls: this.poller?.calls ?? 0 },
      budget: { ...b, onDemand: { used: this.allowance?.used ?? 0, cap: this.allowance?.cap ?? null } },
      feeds: this.feedStates().map((s) => {
        const f = this.poller?.feed(s.channel, s.market);
        return { ...s, calls: f?.calls ?? 0, lastOkTs: f?.lastOkTs ?? null };
      }),
      symbols: Object.fromEntries(MARKETS.map((m) => [m, this.symbols.list(m).length])),
      topicsHeld: this.store.size,
      ...(this.journal ? { state: { ...this.journal.info(), restored: this.restoredInfo() } } : {}),
      ...(this.recorder ? { recorder: await this.recorder.info() } : {}),
      ...(this.cluster ? { cluster: this.cluster.info() } : {}),
    };
  }

  /** Fills in English names for `/symbols` from master data, in the background (state/names.ts). */
  private startNames(cache: OnDemandCache): void {
    const names = new EnglishNames({
      symbols: this.symbols,
      markets: ['kospi', 'kosdaq'],
      perDay: this.config.NAMES_PER_DAY,
      logger: this.logger.child({ component: 'names' }),
      now: this.now,
      dayEnd: nextReset,
      lookup: async (market, code) => {
        const id = this.families[market as Market] === 'v2' ? 'v2.stocks.master' : 'v3.closed.master';
        const r = await cache.get(id, { marketcode: market, issuecode: code });
        const name = r.data.isuEngNm;
        return typeof name === 'string' ? name : undefined;
      },
      wanted: () => this.wantedCodes(),
    });
    names.start();
    this.names = names;
  }

  /** The codes clients subscribe to now, by market (explicit codes of every channel). */
  private *wantedCodes(): Iterable<readonly [string, string]> {
    for (const market of MARKETS) for (const channel of CHANNELS) for (const code of this.demand.codes(channel, market)) yield [market, code];
  }

  /** Whether the market is open now, or when it opens, for the first log lines. */
  private marketLine(mode: 'kst' | 'always'): string {
    if (mode === 'always') return 'open at every hour (MARKET_CLOCK=always)';
    const now = this.now();
    const phase = this.sessions.phase(now);
    if (phase !== 'closed') return `open (${phase})`;
    const at = new Date(this.sessions.opensAt(now) + 9 * 3600_000).toISOString();
    return `closed; opens ${at.slice(0, 10)} ${at.slice(11, 16)} KST`;
  }

  /** What the start restored from the state files, for `/status`. */
  private restoredInfo(): Record<string, unknown> | null {
    const r = this.restored;
    if (!r) return null;
    const problems = r.problems.map((p) => `${p.file}:${p.line}: ${p.reason}${p.setAside ? ` (set aside as ${p.setAside})` : ''}`);
    for (const key of this.restoredCounts?.rejected ?? []) problems.push(`${key}: checksum of the written row does not match; left out`);
    return { topics: this.restoredCounts?.restored ?? 0, clean: r.cleanEpoch !== undefined, problems };
  }

  /** The state directory under DATA_DIR. */
  private get stateDir(): string {
    return join(this.config.DATA_DIR, 'state');
  }

  /** Current feed states: the poller's, or in cluster mode the leader's as shared (`degraded` while Redis is away). */
  private feedStates(): FeedStatus[] {
    return this.cluster?.statuses() ?? this.poller?.statuses() ?? this.statuses.all();
  }

  private clusterNode(url: string): ClusterNode {
    const c = this.config;
    return new ClusterNode({
      url,
      prefix: c.REDIS_PREFIX,
      leaseMs: c.LEASE_MS,
      baseMs: c.POLL_BASE_MS,
      streamMaxLen: c.REDIS_STREAM_MAXLEN,
      lockMs: c.UPSTREAM_TIMEOUT_MS * (c.UPSTREAM_RETRIES + 1) + 1000,
      store: this.store,
      demand: this.demand,
      budget: this.budget,
      metrics: this.metrics,
      logger: this.logger.child({ component: 'cluster' }),
      now: this.now,
    });
  }

  private async upstreamEndpoint(): Promise<{ baseUrl: string; apiKey: string }> {
    const c = this.config;
    if (c.UPSTREAM_URL && c.UPSTREAM_API_KEY) return { baseUrl: c.UPSTREAM_URL, apiKey: c.UPSTREAM_API_KEY };
    const apiKey = randomBytes(16).toString('hex');
    this.sim = new Simulator({
      apiKey,
      clock: c.SIM_CLOCK,
      seed: c.SIM_SEED,
      dailyLimit: c.SIM_DAILY_LIMIT,
      sessions: this.sessions,
      logger: this.logger.child({ component: 'sim' }),
      ...this.opts.simulator,
    });
    this.logger.info({ clock: c.SIM_CLOCK, seed: c.SIM_SEED }, 'no UPSTREAM_URL set: starting the built-in simulator on a loopback port');
    const { url } = await this.sim.start({ port: 0, host: '127.0.0.1' });
    return { baseUrl: url, apiKey: this.opts.simulator?.apiKey ?? apiKey };
  }

  private observeUpstream(upstream: UpstreamClient): void {
    const m = this.metrics;
    upstream.on('call', (e) => {
      if (e.attempts === 0) return;
      m.upstreamCalls.inc({ endpoint: e.endpointId, outcome: e.code ?? 'ok' }, e.attempts);
      m.upstreamLatency.observe({ endpoint: e.endpointId }, e.ms / 1000);
      if (e.dropped) m.rowsDropped.inc({ endpoint: e.endpointId }, e.dropped);
      if (e.plain !== undefined) m.listPlain.inc({ endpoint: e.endpointId, reason: e.plain });
    });
    this.budget.on('change', (s) => {
      if (s.remaining !== null) m.budgetRemaining.set(s.remaining);
      if (s.limit !== null) m.budgetLimit.set(s.limit);
    });
  }

  private authenticator(): Authenticator | undefined {
    const c = this.config;
    if (!c.AUTH_TOKENS && !c.AUTH_TOKENS_FILE && !c.AUTH_JWT_SECRET && !c.ALLOWED_ORIGINS) return undefined;
    return new Authenticator({
      ...(c.AUTH_TOKENS ? { tokens: c.AUTH_TOKENS } : {}),
      ...(c.AUTH_TOKENS_FILE ? { tokenFile: c.AUTH_TOKENS_FILE } : {}),
      ...(c.AUTH_JWT_SECRET ? { jwtSecret: c.AUTH_JWT_SECRET } : {}),
      ...(c.ALLOWED_ORIGINS ? { origins: c.ALLOWED_ORIGINS } : {}),
    });
  }

  /**
   * Loads the symbol list of each market not loaded yet (`all`: of every
   * market, to refresh); retries a failed market every minute (e.g. before
   * the 06:30 KST provision time) and refreshes every 6 hours.
   */
  private async loadSymbols(all = false): Promise<void> {
    for (const market of MARKETS.filter((m) => all || !this.symbols.loaded(m))) {
      const id = this.families[market] === 'v2' ? 'v2.stocks.lists' : 'v3.closed.lists';
      try {
        const n = this.symbols.load(market, await this.symbolRows(id, market), this.now());
        this.logger.info({ market, symbols: n }, 'symbol list loaded');
      } catch (err) {
        this.logger.warn({ market, code: (err as { code?: string }).code, err: (err as Error).message }, 'symbol list not loaded; retrying');
      }
    }
    if (this.stopping) return;
    const missing = MARKETS.some((m) => !this.symbols.loaded(m));
    this.symbolTimer = setTimeout(() => void this.loadSymbols(!missing), missing ? SYMBOL_RETRY_MS : 6 * 3600_000);
    this.symbolTimer.unref();
  }

  /** A market's symbol list; in a cluster through the shared cache, so one call serves every process. */
  private async symbolRows(id: string, market: Market): Promise<Row[]> {
    if (!this.symbolCache) return (await this.upstream!.call(id, { marketcode: market })).rows;
    const r = await this.symbolCache.get(id, { marketcode: market });
    const key = endpoint(id).response.list?.key;
    const rows = key === undefined ? undefined : r.data[key];
    return Array.isArray(rows) ? (rows as Row[]) : [];
  }

  private async shutdown(): Promise<void> {
    if (this.symbolTimer) clearTimeout(this.symbolTimer);
    this.names?.stop();
    this.poller?.stop();
    await this.journal?.stop();
    await this.recorder?.stop();
    // The lease goes first, so another process takes over while this one drains its clients.
    await this.cluster?.stop().catch((err: unknown) => this.logger.warn({ err: (err as Error).message }, 'cluster stop failed'));
    await this.gateway?.close();
    const server = this.server;
    if (server) {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
    }
    await this.upstream?.close();
    this.statuses.close();
    await this.bus.close();
    await this.sim?.stop();
    this.logger.info('krx-bridge stopped');
  }
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
  const dir = fileURLToPath(new URL('./public/', import.meta.url));
  return existsSync(dir) ? dir : undefined;
}
