import type { Socket } from 'node:net';
import { WebSocket } from 'ws';
import type { Limits } from '../protocol/constants.js';
import type { CloseName } from '../protocol/errors.js';
import { directSocket, socketOf, writeMessages, writeParts, writeText, type FrameTarget } from './frame.js';
import { Behind } from './behind.js';
import { Outbox, type Messages } from './outbox.js';
import type { Subscriber } from './index.js';
import { TokenBucket, WindowCounter, messageBucket } from '../access/limits.js';
import { behindAction, overCap, type SlowPolicy } from './slow.js';
import { SmallSet } from './smallset.js';

/**
 * One client connection: identity, limits, subscriptions (as the index
 * sees them) and its outbound side: the per-tick pending frames, the
 * answers waiting to be written, and the slow-consumer state. Nothing is
 * written past what the socket takes (slow.ts): a connection that falls
 * behind keeps the tick it stopped at, not bytes, and catches up with
 * fresh snapshots of what changed since. See docs/PROTOCOL.md §7.
 */

/** What a session needs from the gateway that owns it. */
export interface SessionHost {
  readonly policy: SlowPolicy;
  /** Options of every `ws.send` (text frames; compression per configuration). */
  readonly sendOptions: { readonly binary: false; readonly compress: boolean };
  /** Whether frames may be written straight to the TCP socket when ws's internals allow it (GatewayOptions.directWrite). */
  readonly directWrite: boolean;
  /** The change clock (clock.ts): the tick of the latest batch. */
  readonly clock: { readonly tick: number };
  /** The monotonic clock, ms (GatewayOptions.monotonic): rate limits, liveness, time behind. Never the wall clock. */
  monotonic(): number;
  /** Fresh snapshots of the topics `s` receives that changed in batch `since` or later, one by one. */
  owed(s: Session, since: number): Iterator<string, unknown>;
  /** Counts one frame of `bytes` written. */
  wrote(bytes: number): void;
  /** Counts messages sent, by type. */
  sent(type: string, n: number): void;
  /** A slow-consumer step was taken: `conflate` (fell behind) or `drain` (live again). */
  slowStep(s: Session, step: 'conflate' | 'drain', behind: boolean): void;
  /** Closes `s` with a server close code. */
  close(s: Session, name: CloseName): void;
  /** Making or writing what waits for `s` failed (a bug): it is logged and `s` closed with 1011. */
  fault(s: Session, err: unknown): void;
}

/** Who the client is, as authentication established it. */
export interface SessionIdentity {
  /** Remote address (connection caps are per address). */
  readonly addr: string;
  /** Client id from the token (`sub` of a JWT, or the token's id), if any. */
  readonly clientId?: string;
  /** Hash prefix of the token, for logs. */
  readonly tokenHash?: string;
  /** For a static token: whether it is still configured. */
  readonly stillValid?: () => boolean;
}

/** Frames and bytes a fan-out flush wrote, summed over sessions. */
export interface FlushTally {
  frames: number;
  bytes: number;
}

const OPEN = WebSocket.OPEN;

/** One WebSocket client. */
export class Session implements Subscriber {
  /** Explicit topics, of every feed (kept by the SubscriptionIndex). */
  readonly explicit = new SmallSet();
  /** Wildcard feeds (kept by the SubscriptionIndex). */
  readonly wildcards = new SmallSet();
  /** Inbound message rate: `maxMessagesPerSecond`, bursts of twice that. */
  readonly inbound: TokenBucket;
  /** Trips when the client floods: more than `floodFactor` × the message limit in one second. */
  readonly flood: WindowCounter;
  /** Last time the peer showed it is alive (pong or message), on the monotonic clock (ms); while the connection is behind, the last heartbeat (it is not timed then). */
  lastSeen: number;
  /** Set once the server started closing the connection. */
  closing = false;
  /** Set once the connection passed a limit that closes it (1008) while frames before it still wait to be handled: nothing more is taken from it. */
  condemned = false;
  /** Closes the connection when the token expires. */
  expiryTimer: NodeJS.Timeout | undefined;
  /** Bytes of this connection's `get` replies queued and not yet written (ReplyQueue). */
  queuedReplyBytes = 0;
  /** This connection's `get`s not answered yet (looked up, or queued to be written). */
  getsInFlight = 0;
  /**
   * Topics the client holds at a seq this process has not reached yet (it
   * resumed from a process of the cluster that was ahead), by topic: the
   * patches up to that seq are not sent again. Only while some are.
   */
  ahead: Map<string, number> | undefined;

  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Answers, statuses and subscribe snapshots waiting to be written, in order; only while some wait. */
  private outbox: Outbox | undefined;
  private scheduled = false;
  // Made on first use: most connections never `get`, pass the rate limit or fall behind.
  private violations_: WindowCounter | undefined;
  private onDrain: (() => void) | undefined;
  private onSent: (() => void) | undefined;
  private drainArmed = false;
  private readonly out: FrameTarget;
  /** The TCP socket under `ws`: its write queue is what the kernel has not taken. */
  private readonly socket: Socket | undefined;
  /** Set while the connection is behind (its socket stopped taking what is written). */
  private behind: Behind | undefined;

  /** A session for an accepted WebSocket. */
  constructor(
    readonly id: number,
    readonly ws: WebSocket,
    readonly who: SessionIdentity,
    readonly limits: Limits,
    private readonly host: SessionHost,
    floodFactor: number,
  ) {
    const now = host.monotonic();
    this.inbound = messageBucket(limits.maxMessagesPerSecond, now);
    this.flood = new WindowCounter(Math.ceil(limits.maxMessagesPerSecond * floodFactor), 1000);
    this.lastSeen = now;
    this.socket = socketOf(ws);
    this.out = { ws, direct: host.sendOptions.compress || !host.directWrite ? undefined : directSocket(ws), sendOptions: host.sendOptions, pingDue: false };
  }

  /** Trips when the client keeps passing the rate limit: 5 × the per-second limit of refusals in 10 s. */
  get violations(): WindowCounter {
    return (this.violations_ ??= new WindowCounter(Math.ceil(this.limits.maxMessagesPerSecond * 5), 10_000));
  }

  /** Explicit topics held. */
  get explicitCount(): number {
    return this.explicit.size;
  }

  /** The client holds `topic` at `seq`, ahead of this process: its patches up to `seq` are not sent. */
  holdsAhead(topic: string, seq: number): void {
    (this.ahead ??= new Map()).set(topic, seq);
  }

  /**
   * Whether a change is one the client already holds (a patch up to the
   * seq it resumed at); the first change past that seq ends the hold.
   */
  alreadyHas(topic: string, seq: number, kind: 'snapshot' | 'patch'): boolean {
    const at = this.ahead?.get(topic);
    if (at === undefined) return false;
    if (kind === 'patch' && seq <= at) return true;
    this.forgetAhead(topic);
    return false;
  }

  /** Ends the hold of `topic` (unsubscribed, or sent a fresh snapshot), or of every topic of a feed (`feed.`). */
  forgetAhead(topic: string): void {
    const a = this.ahead;
    if (a === undefined) return;
    if (topic.endsWith('.')) {
      for (const t of a.keys()) if (t.startsWith(topic)) a.delete(t);
    } else a.delete(topic);
    if (a.size === 0) this.ahead = undefined;
  }

  /**
   * Queues one pre-serialised update for this tick's flush; when behind,
   * only counts its bytes. Returns whether it was queued. The hot path: no
   * allocation besides the array slot.
   */
  push(frame: Buffer, touched: Session[]): boolean {
    const b = this.behind;
    if (b !== undefined) {
      b.skipped += frame.length;
      if (overCap(this.ws.bufferedAmount, b.skipped + (this.outbox?.chars ?? 0), 0, this.host.policy)) this.host.close(this, 'slowConsumer');
      return false;
    }
    if (this.pending.length === 0) touched.push(this);
    this.pending.push(frame);
    this.pendingBytes += frame.length;
    return true;
  }

  /**
   * Writes this tick's queued updates (after any answers waiting) in
   * frames of at most `frameBytes`, each a message or a JSON array of them,
   * while the socket takes them. When it stops taking them the connection
   * falls behind from this tick, and the rest is dropped: what it misses is
   * owed as fresh snapshots, computed when it drains.
   */
  flush(tally: FlushTally): void {
    const list = this.pending;
    const n = list.length;
    if (n === 0) return;
    const tick = this.host.clock.tick;
    if (this.outbox !== undefined) this.pump(tick);
    if (this.ws.readyState === OPEN && !this.closing && this.behind === undefined) {
      const { conflateBytes, frameBytes } = this.host.policy;
      for (let i = 0; i < n;) {
        const room = conflateBytes - this.queued();
        if (room <= 0) {
          let rest = 0;
          for (; i < n; i++) rest += list[i]!.length;
          this.fallBehind(tick).skipped += rest;
          break;
        }
        // A frame fills what the queue may still hold, up to frameBytes (and has at least one message).
        // Through ws (compressing), a tick is one message: ws queues each frame while it compresses the one before.
        const limit = this.out.direct !== undefined ? Math.min(frameBytes, room) : Infinity;
        let j = i + 1;
        let bytes = list[i]!.length;
        while (j < n && bytes + list[j]!.length <= limit) bytes += list[j++]!.length;
        tally.bytes += writeMessages(this.out, list, i, j, bytes);
        tally.frames++;
        i = j;
      }
    } else if (this.behind !== undefined) this.behind.skipped += this.pendingBytes;
    list.length = 0;
    this.pendingBytes = 0;
  }

  /**
   * The heartbeat's ping. Written straight to the socket, it waits for the
   * next frame of updates and goes out in the same write; `pingIfDue`
   * sends it on its own when none came.
   */
  heartbeat(): void {
    if (this.out.direct !== undefined && this.behind === undefined) this.out.pingDue = true;
    else this.ws.ping();
  }

  /** Sends the heartbeat's ping if no frame has carried it yet. */
  pingIfDue(): void {
    if (this.out.pingDue !== true) return;
    this.out.pingDue = false;
    if (!this.closing) this.ws.ping();
  }

  /** Sends one serialised message (a feed's `status`) after whatever waits before it; when behind, once the socket drains. */
  sendNow(message: string): void {
    (this.outbox ??= new Outbox()).push(message);
    if (this.behind === undefined) this.pump(this.host.clock.tick + 1);
  }

  /**
   * Writes the reply to a `get` unless the connection already holds more
   * than `replyBytes` (or would pass `closeBytes`, which closes it): resolves
   * false when it was not written, so the caller answers with a short error.
   * Replies count toward the lag like everything else.
   */
  sendReply(parts: readonly Buffer[]): boolean {
    if (this.ws.readyState !== OPEN || this.closing) return false;
    if (this.outbox !== undefined && this.behind === undefined) this.pump(this.host.clock.tick + 1);
    let len = 0;
    for (const p of parts) len += p.length;
    const buffered = this.ws.bufferedAmount;
    if (buffered + len > this.host.policy.replyBytes && buffered > 0) return false;
    if (overCap(buffered, (this.behind?.skipped ?? 0) + (this.outbox?.chars ?? 0), len, this.host.policy)) {
      this.host.close(this, 'slowConsumer');
      return false;
    }
    writeParts(this.out, parts, len);
    this.host.wrote(len);
    return true;
  }

  /** Whether replies are waiting (queued or in the socket) beyond `replyBytes`: a new `get` is refused at once. */
  get repliesBacklogged(): boolean {
    return this.ws.bufferedAmount + this.queuedReplyBytes > this.host.policy.replyBytes;
  }

  /**
   * Sends the answer to a client frame (`subscribed`, `unsubscribed`,
   * `pong`, `error`, …) after everything before it. The answers to one burst
   * of client frames (a flood refused one by one) go out together, in a few
   * frames, once the burst has been read. Updates and replies written
   * meanwhile write the waiting answers first, so everything goes out in
   * the order it was sent.
   */
  reply(frame: string): void {
    (this.outbox ??= new Outbox()).push(frame);
    this.schedule();
  }

  /** `reply` of several answers, in order. */
  replyAll(frames: readonly string[]): void {
    for (const f of frames) this.reply(f);
  }

  /**
   * Sends the messages `messages` makes, in order after the answers before
   * it; each is made when it is about to be written (a whole market's
   * snapshots are made as the socket takes them, never all held at once).
   */
  replyLater(messages: Messages): void {
    (this.outbox ??= new Outbox()).push(messages);
    this.schedule();
  }

  /** Writes the answers waiting, as far as the socket takes them (before a close too, so they precede it). */
  readonly flushAnswers = (): void => {
    this.scheduled = false;
    if (!this.closing) this.pump(this.host.clock.tick + 1);
  };

  /**
   * The periodic check of a behind connection: closed with 4008 when too
   * far or too long behind, written to again once its socket drained.
   */
  check(now = this.host.monotonic()): void {
    const b = this.behind;
    if (b === undefined || this.closing) return;
    const act = behindAction(this.ws.bufferedAmount, b.skipped + (this.outbox?.chars ?? 0), now - b.at, this.host.policy);
    if (act === 'close') this.host.close(this, 'slowConsumer');
    else if (act === 'resume') this.pump(this.host.clock.tick + 1);
  }

  /** Drops what waits to be written (the connection closed); lazily made messages are ended. */
  dispose(): void {
    this.outbox?.clear();
    this.outbox = undefined;
    const b = this.behind;
    if (b !== undefined) {
      b.end();
      this.countMade(b);
    }
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    queueMicrotask(this.flushAnswers);
  }

  /** Bytes waiting to be written: in the socket's queue (what its kernel buffer did not take), and ws's when it compresses. */
  private queued(): number {
    return this.out.direct !== undefined ? this.out.direct.writableLength : this.ws.bufferedAmount;
  }

  /**
   * Writes what waits (answers, then, when behind, owed snapshots) in
   * frames while the socket takes them. When it stops taking them with
   * answers still waiting, a live connection falls behind from tick
   * `since` (the first batch it has not received in full). Messages are
   * made here, often outside any request's handler: a failure closes this
   * connection (1011) instead of reaching the event loop.
   */
  private pump(since: number): void {
    try {
      this.pumpFrames(since);
    } catch (err) {
      // What waits cannot be trusted any more: dropped, so the close that follows writes none of it.
      this.dispose();
      this.host.fault(this, err);
    }
  }

  private pumpFrames(since: number): void {
    const { conflateBytes, frameBytes } = this.host.policy;
    while (this.ws.readyState === OPEN && !this.closing) {
      const room = conflateBytes - this.queued();
      if (room <= 0) {
        if (this.behind !== undefined) this.armDrain();
        else if (this.outbox !== undefined) this.fallBehind(since);
        return;
      }
      const parts = this.collect(Math.min(frameBytes, room));
      if (parts === undefined) return;
      // ws tells when a frame it queued (compressing) reached the socket: the time to write more, as 'drain' is for the socket.
      const sent = this.out.direct === undefined ? (this.onSent ??= () => this.resume()) : undefined;
      this.host.wrote(writeText(this.out, parts.length === 1 ? parts[0]! : '[' + parts.join(',') + ']', sent));
    }
  }

  /** The next messages to write, about `limit` characters in all (at least one); undefined when nothing waits. */
  private collect(limit: number): string[] | undefined {
    let parts: string[] | undefined;
    let size = 0;
    while (size < limit) {
      const m = this.next();
      if (m === undefined) break;
      (parts ??= []).push(m);
      size += m.length;
    }
    return parts;
  }

  /** The next message to write: what waits in the outbox, then, when behind, the next owed snapshot. */
  private next(): string | undefined {
    if (this.outbox !== undefined) {
      const m = this.outbox.next();
      if (m !== undefined) return m;
      this.outbox = undefined;
    }
    return this.behind !== undefined ? this.nextOwed(this.behind) : undefined;
  }

  /** The next snapshot owed to a behind connection; when there is none, it has caught up and is live again. */
  private nextOwed(b: Behind): string | undefined {
    const m = b.next(this.host.clock.tick);
    if (m !== undefined) return m;
    this.behind = undefined;
    this.countMade(b);
    this.host.slowStep(this, 'drain', false);
    return undefined;
  }

  /** Falls behind from tick `since`, the first batch the connection may not have received in full. */
  private fallBehind(since: number): Behind {
    // What it is owed are fresh snapshots, whatever seq they carry: nothing is held back any more.
    this.ahead = undefined;
    const b = (this.behind = new Behind(since, this.host.monotonic(), (from) => this.host.owed(this, from)));
    this.host.slowStep(this, 'conflate', true);
    this.armDrain();
    return b;
  }

  private countMade(b: Behind): void {
    if (b.made > 0) this.host.sent('snapshot', b.made);
    b.made = 0;
  }

  /** Resumes writing when the socket's queue empties (the gateway's periodic check covers sockets that never say so). */
  private armDrain(): void {
    if (this.drainArmed || this.socket === undefined) return;
    this.drainArmed = true;
    this.socket.once(
      'drain',
      (this.onDrain ??= () => {
        this.drainArmed = false;
        this.resume();
      }),
    );
  }

  /** Writes on when something waits (answers, or owed snapshots). */
  private resume(): void {
    if (!this.closing && (this.outbox !== undefined || this.behind !== undefined)) this.pump(this.host.clock.tick + 1);
  }
}
