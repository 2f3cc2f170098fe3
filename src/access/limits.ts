import { z } from 'zod';
import { DEFAULT_LIMITS, type Limits } from '../protocol/constants.js';

/**
 * Per-connection and per-client limits: the limit values themselves, the
 * token buckets that enforce rates, the flood detector and the per-address
 * connection counter. Small classes with an injected clock, no timers.
 */

/**
 * Limits a token (static token file or JWT `limits` claim) may override.
 * `maxPayloadBytes` is a server-wide setting of the WebSocket server and is
 * not overridable per token. Unknown keys are ignored.
 */
export const LimitsOverride = z.object({
  maxTopics: z.number().int().positive().optional(),
  maxWildcards: z.number().int().nonnegative().optional(),
  maxMessagesPerSecond: z.number().positive().optional(),
  getsPerMinute: z.number().positive().optional(),
});
/** Per-token limit overrides (type). */
export type LimitsOverride = z.infer<typeof LimitsOverride>;

/** The effective limits of a connection: `base` (defaults DEFAULT_LIMITS) with a token's overrides applied. */
export function resolveLimits(base: Partial<Limits> = {}, override: LimitsOverride = {}): Limits {
  const b: Limits = { ...DEFAULT_LIMITS, ...definedOnly(base) };
  return {
    maxTopics: override.maxTopics ?? b.maxTopics,
    maxWildcards: override.maxWildcards ?? b.maxWildcards,
    maxMessagesPerSecond: override.maxMessagesPerSecond ?? b.maxMessagesPerSecond,
    maxPayloadBytes: b.maxPayloadBytes,
    getsPerMinute: override.getsPerMinute ?? b.getsPerMinute,
  };
}

function definedOnly<T extends object>(o: T): Partial<T> {
  const out: Partial<T> = {};
  for (const k of Object.keys(o) as (keyof T)[]) if (o[k] !== undefined) out[k] = o[k];
  return out;
}

/**
 * A token bucket: `capacity` tokens, refilled at `ratePerMs` tokens per ms.
 * Starts full. `take()` spends one token when there is one.
 */
export class TokenBucket {
  private tokens: number;
  private last: number;

  /** A full bucket holding `capacity` tokens, refilled at `ratePerMs` per ms from `now`. */
  constructor(
    private readonly capacity: number,
    private readonly ratePerMs: number,
    now: number,
  ) {
    this.tokens = capacity;
    this.last = now;
  }

  /** Spends one token at time `now` (ms); false when the bucket is empty. */
  take(now: number): boolean {
    this.refill(now);
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** Gives back one token `take` spent, at `now` (never past a full bucket). */
  giveBack(now: number): void {
    this.refill(now);
    this.tokens = Math.min(this.capacity, this.tokens + 1);
  }

  /** Whether the bucket would be full at `now` (the key can be forgotten). */
  full(now: number): boolean {
    this.refill(now);
    return this.tokens >= this.capacity;
  }

  private refill(now: number): void {
    const dt = now - this.last;
    if (dt > 0) {
      this.tokens = Math.min(this.capacity, this.tokens + dt * this.ratePerMs);
      this.last = now;
    }
  }
}

/** A bucket for `perSecond` messages a second with bursts of twice that. */
export function messageBucket(perSecond: number, now: number): TokenBucket {
  return new TokenBucket(Math.max(1, perSecond * 2), perSecond / 1000, now);
}

/** A bucket for `perMinute` requests a minute, bursting to the whole minute's allowance. */
export function perMinuteBucket(perMinute: number, now: number): TokenBucket {
  return new TokenBucket(Math.max(1, perMinute), perMinute / 60_000, now);
}

/**
 * Counts events in fixed windows of `windowMs` and says when a window holds
 * more than `limit` (e.g. a flood of messages within one second).
 */
export class WindowCounter {
  private windowStart = Number.NEGATIVE_INFINITY;
  private count = 0;

  /** A counter that trips past `limit` events within one window of `windowMs` (default 1000). */
  constructor(
    private readonly limit: number,
    private readonly windowMs = 1000,
  ) {}

  /** Records one event at `now` (ms); true when this window's count passed the limit. */
  hit(now: number): boolean {
    if (now - this.windowStart >= this.windowMs) {
      this.windowStart = now;
      this.count = 0;
    }
    return ++this.count > this.limit;
  }
}

/**
 * Token buckets keyed by client (token id or address), e.g. for the HTTP
 * passthrough. Memory is bounded: past `maxKeys`, keys whose bucket is full
 * again are forgotten, and if none is, the oldest key goes.
 */
export class KeyedRateLimiter {
  private readonly buckets = new Map<string, TokenBucket>();

  /** `perMinute` requests per key per minute; at most `maxKeys` keys tracked (default 10,000). */
  constructor(
    readonly perMinute: number,
    private readonly maxKeys = 10_000,
  ) {}

  /** Spends one request of `key` at `now` (ms); false when over the limit. `perMinute` overrides the rate of a new key. */
  take(key: string, now: number, perMinute = this.perMinute): boolean {
    let b = this.buckets.get(key);
    if (b === undefined) {
      if (this.buckets.size >= this.maxKeys) this.prune(now);
      b = perMinuteBucket(perMinute, now);
      this.buckets.set(key, b);
    }
    return b.take(now);
  }

  /**
   * Gives back one request `take` spent of `key` (a request counted against
   * an address before its token was checked, then counted against the
   * token's client instead).
   */
  giveBack(key: string, now: number): void {
    this.buckets.get(key)?.giveBack(now);
  }

  /** Number of keys tracked. */
  get size(): number {
    return this.buckets.size;
  }

  private prune(now: number): void {
    for (const [k, b] of this.buckets) if (b.full(now)) this.buckets.delete(k);
    if (this.buckets.size >= this.maxKeys) {
      const oldest = this.buckets.keys().next().value;
      if (oldest !== undefined) this.buckets.delete(oldest);
    }
  }
}

/** Open connections per remote address, capped at `max` each, and in all. */
export class ConnectionCounter {
  private readonly counts = new Map<string, number>();
  private all = 0;

  /** A counter allowing `max` connections per address. */
  constructor(private readonly max: number) {}

  /** Takes a slot for `addr`; false (nothing taken) when it already has `max`. */
  acquire(addr: string): boolean {
    const n = this.counts.get(addr) ?? 0;
    if (n >= this.max) return false;
    this.counts.set(addr, n + 1);
    this.all++;
    return true;
  }

  /** Gives back a slot of `addr` (one it took). */
  release(addr: string): void {
    const n = this.counts.get(addr) ?? 0;
    if (n === 0) return;
    if (n === 1) this.counts.delete(addr);
    else this.counts.set(addr, n - 1);
    this.all--;
  }

  /** Open connections of `addr`. */
  count(addr: string): number {
    return this.counts.get(addr) ?? 0;
  }

  /** Open connections of every address together. */
  get total(): number {
    return this.all;
  }
}
