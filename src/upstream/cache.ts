import { endpoint as lookup, type Endpoint } from './catalogue.js';
import { nextKstTime } from '../poller/session.js';

/**
 * The on-demand cache: every `get` and `/api` passthrough goes through it, so
 * one upstream call serves every client that asks the same thing while the
 * answer is still current, and concurrent identical requests share one call
 * (single-flight).
 */

/** What an on-demand lookup yields. */
export interface OnDemandResult {
  /** The normalised, unwrapped upstream body. */
  readonly data: Record<string, unknown>;
  /** When the upstream response arrived (ms epoch). */
  readonly receivedAt: number;
  /** Whether it came from the cache (or a shared in-flight call) rather than a new call. */
  readonly cached: boolean;
}

/** The upstream call the cache wraps (the UpstreamClient's `call`). */
export interface Caller {
  call(id: string, params: Record<string, unknown>): Promise<{ data: Record<string, unknown>; receivedAt: number }>;
}

/** A cache shared by several processes (Redis in cluster mode). */
export interface SharedCache {
  /** A stored result, if any and not expired. */
  get(key: string): Promise<{ data: Record<string, unknown>; receivedAt: number } | undefined>;
  /** Stores a result for `ttlMs`. */
  set(key: string, value: { data: Record<string, unknown>; receivedAt: number }, ttlMs: number): Promise<void>;
  /**
   * Runs `fn` under a cross-process lock for `key`, or waits for the holder's
   * result; returns the result either way.
   */
  singleFlight(
    key: string,
    fn: () => Promise<{ data: Record<string, unknown>; receivedAt: number }>,
  ): Promise<{ data: Record<string, unknown>; receivedAt: number }>;
}

/** Options of `OnDemandCache`. */
export interface OnDemandCacheOptions {
  readonly caller: Caller;
  /** Clock, ms epoch. */
  readonly now?: () => number;
  /** TTL of realtime lookups, ms; default 1000. */
  readonly realtimeTtlMs?: number;
  /** Longest TTL of closing data, ms; default 6 h. */
  readonly maxTtlMs?: number;
  /** Most entries kept (oldest evicted first); default 5000. */
  readonly maxEntries?: number;
  /** Called with `hit`, `miss` or `shared` for every lookup. */
  readonly onLookup?: (result: 'hit' | 'miss' | 'shared') => void;
  /** Cross-process cache, in cluster mode. */
  readonly shared?: SharedCache;
}

/**
 * How long an answer of `e` stays current, from `now`: about a second for
 * realtime data; for closing and extra data, until the next time the
 * upstream publishes new data (its provision time), at most `maxTtlMs`.
 */
export function ttlFor(e: Endpoint, now: number, realtimeTtlMs = 1000, maxTtlMs = 6 * 3600_000): number {
  const p = e.provision;
  if (p.type === 'realtime') return realtimeTtlMs;
  const until = nextKstTime(p.at, now) - now;
  return Math.max(realtimeTtlMs, Math.min(until, maxTtlMs));
}

/** A stable cache key of an endpoint and its validated parameters. */
export function cacheKey(id: string, params: Readonly<Record<string, unknown>>): string {
  const keys = Object.keys(params).sort();
  return `${id}?${keys.map((k) => `${k}=${JSON.stringify(params[k])}`).join('&')}`;
}

interface Entry {
  readonly value: { data: Record<string, unknown>; receivedAt: number };
  readonly expires: number;
}

/** TTL cache with single-flight in front of the upstream client. */
export class OnDemandCache {
  private readonly entries = new Map<string, Entry>();
  private readonly inflight = new Map<string, Promise<{ data: Record<string, unknown>; receivedAt: number }>>();
  private readonly now: () => number;

  /** A cache in front of `opts.caller`. */
  constructor(private readonly opts: OnDemandCacheOptions) {
    this.now = opts.now ?? Date.now;
  }

  /**
   * The answer of endpoint `id` for `params` (already valid for the entry's
   * schema): from the cache while current, else from one upstream call
   * shared by every concurrent caller. Errors are not cached.
   */
  async get(id: string, params: Record<string, unknown>): Promise<OnDemandResult> {
    const key = cacheKey(id, params);
    const now = this.now();
    const hit = this.entries.get(key);
    if (hit && hit.expires > now) {
      this.opts.onLookup?.('hit');
      return { ...hit.value, cached: true };
    }
    const pending = this.inflight.get(key);
    if (pending) {
      this.opts.onLookup?.('shared');
      return { ...(await pending), cached: true };
    }
    this.opts.onLookup?.('miss');
    const ttl = ttlFor(lookup(id), now, this.opts.realtimeTtlMs, this.opts.maxTtlMs);
    const p = this.fetch(key, id, params, ttl);
    this.inflight.set(key, p);
    try {
      const value = await p;
      this.store(key, value, ttl);
      return { ...value, cached: false };
    } finally {
      this.inflight.delete(key);
    }
  }

  /** Number of cached entries. */
  get size(): number {
    return this.entries.size;
  }

  /** Drops every entry. */
  clear(): void {
    this.entries.clear();
  }

  private async fetch(key: string, id: string, params: Record<string, unknown>, ttl: number) {
    const shared = this.opts.shared;
    if (!shared) return this.opts.caller.call(id, params);
    const found = await shared.get(key).catch(() => undefined);
    if (found) return found;
    return shared.singleFlight(key, async () => {
      const v = await this.opts.caller.call(id, params);
      await shared.set(key, { data: v.data, receivedAt: v.receivedAt }, ttl).catch(() => undefined);
      return v;
    });
  }

  private store(key: string, value: { data: Record<string, unknown>; receivedAt: number }, ttl: number): void {
    const max = this.opts.maxEntries ?? 5000;
    if (this.entries.size >= max) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.delete(key);
    this.entries.set(key, { value: { data: value.data, receivedAt: value.receivedAt }, expires: this.now() + ttl });
  }
}
