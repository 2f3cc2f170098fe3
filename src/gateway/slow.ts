/**
 * The slow-consumer policy: what to do with a connection that does not read
 * as fast as updates arrive. Pure: the session supplies its numbers and
 * applies the action. See docs/PROTOCOL.md §7 and docs/OPERATIONS.md §5.2.
 *
 * Writes are held to what a connection's socket takes. Updates go out in
 * frames of at most `frameBytes`, each written only while the socket's own
 * queue (the bytes its kernel buffer has not taken) holds at most
 * `conflateBytes`. When it holds more, the connection is *behind*: nothing
 * more is written or kept for it but the tick it stopped at (clock.ts).
 * Once its socket drains it is sent, in frames as its socket takes them, a
 * fresh snapshot of every topic it receives that changed since that tick,
 * pass after pass, until a pass finds nothing changed: it is live again.
 *
 * A connection's *lag* is the bytes waiting in its socket, plus the bytes
 * of updates it skipped since it fell behind, plus answers waiting to be
 * written. It is closed with 4008 when the lag would pass `closeBytes`, or
 * when it has been behind for longer than `maxBehindMs`.
 */

/** Thresholds of the slow-consumer policy. */
export interface SlowPolicy {
  /** Bytes in a socket's own queue above which the connection is behind; default 32 KiB. */
  readonly conflateBytes: number;
  /** Lag above which the connection is closed with 4008; default 16 MiB. */
  readonly closeBytes: number;
  /** Longest time a connection may stay behind before it is closed with 4008, ms; default 30,000. */
  readonly maxBehindMs: number;
  /** Socket bytes at or below which a behind connection is written to again; default a quarter of `conflateBytes`. */
  readonly drainBytes: number;
  /**
   * Socket bytes above which a `get` reply is not written (the client gets a
   * short `rate_limited` error for it instead); default 4 MiB.
   */
  readonly replyBytes: number;
  /** Largest frame of updates or snapshots, in characters of JSON (a larger single message is one frame); default 16 KiB. */
  readonly frameBytes: number;
}

/** The default thresholds. */
export const DEFAULT_SLOW_POLICY: SlowPolicy = {
  conflateBytes: 32 << 10,
  closeBytes: 16 << 20,
  maxBehindMs: 30_000,
  drainBytes: 8 << 10,
  replyBytes: 4 << 20,
  frameBytes: 16 << 10,
};

/** The policy from partial options: defaults filled, `drainBytes` kept at or below `conflateBytes`. */
export function slowPolicy(opts: Partial<SlowPolicy> = {}): SlowPolicy {
  const conflateBytes = opts.conflateBytes ?? DEFAULT_SLOW_POLICY.conflateBytes;
  return {
    conflateBytes,
    closeBytes: opts.closeBytes ?? DEFAULT_SLOW_POLICY.closeBytes,
    maxBehindMs: opts.maxBehindMs ?? DEFAULT_SLOW_POLICY.maxBehindMs,
    drainBytes: Math.min(opts.drainBytes ?? Math.floor(conflateBytes / 4), conflateBytes),
    replyBytes: opts.replyBytes ?? DEFAULT_SLOW_POLICY.replyBytes,
    frameBytes: Math.max(1, opts.frameBytes ?? DEFAULT_SLOW_POLICY.frameBytes),
  };
}

/**
 * Whether writing `len` more bytes would take a connection past the close
 * threshold (its socket's `buffered` bytes and the `owed` bytes count:
 * updates skipped, answers waiting), so it is closed instead: checked
 * before every write, so no connection ever holds more than `closeBytes`.
 */
export function overCap(buffered: number, owed: number, len: number, p: SlowPolicy): boolean {
  return buffered + owed + len > p.closeBytes;
}

/** What a behind connection needs: to be closed, to be written to again, or to wait for its socket. */
export type BehindAction = 'close' | 'resume' | 'wait';

/**
 * The next step for a behind connection whose socket holds `buffered`
 * bytes, that is `owed` bytes of skipped updates and waiting answers, and
 * has been behind for `behindMs`.
 */
export function behindAction(buffered: number, owed: number, behindMs: number, p: SlowPolicy): BehindAction {
  if (buffered + owed > p.closeBytes || behindMs > p.maxBehindMs) return 'close';
  return buffered <= p.drainBytes ? 'resume' : 'wait';
}

/**
 * What a heartbeat at `now` does with a connection last heard from at
 * `lastSeen`, both read from a monotonic clock (never the wall clock, whose
 * steps would cut every client or keep dead ones): the time to keep as its
 * `lastSeen` and ping it, or undefined to cut it (nothing heard for two
 * heartbeats). A connection `held` by this policy
 * (behind, or waited for) is not timed: its pings wait behind what it has
 * not read, so it cannot answer them; its clock restarts, and this
 * policy's rules close it (4008) if it stays held, as they close a dead
 * peer, whose socket never drains. Used by `/ws` and `/ws/replay` alike.
 */
export function heartbeatCheck(now: number, lastSeen: number, heartbeatMs: number, held: boolean): number | undefined {
  if (held) return now;
  return now - lastSeen > 2 * heartbeatMs ? undefined : lastSeen;
}
