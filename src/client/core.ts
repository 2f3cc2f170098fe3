import { DEFAULT_LIMITS, PROTOCOL_VERSION, type Channel, type Limits, type Market } from '../protocol/constants.js';
import { CLOSE_CODES } from '../protocol/errors.js';
import type { ClientMsg, ErrorMsg, StatusMsg, WelcomeMsg } from '../protocol/wire.js';
import { feedOf } from '../protocol/topics.js';
import { Backoff } from './backoff.js';
import { Connection, type WebSocketConstructor } from './connection.js';
import { KrxError, type KrxErrorCode } from './errors.js';
import { GuardedEmitter } from './events.js';
import { dispatch, parseFrame, type FrameHandler } from './frames.js';
import { badMs, checkNumberOptions } from './guards.js';
import { Outbox, RATE_SHARE } from './outbox.js';
import { askUpgrade, verdictOf, type FetchLike, type Verdict } from './refusal.js';
import { Requests, type PendingRequest, type RequestKind, type RequestOptions } from './requests.js';
import type { SubscribePlan } from './subscriptions.js';
import { Timers } from './timers.js';
import { TopicStream } from './topics/stream.js';
import type { ConnectionState, KrxClientEvents, KrxClientOptions } from './types.js';

/**
 * The client's engine: one connection at a time, its lifecycle and backoff,
 * the frame loop, the restore of every subscription after a reconnect, and
 * request/reply matching. Topic state lives in `TopicStream`; `KrxClient`
 * adds the public API on top. See docs/PROTOCOL.md §1, §4, §7, §8.
 */

/** Close codes after which the client waits longer: the server said it misbehaved. */
const PENALISED: ReadonlySet<number> = new Set([CLOSE_CODES.policy.code, CLOSE_CODES.tooBig.code, CLOSE_CODES.slowConsumer.code]);
/** Wait before retrying a resync or resubscribe the server refused for a passing reason (ms). */
const RETRY_MS = 1000;
/** Time `close()` waits for the closing handshake before dropping the socket (ms). */
const CLOSE_GRACE_MS = 1000;
/** The socket closed without a close frame (or the client gave up on it). */
const ABNORMAL = 1006;
/** How long after a 1001 the client keeps retrying promptly while the server restarts (ms). */
const RESTART_WINDOW_MS = 60_000;

const now = (): number => performance.now();

/** A request's `timeoutMs` that no timer keeps (NaN, negative, zero, too long), as the `invalid_params` it rejects with; the request is not sent. */
function badTimeout(opts: RequestOptions): KrxError | undefined {
  const why = opts.timeoutMs === undefined ? undefined : badMs(opts.timeoutMs, false);
  return why === undefined ? undefined : new KrxError('invalid_params', `timeoutMs ${why}`);
}

/** Connection, state and message handling under the public client. */
export class KrxCore extends GuardedEmitter<KrxClientEvents> {
  /** Subscriptions and local rows. */
  protected readonly stream: TopicStream;
  /** Requests awaiting an answer. */
  protected readonly requests = new Requests();
  /** Default request timeout (ms). */
  protected readonly requestTimeoutMs: number;
  private readonly url: string;
  private readonly ctor: WebSocketConstructor;
  /** Asks the server why a socket failed to open (undefined: not asked). */
  private readonly fetcher: FetchLike | undefined;
  private readonly opts: KrxClientOptions;
  private readonly backoff: Backoff;
  private readonly outbox: Outbox;
  private readonly timers = new Timers<'retry' | 'connect' | 'stable' | 'heartbeat'>();
  private conn: Connection | undefined;
  private current: ConnectionState = 'connecting';
  private welcomed: WelcomeMsg | undefined;
  private live = false;
  /** The epoch the held seqs belong to. */
  private seqEpoch: string | undefined;
  private lastRx = 0;
  private readonly statuses = new Map<string, StatusMsg>();
  private readonly waiters = new Set<{ resolve: () => void; reject: (e: KrxError) => void }>();
  private closing: Promise<void> | undefined;
  /** Why the server refused this replay (the `error` frame before close 4004). */
  private refused: KrxError | undefined;
  private closeDone: (() => void) | undefined;
  /** Attempts since the last welcome (for `reconnecting`). */
  private attempts = 0;
  /** Until when (performance.now ms) the server is taken to be restarting after its 1001: retries stay prompt. */
  private restartingUntil = 0;

  /** Validates the options and starts connecting (on the next microtask). */
  constructor(url: string, options: KrxClientOptions = {}) {
    super();
    const ctor = options.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
    if (ctor === undefined) {
      throw new TypeError('no WebSocket implementation: pass options.WebSocket (on Node 20: `import { WebSocket } from "ws"`)');
    }
    checkNumberOptions(options as Readonly<Record<string, unknown>>);
    const parsed = new URL(url);
    if (parsed.protocol !== 'ws:' && parsed.protocol !== 'wss:') throw new TypeError(`not a WebSocket URL: ${parsed.protocol}`);
    if (options.replay) {
      // The replay endpoint beside the live one: …/ws → …/ws/replay?date=…&from=…&to=…&speed=…
      const r = options.replay;
      parsed.pathname = `${parsed.pathname.replace(/\/$/, '')}/replay`;
      parsed.searchParams.set('date', r.date);
      if (r.from !== undefined) parsed.searchParams.set('from', r.from);
      if (r.to !== undefined) parsed.searchParams.set('to', r.to);
      if (r.speed !== undefined) parsed.searchParams.set('speed', String(r.speed));
    }
    this.url = parsed.toString();
    this.ctor = ctor;
    this.fetcher = (options.fetch ?? (globalThis as { fetch?: FetchLike }).fetch)?.bind(globalThis);
    this.opts = options;
    this.requestTimeoutMs = options.requestTimeoutMs ?? 10_000;
    this.backoff = new Backoff(options);
    const max = DEFAULT_LIMITS.maxMessagesPerSecond;
    this.outbox = new Outbox((text) => this.conn?.send(text), { rate: max * RATE_SHARE, burst: max });
    this.stream = new TopicStream(
      {
        isLive: () => this.live,
        nextId: () => this.requests.id(),
        send: (msg) => this.outbox.push(JSON.stringify(msg)),
        deliver: (row, change) => {
          this.emit(change.channel, change.code, row as never, change);
          this.emit('update', change.topic, row as never, change);
        },
        resyncing: (topic, reason) => this.emit('resync', topic, reason),
        error: (e) => this.emitError(e),
        retryLater: (fn) => this.timers.later(RETRY_MS, () => this.live && fn()),
      },
      { verifyCrc: options.verifyCrc ?? true, freeze: options.freezeRows ?? true },
    );
    // On the next microtask, so a subclass is fully built first.
    queueMicrotask(() => void this.connect());
  }

  /** The connection state. */
  get state(): ConnectionState {
    return this.current;
  }

  /** The server's epoch (from the latest `welcome`); undefined before the first. */
  get epoch(): string | undefined {
    return this.welcomed?.epoch;
  }

  /** The connection's limits (from `welcome`; the protocol defaults before it). */
  get limits(): Limits {
    return this.welcomed?.limits ?? DEFAULT_LIMITS;
  }

  /** The latest `welcome` message, if any. */
  get welcome(): WelcomeMsg | undefined {
    return this.welcomed;
  }

  /**
   * The latest `status` of a feed on the current connection, if one
   * arrived; none while the client is not connected (a status the bridge
   * sent before the connection was lost no longer says anything), and
   * none once nothing of the feed is subscribed (the bridge no longer
   * tells this client how it stands).
   */
  status(channel: Channel, market: Market): StatusMsg | undefined {
    return this.statuses.get(feedOf(channel, market));
  }

  /** After subscriptions of a feed were removed: drops the rows they no longer cover, and the feed's status when nothing of it is left. */
  protected pruneFeed(channel: Channel, market: Market): void {
    this.stream.prune(channel, market);
    if (!this.stream.subs.holds(channel, market)) this.statuses.delete(feedOf(channel, market));
  }

  /** Resolves when the client is `open`; rejects when it closes first or after `timeoutMs` (default the request timeout). */
  ready(opts: RequestOptions = {}): Promise<void> {
    if (this.current === 'open') return Promise.resolve();
    if (this.current === 'closed') return Promise.reject(new KrxError('closed', 'the client is closed'));
    const bad = badTimeout(opts);
    if (bad !== undefined) return Promise.reject(bad);
    return new Promise((resolve, reject) => {
      const timeoutMs = opts.timeoutMs ?? this.requestTimeoutMs;
      const settle = (f: () => void) => {
        clearTimeout(timer);
        this.waiters.delete(w);
        f();
      };
      const w = { resolve: () => settle(resolve), reject: (e: KrxError) => settle(() => reject(e)) };
      const timer = setTimeout(() => w.reject(new KrxError('timeout', `not open within ${timeoutMs} ms`)), timeoutMs);
      this.waiters.add(w);
    });
  }

  /** Closes the connection and stops reconnecting; pending requests reject with `closed`. Resolves when the socket has closed. Final. */
  close(): Promise<void> {
    if (this.closing !== undefined) return this.closing;
    const conn = this.conn;
    this.conn = undefined;
    this.shutdown(new KrxError('closed', 'the client was closed'));
    this.closing = new Promise<void>((resolve) => {
      if (conn === undefined) return resolve();
      const timer = setTimeout(() => {
        conn.abort();
        resolve();
      }, CLOSE_GRACE_MS);
      this.closeDone = () => {
        clearTimeout(timer);
        resolve();
      };
      conn.close(CLOSE_CODES.normal.code, 'client closing');
    });
    return this.closing;
  }

  // ---- requests --------------------------------------------------------------

  /**
   * Sends a request now if the connection is welcomed, else once it is; it
   * settles with `map(reply)`, or rejects (`timeout`, `aborted`, `closed`, or
   * the server's error, after `onError`).
   */
  protected request<T>(
    kind: RequestKind,
    build: (id: number) => ClientMsg,
    map: (reply: unknown, req: PendingRequest) => T,
    opts: RequestOptions = {},
    extra: { plan?: SubscribePlan; onError?: (e: KrxError) => void } = {},
  ): Promise<T> {
    if (this.current === 'closed') return Promise.reject(new KrxError('closed', 'the client is closed'));
    const bad = badTimeout(opts);
    if (bad !== undefined) return Promise.reject(bad);
    return new Promise<T>((resolve, reject) => {
      const req: PendingRequest = {
        id: this.requests.id(),
        kind,
        build,
        sent: false,
        sentAt: 0,
        ...(extra.plan ? { plan: extra.plan } : {}),
        resolve: (reply) => resolve(map(reply, req)),
        reject: (e) => {
          extra.onError?.(e);
          reject(e);
        },
      };
      this.requests.add(req, opts.timeoutMs ?? this.requestTimeoutMs, opts.signal);
      if (this.live && this.requests.peek(req.id) === req) this.send(req);
    });
  }

  /** The `subscribe` message of a plan, with `since` and `epoch` for the topics held. */
  protected subscribeMsg(plan: SubscribePlan, id: number): ClientMsg {
    return this.stream.subscribeMsg(plan, id, this.seqEpoch);
  }

  /** Whether the current connection is welcomed (requests go out at once). */
  protected get isLive(): boolean {
    return this.live;
  }

  /** Reports an error through the `error` event. */
  protected emitError(e: KrxError): void {
    this.emit('error', e);
  }

  /** Reports a throwing listener as an `error` (a throwing `error` listener is ignored: nowhere left to report). */
  protected listenerFailed(error: unknown, event: keyof KrxClientEvents & string): void {
    if (event === 'error') return;
    const text = error instanceof Error ? error.message : String(error);
    this.emitError(new KrxError('listener', `a '${event}' listener threw: ${text}`, { cause: error }));
  }

  private send(req: PendingRequest): void {
    req.sent = true;
    req.sentAt = now();
    this.outbox.push(JSON.stringify(req.build(req.id)));
  }

  // ---- lifecycle -------------------------------------------------------------

  private isClosed(): boolean {
    return this.current === 'closed';
  }

  private async connect(): Promise<void> {
    if (this.isClosed()) return;
    let url = this.url;
    try {
      const token = typeof this.opts.token === 'function' ? await this.opts.token() : this.opts.token;
      if (token !== undefined) url = withToken(url, token);
    } catch (err) {
      if (this.isClosed()) return;
      this.emitError(new KrxError('connection', 'the token function failed', { cause: err }));
      return this.lost(ABNORMAL, 'no token');
    }
    if (this.isClosed()) return;
    this.timers.set('connect', this.opts.connectTimeoutMs ?? 10_000, () => this.drop('connect timeout'));
    try {
      let opened = false;
      const conn: Connection = new Connection(this.ctor, url, {
        open: () => {
          opened = true;
          this.lastRx = now();
        },
        message: (text) => this.onFrame(conn, text),
        close: (code, reason) =>
          opened || code !== ABNORMAL || this.fetcher === undefined ? this.lost(code, reason) : void this.failedOpen(url, code, reason),
      });
      this.conn = conn;
    } catch (err) {
      this.emitError(new KrxError('connection', 'cannot open a WebSocket', { cause: err }));
      this.lost(ABNORMAL, 'cannot open');
    }
  }

  /** Gives up on the current socket without waiting for a close handshake. */
  private drop(reason: string): void {
    this.conn?.abort(4000, reason);
    this.lost(ABNORMAL, reason);
  }

  /**
   * A socket that closed before it opened: the server is asked what an
   * upgrade of the same URL gets (a browser's WebSocket hides a refused
   * upgrade's status), and a refusal is reported, then retried or final.
   */
  private async failedOpen(url: string, code: number, reason: string): Promise<void> {
    this.conn = undefined;
    this.timers.clear('connect');
    const r = await askUpgrade(this.fetcher, url, this.opts.connectTimeoutMs ?? 10_000);
    if (this.isClosed()) return;
    const verdict = r === undefined ? undefined : verdictOf(r, typeof this.opts.token === 'function');
    if (verdict === undefined || verdict.kind === 'retry') return this.lost(code, reason);
    this.emitError(verdict.error);
    this.lost(code, reason, verdict);
  }

  /** The socket is gone: settle what depended on it, then reconnect (or close; a refusal no retry can change closes). */
  private lost(code: number, reason: string, refused?: Exclude<Verdict, { kind: 'retry' }>): void {
    const wasLive = this.live;
    this.conn = undefined;
    this.live = false;
    // A feed's last status (`live`, say) was the bridge's word while connected; the next connection sends its own.
    this.statuses.clear();
    this.timers.clearAll();
    this.outbox.clear();
    this.stream.disconnected();
    this.forgetInflight();
    // Once per connection that was up: a retry that fails is a `reconnecting`, not another disconnect.
    if (wasLive || this.current === 'closed') this.emit('disconnect', code, reason);
    if (this.current === 'closed') return this.closeDone?.();
    // A replay refused (4004: not recorded, say) is final: what waits fails with the server's reason.
    if (this.opts.replay !== undefined && code === CLOSE_CODES.replayRefused.code) {
      this.closing = Promise.resolve();
      return this.shutdown(this.refused ?? new KrxError('not_recorded', reason || 'replay refused'));
    }
    // An upgrade refused for good (a misspelt parameter, a static token not valid): what waits fails with the server's reason.
    if (refused?.kind === 'final') {
      this.closing = Promise.resolve();
      return this.shutdown(refused.error);
    }
    // A replay that played to its end (1000) is over: nothing to reconnect to.
    if (this.opts.reconnect === false || (this.opts.replay !== undefined && code === CLOSE_CODES.normal.code)) {
      this.closing = Promise.resolve();
      return this.shutdown(refused?.error ?? new KrxError('connection', `connection lost (${code}${reason ? ` ${reason}` : ''})`));
    }
    // A server that said it is restarting (1001) is retried promptly until it is back (for up to a minute), not with growing delays.
    if (code === CLOSE_CODES.goingAway.code) this.restartingUntil = now() + RESTART_WINDOW_MS;
    const penalised = PENALISED.has(code) || refused?.penalty === true;
    const restarting = now() < this.restartingUntil && !penalised;
    const delay = restarting ? this.backoff.restart() : penalised ? this.backoff.penalty() : this.backoff.next();
    this.attempts++;
    this.setState('reconnecting');
    this.emit('reconnecting', this.attempts, delay);
    this.timers.set('retry', delay, () => void this.connect());
  }

  /** Requests of a lost connection: resent after the next welcome, except what that welcome rebuilds. */
  private forgetInflight(): void {
    for (const req of this.requests.all()) {
      req.sent = false;
      if (req.kind === 'resubscribe') this.requests.take(req.id);
      else if (req.kind === 'unsubscribe') {
        // Nothing is subscribed on a new connection until the restore, which leaves these out.
        this.requests.take(req.id);
        req.resolve(undefined);
      }
    }
  }

  private shutdown(error: KrxError): void {
    this.live = false;
    this.timers.clearAll();
    this.outbox.clear();
    this.stream.disconnected();
    this.requests.rejectAll(() => error);
    for (const w of [...this.waiters]) w.reject(error);
    this.setState('closed');
  }

  private setState(next: ConnectionState): void {
    const prev = this.current;
    if (prev === next) return;
    this.current = next;
    for (const w of [...this.waiters]) {
      if (next === 'open') w.resolve();
      else if (next === 'closed') w.reject(new KrxError('closed', 'the client closed before it was open'));
    }
    this.emit('state', prev, next);
  }

  private onWelcome(w: WelcomeMsg): void {
    if (this.live) return;
    this.timers.clear('connect');
    this.welcomed = w;
    if (w.version !== PROTOCOL_VERSION) {
      this.emitError(new KrxError('protocol', `server speaks protocol ${w.version}, this client ${PROTOCOL_VERSION}`));
    }
    const rate = w.limits.maxMessagesPerSecond;
    this.outbox.setRate(rate * RATE_SHARE, rate);
    this.restore();
    // Seqs of another epoch mean nothing now: keep the rows, wait for the snapshots the server sends.
    if (this.seqEpoch !== undefined && this.seqEpoch !== w.epoch) this.stream.epochChanged();
    this.seqEpoch = w.epoch;
    this.live = true;
    this.attempts = 0;
    this.restartingUntil = 0;
    this.timers.set('stable', this.opts.stableAfterMs ?? 5000, () => this.backoff.reset());
    if (this.opts.heartbeat !== false) this.armHeartbeat(Math.max(100, w.heartbeatMs));
    this.setState('open');
    this.emit('welcome', w);
  }

  /**
   * After a welcome: one `subscribe` per feed (with `since` and the previous
   * epoch), all in this tick, then every request still waiting.
   */
  private restore(): void {
    const inflight = this.requests.all();
    const own = inflight.filter((r) => r.kind === 'subscribe' && r.plan !== undefined);
    const skip = (channel: string, market: string, code: string) =>
      own.some((r) => r.plan!.channel === channel && r.plan!.market === market && r.plan!.codes.includes(code));
    for (const plan of this.stream.subs.plan(skip)) this.resubscribe(plan);
    const subs = this.stream.subs;
    for (const req of inflight) {
      if (req.sent || this.requests.peek(req.id) !== req) continue;
      const plan = req.plan;
      if (plan !== undefined && !plan.codes.some((c) => subs.has(plan.channel, plan.market, c))) {
        // Unsubscribed again before it could be sent: nothing left to ask for.
        this.requests.take(req.id);
        req.resolve(undefined);
      } else this.send(req);
    }
  }

  private resubscribe(plan: SubscribePlan): void {
    const req: PendingRequest = {
      id: this.requests.id(),
      kind: 'resubscribe',
      plan,
      build: (id) => this.subscribeMsg(plan, id),
      sent: false,
      sentAt: 0,
      resolve: (reply) => {
        const recovered = (reply as { recovered?: Record<string, boolean> } | undefined)?.recovered;
        if (recovered !== undefined && Object.keys(recovered).length > 0) this.emit('resumed', recovered);
      },
      reject: (e) => this.resubscribeFailed(plan, e),
    };
    this.requests.add(req);
    this.send(req);
  }

  private resubscribeFailed(plan: SubscribePlan, e: KrxError): void {
    const subs = this.stream.subs;
    if (e.retryable) {
      return this.timers.later(RETRY_MS, () => {
        const codes = plan.codes.filter((c) => subs.has(plan.channel, plan.market, c));
        if (this.live && codes.length > 0) this.resubscribe({ ...plan, codes });
      });
    }
    if (e.code === 'invalid_code' && plan.codes.length > 1) {
      // One code (e.g. delisted meanwhile) refuses the whole message: halve until it stands alone.
      const half = Math.ceil(plan.codes.length / 2);
      this.resubscribe({ ...plan, codes: plan.codes.slice(0, half) });
      this.resubscribe({ ...plan, codes: plan.codes.slice(half) });
      return;
    }
    subs.remove(plan.channel, plan.market, plan.codes);
    this.pruneFeed(plan.channel, plan.market);
    const what = `${feedOf(plan.channel, plan.market)} [${plan.codes.join(',')}]`;
    this.emitError(new KrxError(e.code, `resubscribing ${what} failed, subscription dropped: ${e.message}`, { cause: e, retryable: false }));
  }

  private armHeartbeat(hb: number): void {
    this.timers.set('heartbeat', hb / 2, () => {
      const idle = now() - this.lastRx;
      if (idle >= 2 * hb) return this.drop('heartbeat timeout');
      if (idle >= hb) this.outbox.push('{"op":"ping"}');
      this.armHeartbeat(hb);
    });
  }

  // ---- frames ----------------------------------------------------------------

  private readonly handler: FrameHandler = {
    welcome: (m) => this.onWelcome(m),
    snapshot: (m) => this.stream.snapshot(m),
    patch: (m) => this.stream.patch(m),
    reply: (m) => this.requests.take(m.id)?.resolve(m),
    status: (m) => {
      // One sent before an unsubscribe reached the server: the feed is no longer this client's.
      if (!this.stream.subs.holds(m.channel, m.market)) return;
      this.statuses.set(feedOf(m.channel, m.market), m);
      this.emit('status', m);
    },
    error: (m) => this.onError(m),
    bad: (what) => this.emitError(new KrxError('protocol', `malformed ${what} from the server`)),
  };

  private onFrame(conn: Connection, text: string): void {
    if (conn !== this.conn) return;
    this.lastRx = now();
    const msgs = parseFrame(text);
    if (msgs === undefined) return this.emitError(new KrxError('protocol', 'a server frame is not JSON'));
    for (const m of msgs) {
      // A listener may have closed the client or dropped the connection mid-batch.
      if (conn !== this.conn) return;
      try {
        dispatch(m, this.handler);
      } catch (err) {
        this.emitError(new KrxError('protocol', 'a server message could not be handled', { cause: err }));
      }
    }
  }

  private onError(msg: ErrorMsg): void {
    const code = (typeof msg.code === 'string' ? msg.code : 'internal') as KrxErrorCode;
    const err = new KrxError(code, typeof msg.message === 'string' ? msg.message : code, {
      ...(typeof msg.retryable === 'boolean' ? { retryable: msg.retryable } : {}),
      ...(typeof msg.topic === 'string' ? { topic: msg.topic } : {}),
    });
    const req = this.requests.take(msg.id);
    if (req !== undefined) return req.reject(err);
    if (this.opts.replay !== undefined && msg.id === undefined && !this.live) this.refused = err;
    if (!this.stream.resyncError(msg, err)) this.emitError(err);
  }
}

function withToken(url: string, token: string): string {
  const u = new URL(url);
  u.searchParams.set('token', token);
  return u.toString();
}
