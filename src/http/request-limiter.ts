/**
 * The request rate of `/api` and `/recordings` per client. A request is
 * counted against its address before its token is checked, so that a
 * client guessing tokens is held to the rate like any other; when the
 * token is valid, the request is given back to the address and counted
 * against the token's client instead (clients with tokens behind one
 * address keep a rate each). See docs/OPERATIONS.md §5.1.
 */

interface Bucket {
  tokens: number;
  last: number;
}

/**
 * Token buckets keyed by client (an address, or a token's client id), each
 * holding `perMinute` requests, refilled over the minute and bursting to
 * the whole minute's allowance (like KeyedRateLimiter), from which a
 * request taken can be given back. Memory is bounded: past `maxKeys`, keys
 * whose bucket is full again are forgotten, and if none is, the oldest
 * key goes. Injected clock, no timers.
 */
export class RequestLimiter {
  readonly #buckets = new Map<string, Bucket>();
  readonly #capacity: number;
  readonly #perMs: number;

  /** `perMinute` requests per key per minute; at most `maxKeys` keys tracked (default 10,000). */
  constructor(
    readonly perMinute: number,
    private readonly maxKeys = 10_000,
  ) {
    this.#capacity = Math.max(1, perMinute);
    this.#perMs = perMinute / 60_000;
  }

  /** Spends one request of `key` at `now` (ms); false (nothing spent) when its minute is spent. */
  take(key: string, now: number): boolean {
    let b = this.#buckets.get(key);
    if (b === undefined) {
      if (this.#buckets.size >= this.maxKeys) this.#prune(now);
      b = { tokens: this.#capacity, last: now };
      this.#buckets.set(key, b);
    }
    this.#refill(b, now);
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }

  /** Gives back one request `take` spent of `key` (never past a full bucket). */
  giveBack(key: string, now: number): void {
    const b = this.#buckets.get(key);
    if (b === undefined) return;
    this.#refill(b, now);
    b.tokens = Math.min(this.#capacity, b.tokens + 1);
  }

  /** Number of keys tracked. */
  get size(): number {
    return this.#buckets.size;
  }

  #refill(b: Bucket, now: number): void {
    const dt = now - b.last;
    if (dt > 0) {
      b.tokens = Math.min(this.#capacity, b.tokens + dt * this.#perMs);
      b.last = now;
    }
  }

  #prune(now: number): void {
    for (const [k, b] of this.#buckets) {
      this.#refill(b, now);
      if (b.tokens >= this.#capacity) this.#buckets.delete(k);
    }
    if (this.#buckets.size >= this.maxKeys) {
      const oldest = this.#buckets.keys().next().value;
      if (oldest !== undefined) this.#buckets.delete(oldest);
    }
  }
}
