/**
 * Reconnect delays: exponential backoff with full jitter, a harsher step for
 * servers that closed us for misbehaving, and a prompt one for a server that
 * is merely restarting. See docs/PROTOCOL.md §7 (close codes).
 */

/** Options of `Backoff`. */
export interface BackoffOptions {
  /** Base delay of the first retry, ms; default 250. */
  readonly minDelayMs?: number;
  /** Largest delay, ms; default 15000. */
  readonly maxDelayMs?: number;
  /** Growth per failed attempt; default 2. */
  readonly factor?: number;
  /** Spread of the prompt reconnect after a server restart (close 1001), ms; default 1000. */
  readonly restartSpreadMs?: number;
  /** Random source in [0, 1); default `Math.random`. */
  readonly random?: () => number;
}

/** Extra attempts a penalty adds: the ceiling grows by factor^PENALTY_STEPS. */
const PENALTY_STEPS = 4;

/**
 * Delay sequence of one reconnecting client. `next()` after each failure,
 * `reset()` once a connection has proven stable.
 */
export class Backoff {
  private readonly min: number;
  private readonly max: number;
  private readonly factor: number;
  private readonly spread: number;
  private readonly random: () => number;
  private attempts = 0;

  /** A backoff at its first step. */
  constructor(opts: BackoffOptions = {}) {
    this.min = Math.max(1, opts.minDelayMs ?? 250);
    this.max = Math.max(this.min, opts.maxDelayMs ?? 15_000);
    this.factor = Math.max(1, opts.factor ?? 2);
    this.spread = Math.max(0, opts.restartSpreadMs ?? 1000);
    this.random = opts.random ?? Math.random;
  }

  /** Failed attempts counted since the last reset. */
  get attempt(): number {
    return this.attempts;
  }

  /** The ceiling of the current step: min · factor^attempt, capped at the maximum (ms). */
  ceiling(): number {
    return Math.min(this.max, this.min * Math.pow(this.factor, this.attempts));
  }

  /** The next delay (ms): uniform in [0, ceiling) ("full jitter"); then the ceiling grows. */
  next(): number {
    const d = this.random() * this.ceiling();
    this.attempts++;
    return Math.floor(d);
  }

  /**
   * The next delay after the server closed us for a policy violation or for
   * reading too slowly (ms): the ceiling jumps PENALTY_STEPS attempts ahead and
   * the delay is at least half of it ("equal jitter"), so a misbehaving
   * client never comes straight back.
   */
  penalty(): number {
    this.attempts += PENALTY_STEPS;
    const c = this.ceiling();
    this.attempts++;
    return Math.floor(c / 2 + (this.random() * c) / 2);
  }

  /**
   * The delay after a server announced a restart (ms): uniform in
   * [0, restartSpreadMs), so clients spread out instead of arriving together.
   * The sequence starts over; should the server not be back, `next()` grows
   * from the first step.
   */
  restart(): number {
    this.attempts = 0;
    return Math.floor(this.random() * this.spread);
  }

  /** Starts the sequence over (after a stable connection). */
  reset(): void {
    this.attempts = 0;
  }
}
