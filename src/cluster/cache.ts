import { randomBytes } from 'node:crypto';
import type { CallResult, SharedCache } from '../upstream/cache.js';
import type { ClusterKeys } from './keys.js';
import type { ClusterMetrics } from './metrics.js';
import { UNLOCK, type Commander } from './scripts.js';

/**
 * The on-demand cache shared by a cluster: results in Redis with a PX TTL,
 * and single-flight across processes with a lock key (SET NX PX): the
 * process that takes the lock calls the upstream and stores the result;
 * the others poll for it. Without Redis each process calls on its own.
 */

type Value = CallResult;

/** Options of `RedisSharedCache`. */
export interface RedisSharedCacheOptions {
  readonly redis: Commander;
  readonly keys: ClusterKeys;
  readonly metrics?: ClusterMetrics;
  /** Lock expiry, ms: longer than an upstream call with its retries. */
  readonly lockMs: number;
  /** Timeout of each Redis command, ms; default 1000. */
  readonly timeoutMs?: number;
  /** First and longest wait between polls for another process's result, ms; default 20 and 200. */
  readonly pollMs?: readonly [number, number];
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** SharedCache on Redis. */
export class RedisSharedCache implements SharedCache {
  private readonly timeoutMs: number;

  /** A cache under `opts.keys`. */
  constructor(private readonly opts: RedisSharedCacheOptions) {
    this.timeoutMs = opts.timeoutMs ?? 1000;
  }

  /** A stored result, if any and not expired. */
  async get(key: string): Promise<Value | undefined> {
    const text = await this.opts.redis.sendCommand<string | null>(['GET', this.opts.keys.cache(key)], { timeout: this.timeoutMs });
    const v = text === null ? undefined : parseValue(text);
    if (v) this.opts.metrics?.sharedCache.inc({ result: 'hit' });
    return v;
  }

  /** Stores a result for `ttlMs`. */
  async set(key: string, value: Value, ttlMs: number): Promise<void> {
    const ttl = String(Math.max(1, Math.floor(ttlMs)));
    await this.opts.redis.sendCommand(['SET', this.opts.keys.cache(key), JSON.stringify(value), 'PX', ttl], { timeout: this.timeoutMs });
  }

  /**
   * Runs `fn` under the cluster-wide lock of `key`, or waits for the
   * holder's result (polling with backoff). When the holder fails or the
   * wait outlasts the lock, this process takes the lock and calls itself;
   * when Redis is unreachable it calls at once.
   */
  async singleFlight(key: string, fn: () => Promise<Value>): Promise<Value> {
    const lock = this.opts.keys.lock(key);
    const deadline = Date.now() + this.opts.lockMs;
    const [first, most] = this.opts.pollMs ?? [20, 200];
    let delay = first;
    for (;;) {
      const token = randomBytes(8).toString('hex');
      let taken: boolean;
      try {
        taken = (await this.opts.redis.sendCommand(['SET', lock, token, 'NX', 'PX', String(this.opts.lockMs)], { timeout: this.timeoutMs })) === 'OK';
      } catch {
        this.opts.metrics?.sharedCache.inc({ result: 'fallback' });
        return fn();
      }
      if (taken) return this.lead(key, lock, token, fn);
      do {
        await sleep(delay);
        delay = Math.min(most, delay * 2);
        const v = await this.get(key).catch(() => undefined);
        if (v) {
          this.opts.metrics?.sharedCache.inc({ result: 'waited' });
          return v;
        }
      } while (Date.now() < deadline && (await this.held(lock)));
      if (Date.now() >= deadline) {
        this.opts.metrics?.sharedCache.inc({ result: 'fallback' });
        return fn();
      }
    }
  }

  private async lead(key: string, lock: string, token: string, fn: () => Promise<Value>): Promise<Value> {
    try {
      // The previous holder may have stored the result just before this process took the lock.
      const v = await this.get(key).catch(() => undefined);
      if (v) return v;
      this.opts.metrics?.sharedCache.inc({ result: 'call' });
      return await fn();
    } finally {
      await UNLOCK.run(this.opts.redis, [lock], [token], this.timeoutMs).catch(() => undefined);
    }
  }

  private async held(lock: string): Promise<boolean> {
    try {
      return (await this.opts.redis.sendCommand<number>(['EXISTS', lock], { timeout: this.timeoutMs })) === 1;
    } catch {
      return false;
    }
  }
}

function parseValue(text: string): Value | undefined {
  try {
    const v = JSON.parse(text) as Partial<Value>;
    if (v && typeof v.data === 'object' && v.data !== null && typeof v.receivedAt === 'number') {
      return { data: v.data, receivedAt: v.receivedAt, ...(typeof v.dropped === 'number' && v.dropped > 0 ? { dropped: v.dropped } : {}) };
    }
  } catch {
    // A malformed entry counts as a miss; the next result overwrites it.
  }
  return undefined;
}
