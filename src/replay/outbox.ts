import type { WebSocket } from 'ws';
import { behindAction, overCap, type SlowPolicy } from '../gateway/slow.js';

/**
 * The outbound side of a replay connection, under the slow-consumer policy
 * of live connections (src/gateway/slow.ts, the same thresholds): the
 * recorded changes of one recorded moment go out together, in frames of
 * about `frameBytes` as a live tick's do; a client
 * whose socket holds more than `conflateBytes` is behind: each changed
 * topic is marked dirty (at most the topics it subscribes to), nothing is
 * queued; past `closeBytes` of lag or `maxBehindMs` it is closed with 4008;
 * once its socket has drained it gets fresh snapshots of the dirty topics at
 * the replay clock and is live again.
 * See docs/REPLAY.md and docs/PROTOCOL.md §Slow consumers.
 */

/** What the outbox needs of its connection. */
export interface OutboxHost {
  /** The monotonic clock, ms (how long the connection has been behind). */
  now(): number;
  /** Snapshot frames, at the replay clock, of `topics` still subscribed, or of every subscribed topic when undefined. */
  snapshots(topics: Iterable<string> | undefined): string[];
  /** Closes the connection: 4008, too far behind. */
  closeSlow(): void;
  /** A slow-consumer step was taken (for krx_slow_consumer_total). */
  step(step: 'conflate' | 'drain'): void;
}

/** How often a connection that is behind is checked for having drained, ms (as the gateway's `slowCheckMs`). */
const CHECK_MS = 100;

/**
 * `frames` (each one message's JSON) as the payloads of WebSocket frames
 * of at most about `max` characters, in order: one message alone, or a
 * JSON array of several; a longer message is a frame of its own. As a
 * live connection frames a tick's updates (`SlowPolicy.frameBytes`).
 */
export function framesOf(frames: readonly string[], max: number): string[] {
  const out: string[] = [];
  let from = 0;
  let size = 0;
  const cut = (to: number): void => {
    if (to > from) out.push(to - from === 1 ? frames[from]! : `[${frames.slice(from, to).join(',')}]`);
    from = to;
    size = 0;
  };
  for (let i = 0; i < frames.length; i++) {
    // The array's brackets and commas count too.
    if (i > from && size + frames[i]!.length + 1 > max) cut(i);
    size += frames[i]!.length + 1;
  }
  cut(frames.length);
  return out;
}

/** The outbound frames of one replay connection. */
export class ReplayOutbox {
  private pending: string[] = [];
  private behindNow = false;
  private dirty: Set<string> | undefined;
  private skipped = 0;
  private behindSince = 0;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  /**
   * An outbox writing to `ws` under `policy`. `paced`: the replay waits for
   * the client to read (speed `max`), so nothing is conflated; only the
   * close threshold applies.
   */
  constructor(
    private readonly ws: WebSocket,
    private readonly policy: SlowPolicy,
    private readonly paced: boolean,
    private readonly host: OutboxHost,
  ) {}

  /** Whether the connection is behind (its changed topics only marked). */
  get behind(): boolean {
    return this.behindNow;
  }

  /** Queues a recorded change of `topic` for the next `flush`; when behind, marks the topic instead. */
  update(topic: string, frame: string): void {
    if (!this.behindNow) {
      this.pending.push(frame);
      return;
    }
    (this.dirty ??= new Set()).add(topic);
    this.skipped += Buffer.byteLength(frame);
  }

  /** Writes the queued changes (`framesOf`: one message, or JSON arrays of them, in frames of about `frameBytes`), then applies the policy. */
  flush(): void {
    const list = this.pending;
    if (list.length === 0) return;
    this.pending = [];
    if (this.writeAll(list)) this.check();
  }

  /** Writes a frame now, whatever the mode (answers, statuses): queued changes go first, and it counts toward the lag. */
  send(frame: string): void {
    this.flush();
    if (this.write(frame)) this.check();
  }

  /** Writes messages now, in order, framed as `flush` frames them (a subscribe's answer, snapshots and status): queued changes go first. */
  sendAll(frames: readonly string[]): void {
    this.flush();
    if (this.writeAll(frames)) this.check();
  }

  /** Applies the slow-consumer policy: falls behind, catches up (fresh snapshots of what changed meanwhile) or closes. */
  check(): void {
    if (this.closed) return;
    const now = this.host.now();
    if (!this.behindNow) {
      if (this.ws.bufferedAmount <= this.policy.conflateBytes) return;
      if (this.paced) return;
      this.behindNow = true;
      this.behindSince = now;
      // Nothing else may come to check it while it is behind (a quiet stretch of the recording): a timer does.
      this.timer ??= setInterval(() => this.check(), CHECK_MS);
      this.host.step('conflate');
      return;
    }
    const act = behindAction(this.ws.bufferedAmount, this.skipped, now - this.behindSince, this.policy);
    if (act === 'close') return this.close();
    if (act === 'resume') this.drain();
  }

  /** Stops the outbox (the connection is closing): nothing more is written. */
  stop(): void {
    this.closed = true;
    this.pending = [];
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private drain(): void {
    const topics = [...(this.dirty ?? [])];
    this.behindNow = false;
    this.dirty = undefined;
    this.skipped = 0;
    clearInterval(this.timer);
    this.timer = undefined;
    this.host.step('drain');
    this.writeAll(this.host.snapshots(topics));
  }

  private close(): void {
    this.stop();
    this.host.closeSlow();
  }

  /** Writes messages in frames of about `frameBytes` (`framesOf`); false as soon as one is not written. */
  private writeAll(frames: readonly string[]): boolean {
    for (const payload of framesOf(frames, this.policy.frameBytes)) if (!this.write(payload)) return false;
    return true;
  }

  /** Writes a payload if the socket is open; false when not, or when it would pass `closeBytes` (then it closes, 4008). */
  private write(payload: string): boolean {
    if (this.closed || this.ws.readyState !== this.ws.OPEN) return false;
    if (overCap(this.ws.bufferedAmount, this.skipped, Buffer.byteLength(payload), this.policy)) {
      this.close();
      return false;
    }
    this.ws.send(payload);
    return true;
  }
}
