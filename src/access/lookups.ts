import { nextReset } from '../upstream/budget.js';
import type { Spender } from '../upstream/cache.js';
import { UpstreamError } from '../upstream/errors.js';
import { KeyedRateLimiter } from './limits.js';

/**
 * Per-client limits of on-demand lookups (`get` frames and `/api`
 * requests), shared by every connection and request of one client: the
 * client is its token (or JWT subject) when it has one, else its remote
 * address. Two limits: a rate (`GETS_PER_MINUTE`), and a part of the day's
 * on-demand share of the upstream budget (`LOOKUP_CLIENT_SHARE` of
 * `BUDGET_RESERVE`), counting only the upstream calls its lookups made
 * (cache hits cost nothing). So opening more connections, or switching
 * between `get` and `/api`, buys no more, and no single client can spend
 * every client's share. Counted per process. See docs/OPERATIONS.md §Limits.
 * The rate is timed on a monotonic clock and the budget day on the wall
 * clock: a step of the wall clock (NTP, a VM resumed) neither refills nor
 * empties a client's minute, and the day still ends at the budget's reset.
 */

/** Options of `LookupLimits`. */
export interface LookupLimitsOptions {
  /** Lookups per client per minute (burst: the whole minute). */
  readonly perMinute: number;
  /** Part (0..1] of the on-demand share one client may spend in a budget day; 1 = no per-client cap. */
  readonly clientShare: number;
  /** The day's on-demand share, in calls (OnDemandAllowance.cap); null while unknown (nothing capped). */
  readonly shareCap: () => number | null;
  /** When the budget resets (for the error's reset time), ms epoch, or null. */
  readonly resetAt?: () => number | null;
  /** Wall clock, ms epoch, for the budget day (when the share's count resets); default Date.now. */
  readonly now?: () => number;
  /** Monotonic clock, ms from any origin, for the per-minute rate; default `performance.now`. */
  readonly monotonic?: () => number;
  /** Clients tracked per day before the rest share one count; default 100,000. */
  readonly maxClients?: number;
}

/** The default monotonic clock (`performance.now` needs its object as `this`). */
const monotonicNow = (): number => performance.now();

/** The count every client past `maxClients` shares, so forgetting never resets anyone's count. */
const OVERFLOW = '\u0000overflow';

/** Lookup rate and lookup share per client. */
export class LookupLimits {
  private readonly rate: KeyedRateLimiter;
  private readonly now: () => number;
  private readonly monotonic: () => number;
  private spentBy = new Map<string, number>();
  /** Calls reserved per client and not yet settled (made, or being made). */
  private readonly reserved = new Map<string, number>();
  private dayEnd = 0;

  /** Limits as `opts` say. */
  constructor(private readonly opts: LookupLimitsOptions) {
    this.now = opts.now ?? Date.now;
    this.monotonic = opts.monotonic ?? monotonicNow;
    this.rate = new KeyedRateLimiter(opts.perMinute);
  }

  /** Lookups per client per minute by default. */
  get perMinute(): number {
    return this.opts.perMinute;
  }

  /** Takes one lookup of `client` from its rate (at `perMinute`, default the setting); false when over it. */
  admit(client: string, perMinute?: number): boolean {
    return this.rate.take(client, this.monotonic(), perMinute);
  }

  /** Upstream calls made for `client` this budget day. */
  used(client: string): number {
    this.roll();
    return this.spentBy.get(this.keyOf(client)) ?? 0;
  }

  /** Most upstream calls one client's lookups may make this budget day, or null (no cap). */
  get cap(): number | null {
    const share = this.opts.shareCap();
    if (share === null || this.opts.clientShare >= 1) return null;
    return Math.max(1, Math.floor(share * this.opts.clientShare));
  }

  /**
   * The spender of `client`'s lookups: reserves each call before it is made
   * and refuses one past its part of the share, counting the calls still in
   * flight; then counts the attempts each made.
   */
  spender(client: string): Spender {
    return {
      check: () => {
        const cap = this.cap;
        if (cap !== null && this.used(client) + (this.reserved.get(client) ?? 0) >= cap) {
          const resetAt = this.opts.resetAt?.() ?? null;
          throw new UpstreamError('rate_limited', `lookup share of one client (${cap} calls a day) is spent`, {
            clientShare: true,
            ...(resetAt !== null ? { resetAt } : {}),
          });
        }
        this.reserved.set(client, (this.reserved.get(client) ?? 0) + 1);
      },
      spent: (attempts) => {
        const left = (this.reserved.get(client) ?? 1) - 1;
        if (left > 0) this.reserved.set(client, left);
        else this.reserved.delete(client);
        if (attempts <= 0) return;
        this.roll();
        const key = this.keyOf(client);
        this.spentBy.set(key, (this.spentBy.get(key) ?? 0) + attempts);
      },
    };
  }

  private keyOf(client: string): string {
    if (this.spentBy.has(client) || this.spentBy.size < (this.opts.maxClients ?? 100_000)) return client;
    return OVERFLOW;
  }

  private roll(): void {
    const now = this.now();
    if (now < this.dayEnd) return;
    this.spentBy = new Map();
    this.dayEnd = nextReset(now);
  }
}
