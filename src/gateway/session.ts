import type { Socket } from 'node:net';
import { WebSocket } from 'ws';
import type { Limits } from '../protocol/constants.js';
import type { CloseName } from '../protocol/errors.js';
import { directSocket, headerLength, senderIdle, writeTextHeader } from './frame.js';
import type { Subscriber } from './index.js';
import { TokenBucket, WindowCounter, messageBucket, perMinuteBucket } from './limits.js';
import { Mode, overCap, slowAction, type SlowPolicy } from './slow.js';
import { SmallSet } from './smallset.js';

/**
 * One client connection: identity, limits, subscriptions (as the index
 * sees them) and its outbound side: the per-tick pending frames and the
 * slow-consumer state. See docs/PROTOCOL.md §Slow consumers.
 */

/** What a session needs from the gateway that owns it. */
export interface SessionHost {
  readonly policy: SlowPolicy;
  /** Messages per frame when many go out at once (snapshots on subscribe or drain). */
  readonly chunk: number;
  /** Options of every `ws.send` (text frames; compression per configuration). */
  readonly sendOptions: { readonly binary: false; readonly compress: boolean };
  now(): number;
  /** Snapshot frames of `topics` of `s` that it still receives, or of all its topics when undefined. */
  snapshotsFor(s: Session, topics: Iterable<string> | undefined): string[];
  /** Counts one frame of `bytes` written. */
  wrote(bytes: number): void;
  /** Counts messages sent, by type. */
  sent(type: string, n: number): void;
  /** A slow-consumer step was taken; `behind` says whether the session is now behind. */
  slowStep(s: Session, step: 'conflate' | 'resnapshot' | 'drain', behind: boolean): void;
  /** Closes `s` with a server close code. */
  close(s: Session, name: CloseName): void;
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

const OPEN = WebSocket.OPEN;
const LBRACKET = 0x5b;
const COMMA = 0x2c;
const RBRACKET = 0x5d;

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
  /** Last time the peer showed it is alive (pong or message), ms epoch. */
  lastSeen: number;
  /** Set once the server started closing the connection. */
  closing = false;
  /** Closes the connection when the token expires. */
  expiryTimer: NodeJS.Timeout | undefined;
  /** Bytes of this connection's `get` replies queued and not yet written (ReplyQueue). */
  queuedReplyBytes = 0;
  /** This connection's `get`s not answered yet (looked up, or queued to be written). */
  getsInFlight = 0;

  private pending: Buffer[] = [];
  private answers: string[] | undefined;
  private pendingBytes = 0;
  // Made on first use: most connections never `get`, pass the rate limit or fall behind.
  private violations_: WindowCounter | undefined;
  private dirty: Set<string> | undefined;
  /** The TCP socket under `ws` when frames may be written to it directly (see frame.ts). */
  private readonly direct: Socket | undefined;
  private mode: Mode = Mode.Live;
  private skipped = 0;
  private behindSince = 0;

  /** A session for an accepted WebSocket. */
  constructor(
    readonly id: number,
    readonly ws: WebSocket,
    readonly who: SessionIdentity,
    readonly limits: Limits,
    private readonly host: SessionHost,
    floodFactor: number,
  ) {
    const now = host.now();
    this.inbound = messageBucket(limits.maxMessagesPerSecond, now);
    this.flood = new WindowCounter(Math.ceil(limits.maxMessagesPerSecond * floodFactor), 1000);
    this.lastSeen = now;
    this.direct = host.sendOptions.compress ? undefined : directSocket(ws);
  }

  /** Trips when the client keeps passing the rate limit: 5 × the per-second limit of refusals in 10 s. */
  get violations(): WindowCounter {
    return (this.violations_ ??= new WindowCounter(Math.ceil(this.limits.maxMessagesPerSecond * 5), 10_000));
  }

  /** Explicit topics held. */
  get explicitCount(): number {
    return this.explicit.size;
  }

  /** Whether updates are written (not behind). */
  get live(): boolean {
    return this.mode === Mode.Live;
  }

  /** Slow-consumer mode, for tests and `/status`. */
  get slowMode(): 'live' | 'conflating' | 'resnapshot' {
    return this.mode === Mode.Live ? 'live' : this.mode === Mode.Conflating ? 'conflating' : 'resnapshot';
  }

  /**
   * Queues one pre-serialised frame of `topic` for this tick's flush; when
   * behind, marks the topic dirty instead. Returns whether it was queued.
   * The hot path: no allocation besides the array slot.
   */
  push(topic: string, frame: Buffer, touched: Session[]): boolean {
    if (this.answers !== undefined) this.flushAnswers();
    if (this.mode !== Mode.Live) {
      if (this.mode === Mode.Conflating) (this.dirty ??= new Set()).add(topic);
      this.skipped += frame.length;
      return false;
    }
    if (this.pending.length === 0) touched.push(this);
    this.pending.push(frame);
    this.pendingBytes += frame.length;
    return true;
  }

  /**
   * Writes this tick's queued frames as ONE WebSocket frame (the message,
   * or a JSON array of them), then applies the slow-consumer policy.
   * Returns the payload bytes written (0 when nothing was).
   */
  flush(): number {
    const list = this.pending;
    const n = list.length;
    if (n === 0) return 0;
    const len = n === 1 ? list[0]!.length : this.pendingBytes + n + 1;
    let written = 0;
    if (this.ws.readyState === OPEN && overCap(this.ws.bufferedAmount, this.skipped, len, this.host.policy)) {
      list.length = 0;
      this.pendingBytes = 0;
      this.host.close(this, 'slowConsumer');
      return 0;
    }
    if (this.ws.readyState === OPEN) {
      const direct = this.direct !== undefined && senderIdle(this.ws);
      // Directly: header and payload in one buffer, one write. Otherwise ws frames the payload.
      const at = direct ? headerLength(len) : 0;
      let data: Buffer;
      if (n === 1 && !direct) data = list[0]!;
      else {
        data = Buffer.allocUnsafe(at + len);
        if (direct) writeTextHeader(data, len);
        if (n === 1) list[0]!.copy(data, at);
        else joinInto(data, at, list);
      }
      if (direct) this.direct!.write(data);
      else this.ws.send(data, this.host.sendOptions);
      written = len;
    }
    list.length = 0;
    this.pendingBytes = 0;
    if (written > 0 && this.ws.bufferedAmount > this.host.policy.conflateBytes) this.checkSlow();
    return written;
  }

  /**
   * Writes one serialised message (or pre-joined frame) now, whatever the
   * slow-consumer mode. Replies count toward the lag like updates do: a
   * live connection whose socket then holds more than `conflateBytes` is
   * checked at once, a behind one by the gateway's periodic check.
   */
  sendNow(payload: string | Buffer): void {
    if (this.answers !== undefined) this.flushAnswers();
    if (!this.write(payload)) return;
    if (this.mode === Mode.Live && this.ws.bufferedAmount > this.host.policy.conflateBytes) this.checkSlow();
  }

  /**
   * Writes the reply to a `get` unless the connection already holds more
   * than `replyBytes` (or would pass `closeBytes`, which closes it): resolves
   * false when it was not written, so the caller answers with a short error.
   */
  sendReply(parts: readonly Buffer[]): boolean {
    if (this.ws.readyState !== OPEN || this.closing) return false;
    if (this.answers !== undefined) this.flushAnswers();
    let len = 0;
    for (const p of parts) len += p.length;
    const buffered = this.ws.bufferedAmount;
    if (buffered + len > this.host.policy.replyBytes && buffered > 0) return false;
    if (overCap(buffered, this.skipped, len, this.host.policy)) {
      this.host.close(this, 'slowConsumer');
      return false;
    }
    if (this.direct !== undefined && senderIdle(this.ws)) {
      // The parts go out as they are (a cached answer's bytes are shared by every reply), behind one header.
      const head = Buffer.allocUnsafe(headerLength(len));
      writeTextHeader(head, len);
      this.direct.cork();
      this.direct.write(head);
      for (const p of parts) this.direct.write(p);
      this.direct.uncork();
    } else this.ws.send(Buffer.concat(parts, len), this.host.sendOptions);
    this.host.wrote(len);
    if (this.mode === Mode.Live && this.ws.bufferedAmount > this.host.policy.conflateBytes) this.checkSlow();
    return true;
  }

  /** Whether replies are waiting (queued or in the socket) beyond `replyBytes`: a new `get` is refused at once. */
  get repliesBacklogged(): boolean {
    return this.ws.bufferedAmount + this.queuedReplyBytes > this.host.policy.replyBytes;
  }

  /**
   * Writes many serialised messages in frames of at most `host.chunk`
   * messages each (a whole-market snapshot in a few frames, not thousands).
   */
  sendChunks(frames: readonly string[]): void {
    this.writeChunks(frames);
    if (this.mode === Mode.Live && this.ws.bufferedAmount > this.host.policy.conflateBytes) this.checkSlow();
  }

  /**
   * Sends the answers to client frames (`subscribed` and its snapshots,
   * `unsubscribed`, `pong`, `error`, …) in order. The answers to one burst of
   * client frames (a flood refused one by one) go out together, in frames of
   * at most `host.chunk` messages, once the burst has been read: a few writes
   * instead of thousands. Anything else written to the connection (patches,
   * statuses, `get` results) writes the waiting answers first, so the order
   * of everything sent is the order it was sent in.
   */
  reply(frame: string): void {
    if (this.answers === undefined) {
      this.answers = [];
      queueMicrotask(this.flushAnswers);
    }
    this.answers.push(frame);
  }

  /** `reply` of several answers, in order. */
  replyAll(frames: readonly string[]): void {
    for (const f of frames) this.reply(f);
  }

  /** Writes the answers waiting to go out together (before a close too, so they precede it). */
  readonly flushAnswers = (): void => {
    const list = this.answers;
    this.answers = undefined;
    if (list === undefined || list.length === 0 || this.closing) return;
    this.sendChunks(list);
  };

  /** Marks a topic for a fresh snapshot when the connection drains (behind only). */
  markDirty(topic: string): void {
    if (this.mode === Mode.Conflating) (this.dirty ??= new Set()).add(topic);
  }

  /**
   * Applies the slow-consumer policy (slow.ts) until it asks for nothing
   * more: conflate, resnapshot, drain (fresh snapshots), or close with 4008.
   */
  checkSlow(now = this.host.now()): void {
    for (let step = 0; step < 4 && !this.closing; step++) {
      const behindMs = this.mode === Mode.Live ? 0 : now - this.behindSince;
      const act = slowAction(this.mode, this.ws.bufferedAmount, this.skipped, behindMs, this.host.policy);
      if (act === 'none') return;
      if (act === 'close') return this.host.close(this, 'slowConsumer');
      if (act === 'conflate') {
        this.mode = Mode.Conflating;
        this.behindSince = now;
        this.host.slowStep(this, 'conflate', true);
      } else if (act === 'resnapshot') {
        this.mode = Mode.Resnapshot;
        this.dirty = undefined;
        this.host.slowStep(this, 'resnapshot', true);
      } else this.drain();
    }
  }

  private drain(): void {
    if (this.answers !== undefined) this.flushAnswers();
    const topics = this.mode === Mode.Resnapshot ? undefined : [...(this.dirty ?? [])];
    this.mode = Mode.Live;
    this.dirty = undefined;
    this.skipped = 0;
    this.host.slowStep(this, 'drain', false);
    const frames = this.host.snapshotsFor(this, topics);
    if (frames.length === 0) return;
    this.host.sent('snapshot', frames.length);
    // Written without a check: the policy loop that drained is still running (checkSlow).
    this.writeChunks(frames);
  }

  /** Writes serialised messages in frames of at most `host.chunk` messages each. */
  private writeChunks(frames: readonly string[]): void {
    const size = this.host.chunk;
    for (let i = 0; i < frames.length; i += size) {
      const end = Math.min(frames.length, i + size);
      this.write(end - i === 1 ? frames[i]! : '[' + frames.slice(i, end).join(',') + ']');
    }
  }

  /**
   * Writes a payload if the socket is open; false when it is not, or when it
   * would take the connection past `closeBytes` (it is closed with 4008).
   */
  private write(payload: string | Buffer): boolean {
    if (this.ws.readyState !== OPEN || this.closing) return false;
    let len = typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length;
    if (overCap(this.ws.bufferedAmount, this.skipped, len, this.host.policy)) {
      this.host.close(this, 'slowConsumer');
      return false;
    }
    if (this.direct !== undefined && senderIdle(this.ws)) {
      const data = Buffer.allocUnsafe(headerLength(len) + len);
      const at = writeTextHeader(data, len);
      if (typeof payload === 'string') data.write(payload, at);
      else payload.copy(data, at);
      this.direct.write(data);
    } else {
      const data = typeof payload === 'string' ? Buffer.from(payload) : payload;
      len = data.length;
      this.ws.send(data, this.host.sendOptions);
    }
    this.host.wrote(len);
    return true;
  }
}

/** Writes `[a,b,…]` of the serialised messages in `list` into `out` from `at`. */
function joinInto(out: Buffer, at: number, list: readonly Buffer[]): void {
  out[at] = LBRACKET;
  let off = at + 1;
  for (let i = 0; i < list.length; i++) {
    if (i > 0) out[off++] = COMMA;
    off += list[i]!.copy(out, off);
  }
  out[off] = RBRACKET;
}
