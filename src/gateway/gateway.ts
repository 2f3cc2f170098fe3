import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type ServerOptions, type WebSocket } from 'ws';
import { silentLogger, type Logger } from '../log.js';
import type { Metrics } from '../metrics/metrics.js';
import type { Limits } from '../protocol/constants.js';
import { CLOSE_CODES, type CloseName } from '../protocol/errors.js';
import type { StateStore } from '../state/store.js';
import type { AuthGranted } from '../access/auth.js';
import { closeCodeOfWsError } from './errors.js';
import { errorFrame } from '../protocol/encode.js';
import { wireError, type WireError } from '../protocol/errors.js';
import { type RequestId } from '../protocol/messages.js';
import { ChangeClock } from './clock.js';
import { Fanout } from './fanout.js';
import { releaseDemand, type HandlerContext } from './handlers.js';
import { InboundQueue } from './inbound.js';
import { SubscriptionIndex, type FeedSubscribers } from './index.js';
import { ConnectionCounter, resolveLimits } from '../access/limits.js';
import { LookupLimits } from '../access/lookups.js';
import { ReplyQueue } from './replies.js';
import { KrxCalendar } from '../market/calendar.js';
import { GATEWAY_DEFAULTS, type GatewayOptions, type ReplayEndpoint } from './options.js';
import { packageVersion } from '../version.js';
import { Session, type SessionHost } from './session.js';
import { heartbeatCheck, slowPolicy, type SlowPolicy } from './slow.js';
import { owedSnapshots } from './snapshots.js';
import { StatusBoard } from './statuses.js';
import { clientAddress } from '../access/address.js';
import { codedHandshakeErrors, handshakeProblem, refuseUpgrade, versionProblem, type UpgradeRefusal } from './upgrade.js';
import { servePlain, wantsWebSocket } from './plain.js';
import { readRequest } from './target.js';
import { queryParams } from '../access/params.js';
import { welcomeFrame } from '../protocol/encode.js';

/**
 * The WebSocket gateway: accepts connections on `path` of an HTTP server,
 * speaks protocol v1, fans bus events out to subscribers and enforces
 * limits, access control, heartbeats and the slow-consumer policy.
 * See docs/PROTOCOL.md.
 */

/** Gateway counts for `/status`. */
export interface GatewayStats {
  /** Open connections. */
  readonly clients: number;
  /** Distinct subscribed topics (a wildcard counts once). */
  readonly topics: number;
  /** Connections currently behind (owed fresh snapshots of what changed since they stopped reading). */
  readonly behind: number;
  /** Subscribers per feed (`channel.market`). */
  readonly feeds: Record<string, FeedSubscribers>;
}

const OPEN_GRANT: AuthGranted = { ok: true };
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Where a connection's WebSocket carries its session, for the listeners every connection shares. */
const SESSION = Symbol('session');
type SessionSocket = WebSocket & { [SESSION]?: Session };

function sessionOf(ws: WebSocket): Session {
  return (ws as SessionSocket)[SESSION]!;
}

/** The listeners of a connection's WebSocket events. */
interface WsListeners {
  message(this: WebSocket, data: RawData, isBinary: boolean): void;
  pong(this: WebSocket): void;
  error(this: WebSocket, err: Error & { code?: string }): void;
  close(this: WebSocket): void;
}

/** Until the handshake is done, a socket error ends the socket (`this` is the socket). */
function destroyOnError(this: Duplex): void {
  this.destroy();
}

/** A `close` listener giving back `addr`'s connection slot (and, for a replay, its replay slot if not given back before); it holds nothing else. */
function releaser(conns: ConnectionCounter, addr: string, replaySlot: (() => void) | undefined): () => void {
  return () => {
    conns.release(addr);
    replaySlot?.();
  };
}

/** Gives back `addr`'s replay slot, once however often it is called, then `counted` (the gauge of the slots held). */
function replaySlotOf(replays: ConnectionCounter, addr: string, counted: () => void): () => void {
  let held = true;
  return () => {
    if (!held) return;
    held = false;
    replays.release(addr);
    counted();
  };
}

/** Why `/ws/replay` is refused on a server that does not record (the upgrade's `error` frame, the plain GET's body). */
const NO_REPLAY = 'this server does not record (RECORD=off): no replay';

/** The default monotonic clock (`performance.now` needs its object as `this`). */
const monotonicNow = (): number => performance.now();

/** The WebSocket gateway. Attaches to `opts.server` on construction; `close()` to stop. */
export class Gateway {
  private readonly wss: WebSocketServer;
  private readonly sessions = new Set<Session>();
  private readonly behind = new Set<Session>();
  private readonly index = new SubscriptionIndex<Session>();
  private readonly clock = new ChangeClock();
  private readonly statuses: StatusBoard;
  private readonly conns: ConnectionCounter;
  private readonly maxConnections: number;
  private readonly maxPerAddress: number;
  private readonly maxReplays: number;
  private readonly maxReplaysPerAddress: number;
  /** Open replays (`/ws/replay`), per address and in all. */
  private readonly replays: ConnectionCounter;
  private readonly fanout: Fanout;
  private readonly logger: Logger;
  private readonly metrics: Metrics;
  private readonly store: StateStore;
  private readonly baseLimits: Limits;
  private readonly heartbeatMs: number;
  /** Sends the heartbeat pings no update carried (see `beat`). */
  private pingTimer: NodeJS.Timeout | undefined;
  private readonly path: string;
  private readonly serverName: string;
  /** Wall clock (ms epoch): timestamps on the wire, token expiry, lookups' dates. */
  private readonly now: () => number;
  /** Monotonic clock (ms): heartbeats, slow-consumer timers, rate limits. */
  private readonly monotonic: () => number;
  private readonly ctx: HandlerContext;
  private readonly host: SessionHost;
  private readonly inbound: InboundQueue;
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly unsubscribes: (() => void)[] = [];
  private readonly listeners: WsListeners = this.wsListeners();
  private closing: Promise<void> | undefined;
  private nextId = 1;

  /** A gateway serving `opts.path` (default `/ws`) of `opts.server`, fed by `opts.bus`. */
  constructor(private readonly opts: GatewayOptions) {
    this.logger = opts.logger ?? silentLogger();
    this.metrics = opts.metrics;
    this.store = opts.store;
    this.now = opts.now ?? Date.now;
    this.monotonic = opts.monotonic ?? monotonicNow;
    this.baseLimits = resolveLimits(opts.limits);
    this.heartbeatMs = opts.heartbeatMs ?? GATEWAY_DEFAULTS.heartbeatMs;
    this.path = opts.path ?? GATEWAY_DEFAULTS.path;
    this.serverName = `krx-bridge/${opts.version ?? packageVersion()}`;
    this.maxPerAddress = opts.maxConnectionsPerIp ?? GATEWAY_DEFAULTS.maxConnectionsPerIp;
    this.conns = new ConnectionCounter(this.maxPerAddress);
    this.maxConnections = opts.maxConnections ?? GATEWAY_DEFAULTS.maxConnections;
    this.maxReplays = opts.maxReplays ?? GATEWAY_DEFAULTS.maxReplays;
    this.maxReplaysPerAddress = opts.maxReplaysPerIp ?? GATEWAY_DEFAULTS.maxReplaysPerIp;
    this.replays = new ConnectionCounter(this.maxReplaysPerAddress);
    this.wss = codedHandshakeErrors(new WebSocketServer(this.serverOptions()));
    this.fanout = new Fanout(this.index, this.clock, this.metrics, this.logger);
    this.statuses = new StatusBoard(opts.statuses);
    this.host = this.sessionHost(slowPolicy(opts.slow));
    this.ctx = this.handlerContext();
    this.inbound = new InboundQueue({ ctx: this.ctx, metrics: this.metrics, logger: this.logger, close: (s, name) => this.closeSession(s, name) });
    opts.server.on('upgrade', this.onUpgrade);
    this.unsubscribes.push(
      opts.bus.subscribe('batch', (b) => this.fanout.batch(b)),
      opts.bus.subscribe('settled', () => this.fanout.settled()),
      opts.bus.subscribe('status', (st) => {
        this.statuses.record(st);
        this.fanout.status(st);
      }),
    );
    this.timers.push(
      setInterval(() => this.beat(), this.heartbeatMs),
      setInterval(() => this.checkBehind(), opts.slowCheckMs ?? GATEWAY_DEFAULTS.slowCheckMs),
    );
    for (const t of this.timers) t.unref();
  }

  /** The WebSocket path (its replays at `${wsPath}/replay`). */
  get wsPath(): string {
    return this.path;
  }

  /** Open connections. */
  get clientCount(): number {
    return this.sessions.size;
  }

  /**
   * Closes with 4001 (`token revoked`) every session whose static token is
   * no longer configured, after the token file was re-read. Returns how
   * many were closed.
   */
  revokeDropped(): number {
    let n = 0;
    for (const s of this.sessions) {
      if (s.closing || s.who.stillValid === undefined || s.who.stillValid()) continue;
      this.closeSession(s, 'tokenRevoked');
      n++;
    }
    return n;
  }

  /** Counts for `/status`. */
  stats(): GatewayStats {
    return { clients: this.sessions.size, topics: this.index.topicCount, behind: this.behind.size, feeds: this.index.feeds() };
  }

  /**
   * Stops accepting, sends close 1001 "server shutting down" to every
   * client and resolves once all are closed (clients still open after
   * `timeoutMs`, default `closeTimeoutMs`, are cut).
   */
  close(timeoutMs = this.opts.closeTimeoutMs ?? GATEWAY_DEFAULTS.closeTimeoutMs): Promise<void> {
    this.closing ??= this.shutdown(timeoutMs);
    return this.closing;
  }

  private async shutdown(timeoutMs: number): Promise<void> {
    for (const t of this.timers) clearInterval(t);
    clearTimeout(this.pingTimer);
    for (const u of this.unsubscribes) u();
    const open = [...this.sessions];
    const closed = Promise.all(open.map((s) => new Promise<void>((resolve) => s.ws.once('close', () => resolve()))));
    for (const s of open) this.closeSession(s, 'goingAway');
    this.opts.replay?.close();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
    await Promise.race([closed, timeout]);
    clearTimeout(timer);
    for (const s of this.sessions) s.ws.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }

  private serverOptions(): ServerOptions {
    const deflate = this.opts.perMessageDeflate ?? GATEWAY_DEFAULTS.perMessageDeflate;
    // `closeTimeout` (ws ≥ 8.18) bounds the wait for a peer's close frame, e.g. a client that stopped reading.
    const extra = { closeTimeout: this.opts.closeTimeoutMs ?? GATEWAY_DEFAULTS.closeTimeoutMs };
    return { noServer: true, maxPayload: this.baseLimits.maxPayloadBytes, perMessageDeflate: deflate, clientTracking: false, ...extra };
  }

  // --- connections ----------------------------------------------------------

  /**
   * node:http gives this every request with an `Upgrade` header, whatever
   * its path or protocol. One that does not ask for a WebSocket (`h2c`, …)
   * goes back to the HTTP routes as if it had none (plain.ts); a WebSocket
   * upgrade gets the checks every request gets (a readable target, `Host`
   * on HTTP/1.1: `readRequest`, as the routes and the plain GET of `/ws`
   * read it), then the handshake's own, then admission.
   */
  private readonly onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    if (!wantsWebSocket(req)) return servePlain(this.opts.server, req, socket, head);
    socket.on('error', destroyOnError);
    const read = readRequest(req);
    if (!read.ok) return refuseUpgrade(socket, 400, 'bad_request', read.message);
    const bad = handshakeProblem(req);
    if (bad !== undefined) return refuseUpgrade(socket, bad.status, bad.code, bad.message, bad.headers);
    // `Upgrade: h2c, websocket` offers a choice (RFC 9110 §7.8); the WebSocket library reads the header as one protocol.
    req.headers.upgrade = 'websocket';
    const path = read.url.pathname;
    const replayPath = path === `${this.path}/replay`;
    const replay = replayPath ? this.opts.replay : undefined;
    if (replayPath && replay === undefined) return this.refuseReplay(req, socket, head, wireError('recording_off', NO_REPLAY));
    if (path !== this.path && replay === undefined)
      return refuseUpgrade(socket, 404, 'not_found', `no WebSocket endpoint at this path (${this.path} and ${this.path}/replay are)`);
    const addr = clientAddress(req, this.opts.trustProxy);
    const refused = this.admission(read.url, addr, replay !== undefined);
    if (refused !== undefined) {
      if (refused.outcome !== undefined) this.metrics.connections.inc({ outcome: refused.outcome });
      return refuseUpgrade(socket, refused.status, refused.code, refused.message, refused.headers);
    }
    this.conns.acquire(addr);
    let replaySlot: (() => void) | undefined;
    if (replay !== undefined) {
      this.replays.acquire(addr);
      this.countReplays();
      replaySlot = replaySlotOf(this.replays, addr, () => this.countReplays());
    }
    // One release point for every path (refused, failed handshake, closed session). Made
    // outside this function so the listener, which lives as long as the connection, does not
    // keep the upgrade request alive.
    socket.on('close', releaser(this.conns, addr, replaySlot));
    const auth = this.opts.auth;
    const granted = (grant: AuthGranted): void =>
      replay ? this.acceptReplay(replay, req, socket, head, grant, replaySlot!) : this.accept(req, socket, head, addr, grant);
    if (auth === undefined) return granted(OPEN_GRANT);
    auth.authenticate(req).then(
      (res) => {
        if (res.ok) return granted(res);
        this.metrics.connections.inc({ outcome: res.code === 'forbidden_origin' ? 'forbidden_origin' : 'unauthorized' });
        this.logger.info({ addr, reason: res.message }, 'upgrade refused');
        refuseUpgrade(socket, res.status, res.code, res.message);
      },
      (err: unknown) => {
        this.logger.error({ err }, 'authentication failed unexpectedly');
        refuseUpgrade(socket, 500, 'internal', 'internal error');
      },
    );
  };

  /** Sets `krx_replays` to the replay slots held (the replays `MAX_REPLAYS` counts). */
  private countReplays(): void {
    this.metrics.replays.set(this.replays.total);
  }

  /**
   * Why an upgrade from `addr` would be refused before its token is read,
   * or undefined: a query parameter `/ws` does not take (not for a
   * `replay`, whose query its own check reads), a stopping server, a full
   * one (or one playing as many replays as it takes), an address at its cap.
   */
  private admission(url: URL, addr: string, replay: boolean): (UpgradeRefusal & { outcome?: 'server_full' | 'replays_full' | 'too_many' }) | undefined {
    // `/ws` takes no parameter but the token: a misspelt one is refused, as on every route.
    const query = replay ? undefined : queryParams(url.searchParams, []);
    if (query?.ok === false) return { status: 400, code: 'invalid_params', message: query.message };
    if (this.closing) return { status: 503, code: 'shutting_down', message: 'server shutting down' };
    if (this.conns.total >= this.maxConnections)
      return {
        status: 503,
        code: 'server_full',
        message: 'the server has as many connections as it takes; try another or later',
        headers: { 'Retry-After': '5' },
        outcome: 'server_full',
      };
    // Each replay holds the recorded state of what it plays at its own clock: their number bounds that memory.
    if (replay && this.replays.total >= this.maxReplays)
      return {
        status: 503,
        code: 'server_full',
        message: `the server plays as many replays at once as it takes (${this.maxReplays}); try later`,
        headers: { 'Retry-After': '30' },
        outcome: 'replays_full',
      };
    if (this.conns.count(addr) >= this.maxPerAddress)
      return { status: 429, code: 'too_many_connections', message: 'too many connections from this address', outcome: 'too_many' };
    if (replay && this.replays.count(addr) >= this.maxReplaysPerAddress)
      return {
        status: 429,
        code: 'too_many_connections',
        message: `too many replays from this address (${this.maxReplaysPerAddress})`,
        outcome: 'too_many',
      };
    return undefined;
  }

  /**
   * What an upgrade of `req` (to `/ws` or `/ws/replay`) would get now, for
   * a plain GET of the path (no `Upgrade` header): the refusal the upgrade
   * would get (a replay's refusals of its query included, which an upgrade
   * gets as an `error` frame and close 4004), or 426 `upgrade_required`
   * when it would be accepted. A browser's WebSocket cannot read the HTTP
   * status of a refused upgrade; the SDK asks this to tell a refusal (a bad
   * token, say) from a network that failed. Takes nothing: no slot, no count.
   * It reads the request as the upgrade does (`readRequest`; the HTTP/1.1 a
   * handshake needs), so the two agree on every target.
   */
  async probe(req: IncomingMessage): Promise<UpgradeRefusal> {
    const read = readRequest(req);
    if (!read.ok) return { status: 400, code: 'bad_request', message: read.message };
    const version = versionProblem(req);
    if (version !== undefined) return version;
    const replayPath = read.url.pathname === `${this.path}/replay`;
    const replay = this.opts.replay;
    if (replayPath && replay === undefined) return { status: 404, code: 'recording_off', message: NO_REPLAY };
    const refused = this.admission(read.url, clientAddress(req, this.opts.trustProxy), replayPath);
    if (refused !== undefined) return refused;
    const res = this.opts.auth === undefined ? OPEN_GRANT : await this.opts.auth.authenticate(req);
    if (!res.ok) return { status: res.status, code: res.code, message: res.message };
    if (replayPath) {
      const r = await replay!.check(req.url);
      if (!r.ok) return r.refusal;
    }
    return {
      status: 426,
      code: 'upgrade_required',
      message: 'a WebSocket endpoint: an upgrade (Upgrade: websocket) would be accepted now',
      headers: { Upgrade: 'websocket' },
    };
  }

  /**
   * A replay (`/ws/replay`): checked against the recordings, then played by
   * the replay server within the limits a live connection would get, its
   * codes checked against the same listing.
   */
  private acceptReplay(replay: ReplayEndpoint, req: IncomingMessage, socket: Duplex, head: Buffer, grant: AuthGranted, slot: () => void): void {
    replay.check(req.url).then(
      (r) => {
        if (this.closing || socket.destroyed) return void socket.destroy();
        if (!r.ok) {
          // A refused replay plays nothing: its slot is free at once, not when its peer answers the close (up to 5 s).
          slot();
          return this.refuseReplay(req, socket, head, wireError(r.refusal.code, r.refusal.message));
        }
        socket.removeListener('error', destroyOnError);
        this.metrics.connections.inc({ outcome: 'replay' });
        const limits = grant.limits === undefined ? this.baseLimits : resolveLimits(this.baseLimits, grant.limits);
        replay.accept(req, socket, head, r.query, limits, this.opts.symbols);
      },
      (err: unknown) => {
        this.logger.error({ err }, 'replay check failed unexpectedly');
        refuseUpgrade(socket, 500, 'internal', 'internal error');
      },
    );
  }

  /**
   * Refuses a replay after the handshake, with a coded `error` frame and close
   * 4004: a browser's WebSocket cannot read an HTTP refusal, so it would
   * retry a day that is not recorded forever.
   */
  private refuseReplay(req: IncomingMessage, socket: Duplex, head: Buffer, err: WireError): void {
    if (this.closing || socket.destroyed) return void socket.destroy();
    socket.removeListener('error', destroyOnError);
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      ws.on('error', () => undefined);
      this.metrics.errorsOut.inc({ code: err.code });
      this.metrics.closes.inc({ code: String(CLOSE_CODES.replayRefused.code) });
      ws.send(errorFrame(err));
      ws.close(CLOSE_CODES.replayRefused.code, CLOSE_CODES.replayRefused.reason);
    });
  }

  private accept(req: IncomingMessage, socket: Duplex, head: Buffer, addr: string, grant: AuthGranted): void {
    if (this.closing || socket.destroyed) return void socket.destroy();
    socket.removeListener('error', destroyOnError);
    this.wss.handleUpgrade(req, socket, head, (ws) => this.onConnection(ws, addr, grant));
  }

  private onConnection(ws: WebSocket, addr: string, grant: AuthGranted): void {
    const limits = grant.limits === undefined ? this.baseLimits : resolveLimits(this.baseLimits, grant.limits);
    const who = {
      addr,
      ...(grant.clientId ? { clientId: grant.clientId } : {}),
      ...(grant.tokenHash ? { tokenHash: grant.tokenHash } : {}),
      ...(grant.stillValid ? { stillValid: grant.stillValid } : {}),
    };
    const s = new Session(this.nextId++, ws, who, limits, this.host, this.opts.floodFactor ?? GATEWAY_DEFAULTS.floodFactor);
    this.sessions.add(s);
    this.metrics.connections.inc({ outcome: 'accepted' });
    this.metrics.clients.set(this.sessions.size);
    // The same four listeners for every connection: each finds its session on the socket.
    (ws as SessionSocket)[SESSION] = s;
    const l = this.listeners;
    ws.on('message', l.message);
    ws.on('pong', l.pong);
    ws.on('error', l.error);
    ws.on('close', l.close);
    s.reply(welcomeFrame(this.serverName, this.store.epoch, this.heartbeatMs, limits, this.now()));
    this.host.sent('welcome', 1);
    // After welcome: a token that expired since it was checked still gets the first frame, then 4001.
    if (grant.expiresAt !== undefined) this.scheduleExpiry(s, grant.expiresAt);
    this.logger.debug({ session: s.id, addr, client: grant.clientId, tokenHash: grant.tokenHash }, 'client connected');
  }

  /** The listeners every connection's WebSocket gets (`this` is the WebSocket). */
  private wsListeners(): WsListeners {
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- each listener's own `this` is the WebSocket it serves.
    const gw = this;
    return {
      message(this: WebSocket, data: RawData, isBinary: boolean): void {
        gw.inbound.push(sessionOf(this), data, isBinary);
      },
      pong(this: WebSocket): void {
        sessionOf(this).lastSeen = gw.monotonic();
      },
      error(this: WebSocket, err: Error & { code?: string }): void {
        // ws closes the connection itself on a bad frame; count it with the others the server closes.
        const close = closeCodeOfWsError(err.code);
        const s = sessionOf(this);
        if (close !== undefined) {
          gw.metrics.closes.inc({ code: String(close) });
          gw.logger.info({ session: s.id, addr: s.who.addr, close, code: err.code }, 'connection closed by the WebSocket layer');
          s.closing = true;
        } else gw.logger.debug({ session: s.id, code: err.code }, 'client connection error');
      },
      close(this: WebSocket): void {
        gw.onClose(sessionOf(this));
      },
    };
  }

  private scheduleExpiry(s: Session, expiresAt: number): void {
    const delay = expiresAt - this.now();
    if (delay <= 0) return this.closeSession(s, 'tokenExpired');
    s.expiryTimer = setTimeout(() => this.scheduleExpiry(s, expiresAt), Math.min(delay, MAX_TIMER_MS));
    s.expiryTimer.unref();
  }

  private onClose(s: Session): void {
    s.closing = true;
    s.dispose();
    clearTimeout(s.expiryTimer);
    this.sessions.delete(s);
    this.behind.delete(s);
    releaseDemand(this.opts.demand, this.index.removeAll(s));
    this.metrics.clients.set(this.sessions.size);
    this.metrics.topics.set(this.index.topicCount);
  }

  /** Closes a session with a server close code (heartbeat timeouts are cut without a handshake). */
  private closeSession(s: Session, name: CloseName): void {
    if (s.closing) return;
    // The errors that led here go out before the close frame.
    if (name !== 'slowConsumer' && name !== 'heartbeatTimeout') s.flushAnswers();
    s.closing = true;
    const c = CLOSE_CODES[name];
    this.metrics.closes.inc({ code: String(c.code) });
    this.logger.info({ session: s.id, addr: s.who.addr, close: c.code, reason: c.reason }, 'closing connection');
    if (name === 'heartbeatTimeout') s.ws.terminate();
    else s.ws.close(c.code, c.reason);
  }

  // --- outbound ---------------------------------------------------------

  private sendError(s: Session, err: WireError, id?: RequestId): void {
    this.metrics.errorsOut.inc({ code: err.code });
    this.host.sent('error', 1);
    s.reply(errorFrame(err, id));
  }

  // --- timers ---------------------------------------------------------------

  /**
   * Every heartbeat: cuts the peers that answered none of the last two
   * pings' worth of time and pings the others. A ping rides along with the
   * next updates written to the client when they come within a fifth of
   * the heartbeat (one write instead of two); after that it goes alone.
   *
   * A connection behind is not timed (`heartbeatCheck`).
   */
  private beat(): void {
    const now = this.monotonic();
    for (const s of this.sessions) {
      if (s.closing) continue;
      const seen = heartbeatCheck(now, s.lastSeen, this.heartbeatMs, this.behind.has(s));
      if (seen === undefined) {
        this.closeSession(s, 'heartbeatTimeout');
        continue;
      }
      s.lastSeen = seen;
      s.heartbeat();
    }
    clearTimeout(this.pingTimer);
    this.pingTimer = setTimeout(() => {
      for (const s of this.sessions) s.pingIfDue();
    }, this.heartbeatMs / 5);
    this.pingTimer.unref();
  }

  private checkBehind(): void {
    if (this.behind.size === 0) return;
    const now = this.monotonic();
    for (const s of this.behind) if (!s.closing) s.check(now);
  }

  // --- wiring ---------------------------------------------------------------

  private sessionHost(policy: SlowPolicy): SessionHost {
    const metrics = this.metrics;
    const compress = this.opts.perMessageDeflate ?? GATEWAY_DEFAULTS.perMessageDeflate;
    return {
      policy,
      sendOptions: { binary: false, compress },
      directWrite: this.opts.directWrite ?? GATEWAY_DEFAULTS.directWrite,
      clock: this.clock,
      monotonic: this.monotonic,
      owed: (s, since) => owedSnapshots(this.store, this.index, this.clock, s, since),
      wrote: (bytes) => {
        metrics.framesOut.inc();
        metrics.bytesOut.inc(bytes);
      },
      sent: (type, n) => metrics.messagesOut.inc({ type }, n),
      slowStep: (s, step, behind) => {
        if (behind) this.behind.add(s);
        else this.behind.delete(s);
        metrics.slowConsumer.inc({ step });
        this.logger.debug({ session: s.id, step }, 'slow consumer');
      },
      fault: (s, err) => {
        this.logger.error({ err, session: s.id }, 'writing to a client failed');
        this.closeSession(s, 'internal');
      },
      close: (s, name) => {
        if (name === 'slowConsumer' && !s.closing) {
          metrics.slowConsumer.inc({ step: 'close' });
          this.logger.info({ session: s.id, addr: s.who.addr }, 'closing slow consumer');
        }
        this.closeSession(s, name);
      },
    };
  }

  private handlerContext(): HandlerContext {
    return {
      store: this.store,
      index: this.index,
      demand: this.opts.demand,
      symbols: this.opts.symbols,
      onDemand: this.opts.onDemand,
      replies: new ReplyQueue(),
      dates: {
        calendar: this.opts.calendar ?? new KrxCalendar(),
        ...(this.opts.sessions ? { sessions: this.opts.sessions } : {}),
        ...(this.opts.alwaysOpen ? { alwaysOpen: true } : {}),
        now: this.now,
      },
      lookups:
        this.opts.lookups ??
        new LookupLimits({ perMinute: this.baseLimits.getsPerMinute, clientShare: 1, shareCap: () => null, now: this.now, monotonic: this.monotonic }),
      families: this.opts.families ?? GATEWAY_DEFAULTS.families,
      logger: this.logger,
      now: this.now,
      monotonic: this.monotonic,
      statusOf: (c, m) => this.statuses.frame(c, m),
      sent: (type, n) => this.host.sent(type, n),
      error: (s, err, id) => this.sendError(s, err, id),
      topicsChanged: () => this.metrics.topics.set(this.index.topicCount),
    };
  }
}
