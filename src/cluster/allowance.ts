import type { SharedCount } from '../upstream/allowance.js';
import type { ClusterKeys } from './keys.js';
import { ADJUST_ALLOWANCE, TAKE_ALLOWANCE, type Commander } from './scripts.js';

/**
 * The cluster-wide count of on-demand calls: one counter per budget day in
 * Redis, so every process's `get` lookups and `/api` requests together
 * spend one `BUDGET_RESERVE` share of the day. See docs/DEPLOYMENT.md.
 */

/** How long a day's counter outlives its day, ms (processes' clocks may differ). */
const KEEP_AFTER_DAY_MS = 3_600_000;

/** Options of `SharedAllowance`. */
export interface SharedAllowanceOptions {
  readonly redis: Commander & { readonly up: boolean };
  readonly keys: ClusterKeys;
  /** Timeout of each Redis command, ms. */
  readonly timeoutMs: number;
}

/** The allowance counter in Redis. */
export class SharedAllowance implements SharedCount {
  /** A counter on `opts.redis`. */
  constructor(private readonly opts: SharedAllowanceOptions) {}

  /** Counts one call of the day ending at `dayEnd` unless `cap` is reached; rejects while Redis is away. */
  async take(dayEnd: number, cap: number): Promise<number> {
    const o = this.opts;
    if (!o.redis.up) throw new Error('backplane down');
    const n = await TAKE_ALLOWANCE.run<number>(o.redis, [o.keys.allowance(dayEnd)], [String(cap), String(dayEnd + KEEP_AFTER_DAY_MS)], o.timeoutMs);
    return Number(n);
  }

  /** Corrects the count of the day ending at `dayEnd` by `delta`; rejects while Redis is away. */
  async adjust(dayEnd: number, delta: number): Promise<number> {
    const o = this.opts;
    if (!o.redis.up) throw new Error('backplane down');
    const n = await ADJUST_ALLOWANCE.run<number>(o.redis, [o.keys.allowance(dayEnd)], [String(delta), String(dayEnd + KEEP_AFTER_DAY_MS)], o.timeoutMs);
    return Number(n);
  }
}
