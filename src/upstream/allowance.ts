import { nextReset, type Budget } from './budget.js';
import { UpstreamError } from './errors.js';

/**
 * The on-demand allowance: `get` lookups and the `/api` passthrough may
 * spend at most their share (`BUDGET_RESERVE`) of the daily call limit, so
 * many clients asking for different data cannot starve the streaming feeds.
 * The poller paces itself to leave the same share of the remaining calls
 * aside. Counted per budget day (the count restarts at the reset), per
 * process: in a cluster each process has its own count.
 */
export class OnDemandAllowance {
  private spent = 0;
  private dayEnd = 0;

  /** An allowance of `share` (0..1) of `budget`'s daily limit. */
  constructor(
    private readonly budget: Pick<Budget, 'limit' | 'resetAt'>,
    private readonly share: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Calls made on demand this budget day. */
  get used(): number {
    this.roll();
    return this.spent;
  }

  /** Most calls allowed on demand this budget day, or null while the limit is unknown. */
  get cap(): number | null {
    const limit = this.budget.limit;
    return limit === null ? null : Math.floor(limit * this.share);
  }

  /**
   * Counts one upstream call; throws `rate_limited` (with the reset time)
   * when the day's share is spent. Before the limit is known nothing is refused.
   */
  take(): void {
    this.roll();
    const cap = this.cap;
    if (cap !== null && this.spent >= cap) {
      throw new UpstreamError('rate_limited', `the day's share of the call budget for on-demand lookups (${cap} calls) is spent`, {
        ...(this.budget.resetAt !== null ? { resetAt: this.budget.resetAt } : {}),
      });
    }
    this.spent++;
  }

  private roll(): void {
    const now = this.now();
    if (now < this.dayEnd) return;
    // A new budget day: the count restarts and runs until the next reset.
    this.spent = 0;
    this.dayEnd = nextReset(now);
  }
}
