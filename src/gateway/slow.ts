/**
 * The slow-consumer policy: what to do with a connection that does not read
 * as fast as updates arrive. Pure: the session supplies its numbers and
 * applies the action. See docs/PROTOCOL.md §Slow consumers and DESIGN §4.
 *
 * A connection's *lag* is the bytes waiting in its socket (`bufferedAmount`)
 * plus the bytes of updates skipped since it fell behind.
 * 1. `conflate`: the socket holds more than `conflateBytes`. Writing stops;
 *    each topic that changes is only marked dirty (bounded by the topics
 *    subscribed).
 * 2. `resnapshot`: the lag passed `resnapshotBytes`. The dirty marks are
 *    dropped too: every subscribed topic will be snapshotted.
 * 3. `close`: the lag passed `closeBytes`, or the connection has been behind
 *    for longer than `maxBehindMs`: close 4008.
 * When a behind connection's socket holds at most `drainBytes` it is
 * `drain`ed: it gets a fresh snapshot of each dirty topic (or of every topic
 * after step 2) instead of the patches it missed, and is live again.
 */

/** Thresholds of the slow-consumer policy. */
export interface SlowPolicy {
  /** Socket bytes above which a connection is conflated; default 1 MiB. */
  readonly conflateBytes: number;
  /** Lag above which a behind connection gets a full resnapshot; default 4 MiB. */
  readonly resnapshotBytes: number;
  /** Lag above which the connection is closed with 4008; default 16 MiB. */
  readonly closeBytes: number;
  /** Longest time a connection may stay behind before it is closed with 4008, ms; default 30,000. */
  readonly maxBehindMs: number;
  /** Socket bytes at or below which a behind connection has drained; default a quarter of `conflateBytes`. */
  readonly drainBytes: number;
  /**
   * Socket bytes above which a `get` reply is not written (the client gets a
   * short `rate_limited` error for it instead); default 4 MiB.
   */
  readonly replyBytes: number;
}

/** The default thresholds. */
export const DEFAULT_SLOW_POLICY: SlowPolicy = {
  conflateBytes: 1 << 20,
  resnapshotBytes: 4 << 20,
  closeBytes: 16 << 20,
  maxBehindMs: 30_000,
  drainBytes: 1 << 18,
  replyBytes: 4 << 20,
};

/** The policy from partial options: defaults filled, `drainBytes` kept below `conflateBytes`. */
export function slowPolicy(opts: Partial<SlowPolicy> = {}): SlowPolicy {
  const conflateBytes = opts.conflateBytes ?? DEFAULT_SLOW_POLICY.conflateBytes;
  return {
    conflateBytes,
    resnapshotBytes: opts.resnapshotBytes ?? DEFAULT_SLOW_POLICY.resnapshotBytes,
    closeBytes: opts.closeBytes ?? DEFAULT_SLOW_POLICY.closeBytes,
    maxBehindMs: opts.maxBehindMs ?? DEFAULT_SLOW_POLICY.maxBehindMs,
    drainBytes: Math.min(opts.drainBytes ?? Math.floor(conflateBytes / 4), conflateBytes),
    replyBytes: opts.replyBytes ?? DEFAULT_SLOW_POLICY.replyBytes,
  };
}

/** Where a connection stands: writing normally, conflating per topic, or owed a full resnapshot. */
export const Mode = { Live: 0, Conflating: 1, Resnapshot: 2 } as const;
/** A connection's slow-consumer mode. */
export type Mode = (typeof Mode)[keyof typeof Mode];

/**
 * Whether writing `len` more bytes would take a connection past the close
 * threshold (its socket's `buffered` bytes and the `skipped` updates owed
 * count), so it is closed instead: checked before every write, so no
 * connection ever holds more than `closeBytes`.
 */
export function overCap(buffered: number, skipped: number, len: number, p: SlowPolicy): boolean {
  return buffered + skipped + len > p.closeBytes;
}

/** What the policy asks for. */
export type SlowAction = 'none' | 'conflate' | 'resnapshot' | 'close' | 'drain';

/**
 * The next step for a connection in `mode` whose socket holds `buffered`
 * bytes, that skipped `skipped` bytes of updates and has been behind for
 * `behindMs` (0 when live).
 */
export function slowAction(mode: Mode, buffered: number, skipped: number, behindMs: number, p: SlowPolicy): SlowAction {
  const lag = buffered + skipped;
  if (lag > p.closeBytes) return 'close';
  if (mode === Mode.Live) return buffered > p.conflateBytes ? 'conflate' : 'none';
  if (behindMs > p.maxBehindMs) return 'close';
  if (buffered <= p.drainBytes) return 'drain';
  if (mode === Mode.Conflating && lag > p.resnapshotBytes) return 'resnapshot';
  return 'none';
}
