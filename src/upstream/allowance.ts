import { nextReset, type Budget } from './budget.js';
import { UpstreamError } from './errors.js';

/**
 * The on-demand allowance: `get` lookups and the `/api` passthrough may
 * spend at most their share (`BUDGET_RESERVE`) of the daily call limit, so
 * many clients asking for different data cannot starve the streaming feeds.
 * The poller paces itself to leave the same share of the remaining calls
 * aside. Counted per budget day (the count restarts at the reset). A
 * cluster counts in Redis, so all its processes together spend one share;
 * while Redis is away each process goes on counting locally from the last
 * cluster-wide count it saw.
 */

/** A day's count kept outside the process (the cluster's, in Redis). */
export interface SharedCount {
  /**
   * Adds one call to the count of the budget day ending at `dayEnd` unless
   * it has reached `cap`. Resolves the new count, or -1 when the cap was
   * reached (nothing added). Rejects when the count cannot be reached.
   */
  take(dayEnd: number, cap: number): Promise<number>;
  /** Adds `delta` (may be negative) to the count of the day ending at `dayEnd`; resolves the new count. */
  adjust(dayEnd: number, delta: number): Promise<number>;
}

/** A call counted by `OnDemandAllowance.take`, to be settled with the attempts it made. */
export interface AllowanceTicket {
  /** The budget day it was counted in (its end, ms epoch). */
  readonly dayEnd: number;
}

/** Counts on-demand calls against their share of the day. */
export class OnDemandAllowance {
  private spent = 0;
  private dayEnd = 0;

  /** An allowance of `share` (0..1) of `budget`'s daily limit, counted in `shared` when given. */
  constructor(
    private readonly budget: Pick<Budget, 'limit' | 'resetAt'>,
    private readonly share: number,
    private readonly now: () => number = Date.now,
    private readonly shared?: SharedCount,
  ) {}

  /** Calls made on demand this budget day (in a cluster: by every process, as last seen). */
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
   * Counts one upstream call before it is made; rejects with `rate_limited`
   * (with the reset time) when the day's share is spent. Before the limit is
   * known nothing is refused. `settle` the ticket with the HTTP attempts the
   * call then made, so the share counts calls actually made.
   */
  async take(): Promise<AllowanceTicket> {
    this.roll();
    const ticket = { dayEnd: this.dayEnd };
    const cap = this.cap;
    if (cap === null) {
      this.spent++;
      return ticket;
    }
    if (this.shared !== undefined) {
      const day = this.dayEnd;
      let n: number | undefined;
      try {
        n = await this.shared.take(day, cap);
      } catch {
        // The shared count is out of reach: count locally below.
      }
      if (n !== undefined && day === this.dayEnd) {
        if (n < 0) {
          this.spent = Math.max(this.spent, cap);
          throw this.refusal(cap);
        }
        this.spent = Math.max(this.spent, n);
        return ticket;
      }
    }
    if (this.spent >= cap) throw this.refusal(cap);
    this.spent++;
    return ticket;
  }

  /**
   * Corrects a taken call's count to the `attempts` it made: retries after a
   * network error or 5xx each count, and a call refused before any request
   * (e.g. the upstream budget known to be spent) counts nothing. A ticket of
   * an earlier budget day changes nothing.
   */
  settle(ticket: AllowanceTicket, attempts: number): void {
    const delta = attempts - 1;
    this.roll();
    if (delta === 0 || ticket.dayEnd !== this.dayEnd) return;
    this.spent = Math.max(0, this.spent + delta);
    if (this.shared !== undefined) {
      this.shared.adjust(ticket.dayEnd, delta).then(
        (n) => {
          if (ticket.dayEnd === this.dayEnd) this.spent = Math.max(this.spent, n);
        },
        // Redis away: the local count above stands until the next take sees the shared one.
        () => undefined,
      );
    }
  }

  private refusal(cap: number): UpstreamError {
    return new UpstreamError('rate_limited', `the day's share of the call budget for on-demand lookups (${cap} calls) is spent`, {
      onDemandShare: true,
      ...(this.budget.resetAt !== null ? { resetAt: this.budget.resetAt } : {}),
    });
  }

  private roll(): void {
    const now = this.now();
    if (now < this.dayEnd) return;
    // A new budget day: the count restarts and runs until the next reset.
    this.spent = 0;
    this.dayEnd = nextReset(now);
  }
}
