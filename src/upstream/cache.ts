import { endpoint as lookup, type Endpoint } from './catalogue.js';
import { nextPublication } from '../market/provision.js';
import type { Sessions } from '../market/session.js';

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
  /** Rows of the answer's list dropped as unusable (0 when none, or when the answer has no list). */
  readonly dropped?: number;
}

/** What the upstream call behind a lookup yields. */
export interface CallResult {
  readonly data: Record<string, unknown>;
  readonly receivedAt: number;
  /** Rows dropped as unusable (a partial drop; a whole one is an error). */
  readonly dropped?: number;
}

/** The upstream call the cache wraps (the UpstreamClient's `call`). */
export interface Caller {
  call(id: string, params: Record<string, unknown>, spend?: Spender): Promise<CallResult>;
}

/** A cache shared by several processes (Redis in cluster mode). */
export interface SharedCache {
  /** A stored result, if any and not expired. */
  get(key: string): Promise<CallResult | undefined>;
  /** Stores a result for `ttlMs`. */
  set(key: string, value: CallResult, ttlMs: number): Promise<void>;
  /**
   * Runs `fn` under a cross-process lock for `key`, or waits for the holder's
   * result; returns the result either way.
   */
  singleFlight(key: string, fn: () => Promise<CallResult>): Promise<CallResult>;
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
  /** How long an answer saying the code or request is not valid is kept, ms; default 10 min. */
  readonly negativeTtlMs?: number;
  /** The KRX sessions: closing data is current until the next trading day publishes it; default the clock's next provision time, every day. */
  readonly sessions?: Sessions;
}

/** Per-lookup options of `OnDemandCache.get`. */
export interface LookupOptions {
  /** Told of the upstream call this lookup makes itself (none on a hit or a shared call). */
  readonly spend?: Spender;
}

/**
 * Who pays for an upstream call: `check()` reserves it before it is made, or
 * throws to refuse it (nothing counted); `spent(n)` then settles the
 * reservation with the HTTP attempts actually made (0 when none was, say the
 * answer came from another process). Every `check()` that did not throw is
 * followed by exactly one `spent(n)`, so concurrent lookups cannot all pass
 * a check that none of them has been counted against yet.
 */
export interface Spender {
  check(): void;
  spent(attempts: number): void;
}

/** `spend` made to settle at most once; `settle()` settles with 0 if nothing did. */
function once(spend: Spender): Spender & { settle(): void } {
  let settled = false;
  const spent = (attempts: number): void => {
    if (settled) return;
    settled = true;
    spend.spent(attempts);
  };
  return { check: () => undefined, spent, settle: () => spent(0) };
}

/**
 * Upstream error codes that say the request itself is wrong (an unknown code,
 * no such data): the same request gets the same answer until the data
 * changes, so the answer is cached like data (negative caching).
 */
export const NEGATIVE_CODES: ReadonlySet<string> = new Set(['invalid_code', 'not_found', 'bad_request']);

/**
 * How long an answer of `e` stays current, from `now`: about a second for
 * realtime data; for closing and extra data, until the next time the
 * upstream publishes new data (its provision time on the next trading day
 * of `sessions`), at most `maxTtlMs`.
 */
export function ttlFor(e: Endpoint, now: number, realtimeTtlMs = 1000, maxTtlMs = 6 * 3600_000, sessions?: Sessions): number {
  const p = e.provision;
  if (p.type === 'realtime') return realtimeTtlMs;
  const until = nextPublication(p, now, sessions) - now;
  return Math.max(realtimeTtlMs, Math.min(until, maxTtlMs));
}

const SERIALISED = new WeakMap<object, Buffer>();

/**
 * The UTF-8 bytes of `JSON.stringify(data)` of a lookup's answer, computed
 * once per answer: a cached answer is the same object for every hit, so a
 * whole-market list asked for a hundred times is serialised and encoded
 * once, not a hundred times.
 */
export function serialisedData(data: Record<string, unknown>): Buffer {
  let s = SERIALISED.get(data);
  if (s === undefined) {
    s = Buffer.from(JSON.stringify(data));
    SERIALISED.set(data, s);
  }
  return s;
}

const CLOSE_BRACE = Buffer.from('}');

/**
 * A JSON object message whose last key is `key` with `data` as its value,
 * as parts whose bytes in order are those of `JSON.stringify({...head,
 * [key]: data})`: `head` serialised, the memoised bytes of `data`
 * (serialisedData, shared, never copied), and the closing brace.
 */
export function messageWithData(head: Record<string, unknown>, key: string, data: Record<string, unknown>): Buffer[] {
  const h = JSON.stringify(head);
  const prefix = Buffer.from(`${h.length > 2 ? `${h.slice(0, -1)},` : '{'}${JSON.stringify(key)}:`);
  return [prefix, serialisedData(data), CLOSE_BRACE];
}

/** A stable cache key of an endpoint and its validated parameters. */
export function cacheKey(id: string, params: Readonly<Record<string, unknown>>): string {
  const keys = Object.keys(params).sort();
  return `${id}?${keys.map((k) => `${k}=${JSON.stringify(params[k])}`).join('&')}`;
}

interface Entry {
  readonly value?: CallResult;
  /** A cached refusal (negative caching). */
  readonly error?: unknown;
  readonly expires: number;
}

/** The on-demand lookup (what `OnDemandCache.get` provides; fakes in tests). */
export interface OnDemand {
  get(id: string, params: Record<string, unknown>, opts?: LookupOptions): Promise<OnDemandResult>;
}

/** TTL cache with single-flight in front of the upstream client. */
export class OnDemandCache {
  private readonly entries = new Map<string, Entry>();
  private readonly inflight = new Map<string, Promise<CallResult>>();
  private readonly now: () => number;

  /** A cache in front of `opts.caller`. */
  constructor(private readonly opts: OnDemandCacheOptions) {
    this.now = opts.now ?? Date.now;
  }

  /**
   * The answer of endpoint `id` for `params` (already valid for the entry's
   * schema): from the cache while current, else from one upstream call
   * shared by every concurrent caller. An answer that the request is not
   * valid (`NEGATIVE_CODES`) is cached too, for `negativeTtlMs`; other
   * errors are not. `opts.spend` is told of a call this lookup makes.
   */
  async get(id: string, params: Record<string, unknown>, opts: LookupOptions = {}): Promise<OnDemandResult> {
    const key = cacheKey(id, params);
    const now = this.now();
    const hit = this.entries.get(key);
    if (hit && hit.expires > now) {
      this.opts.onLookup?.('hit');
      if (hit.value === undefined) throw hit.error;
      return { ...hit.value, cached: true };
    }
    const pending = this.inflight.get(key);
    if (pending) {
      this.opts.onLookup?.('shared');
      return { ...(await pending), cached: true };
    }
    opts.spend?.check();
    const spend = opts.spend && once(opts.spend);
    this.opts.onLookup?.('miss');
    const ttl = ttlFor(lookup(id), now, this.opts.realtimeTtlMs, this.opts.maxTtlMs, this.opts.sessions);
    const p = this.fetch(key, id, params, ttl, spend);
    this.inflight.set(key, p);
    try {
      const value = await p;
      this.store(key, { value, expires: this.now() + ttl });
      return { data: value.data, receivedAt: value.receivedAt, ...(value.dropped ? { dropped: value.dropped } : {}), cached: false };
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (typeof code === 'string' && NEGATIVE_CODES.has(code)) {
        this.store(key, { error: err, expires: this.now() + (this.opts.negativeTtlMs ?? 10 * 60_000) });
      }
      throw err;
    } finally {
      this.inflight.delete(key);
      // A reservation no call settled (refused by the day's share, or answered by another process) costs nothing.
      spend?.settle();
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

  private async fetch(key: string, id: string, params: Record<string, unknown>, ttl: number, spend: Spender | undefined) {
    const shared = this.opts.shared;
    if (!shared) return this.opts.caller.call(id, params, spend);
    const found = await shared.get(key).catch(() => undefined);
    if (found) return found;
    return shared.singleFlight(key, async () => {
      const v = await this.opts.caller.call(id, params, spend);
      await shared.set(key, { data: v.data, receivedAt: v.receivedAt, ...(v.dropped ? { dropped: v.dropped } : {}) }, ttl).catch(() => undefined);
      return v;
    });
  }

  private store(key: string, entry: Entry): void {
    const max = this.opts.maxEntries ?? 5000;
    if (this.entries.size >= max) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.delete(key);
    const v = entry.value;
    this.entries.set(
      key,
      v ? { value: { data: v.data, receivedAt: v.receivedAt, ...(v.dropped ? { dropped: v.dropped } : {}) }, expires: entry.expires } : entry,
    );
  }
}
