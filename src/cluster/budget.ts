import type { Logger } from '../log.js';
import type { Budget, BudgetSnapshot } from '../upstream/budget.js';
import { decodeBudget, encodeBudget, pairs } from './codec.js';
import type { ClusterKeys } from './keys.js';
import { WRITE_BUDGET, type Commander } from './scripts.js';

/**
 * The upstream's daily call budget, shared: every process writes what its
 * own responses reported (the newest observation wins, see the
 * write_budget script), and restores the shared one when it is newer than
 * its own, so a new leader paces from the cluster's count, not from zero.
 */

/** Options of `BudgetShare`. */
export interface BudgetShareOptions {
  readonly redis: Commander;
  readonly keys: ClusterKeys;
  readonly budget: Budget;
  readonly logger: Logger;
  /** Timeout of each Redis command, ms. */
  readonly timeoutMs: number;
}

/** Whether snapshot `a` is a newer observation than `b`. */
export function newerBudget(a: BudgetSnapshot, b: BudgetSnapshot): boolean {
  if (a.observedAt === null) return false;
  if (b.observedAt === null || a.observedAt > b.observedAt) return true;
  return a.observedAt === b.observedAt && a.remaining !== null && (b.remaining === null || a.remaining < b.remaining);
}

/** Keeps a Budget and the shared copy in step. */
export class BudgetShare {
  private restoring = false;
  private pending = false;
  private readonly onChange = (): void => {
    if (this.restoring || this.pending) return;
    this.pending = true;
    // Many responses in one tick make one write.
    setImmediate(() => {
      this.pending = false;
      void this.push();
    });
  };

  /** A share of `opts.budget`; `start()` to follow its changes. */
  constructor(private readonly opts: BudgetShareOptions) {}

  /** Writes every change of the local budget to Redis. */
  start(): void {
    this.opts.budget.on('change', this.onChange);
  }

  /** Stops following. */
  stop(): void {
    this.opts.budget.off('change', this.onChange);
  }

  /** Writes the local snapshot (kept only if newer than the shared one). */
  async push(): Promise<void> {
    const s = this.opts.budget.snapshot();
    if (s.observedAt === null) return;
    await WRITE_BUDGET.run(this.opts.redis, [this.opts.keys.budget], encodeBudget(s), this.opts.timeoutMs).catch((err: unknown) => {
      this.opts.logger.debug({ err: (err as Error).message }, 'budget write failed');
    });
  }

  /** Restores the shared snapshot when it is newer than the local one; returns whether it did. */
  async pull(): Promise<boolean> {
    const raw = await this.opts.redis.sendCommand<string[]>(['HGETALL', this.opts.keys.budget], { timeout: this.opts.timeoutMs });
    const shared = decodeBudget(pairs(raw));
    if (!shared || !newerBudget(shared, this.opts.budget.snapshot())) return false;
    this.restoring = true;
    try {
      this.opts.budget.restore(shared);
    } finally {
      this.restoring = false;
    }
    return true;
  }
}
