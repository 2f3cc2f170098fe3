import type { Logger } from '../log.js';
import type { StateStore } from '../state/store.js';
import type { Backplane } from './backplane.js';
import type { BudgetShare } from './budget.js';
import type { ClusterBus } from './bus.js';
import type { ClusterDemand } from './demand.js';
import type { ClusterKeys } from './keys.js';
import type { Leadership } from './leadership.js';
import type { Mirror } from './mirror.js';
import type { PollerHandle } from '../poller/poller.js';
import { loadShared } from './writer.js';

/**
 * The leader's term: after the lease is won, and again after any failed
 * write, the poller may run only once its store holds exactly the shared
 * rows and seqs (so the first diff continues every topic's seq), the epoch
 * is fixed and the shared budget and demand are loaded.
 */

/** What a term needs of the node. */
export interface LeaderTermOptions {
  readonly backplane: Backplane;
  readonly keys: ClusterKeys;
  readonly leadership: Leadership;
  readonly mirror: Mirror;
  /** The gateway's store (its epoch is the cluster's). */
  readonly store: StateStore;
  /** The poller's own store. */
  readonly pollStore: StateStore;
  readonly budgetShare: BudgetShare;
  readonly union: ClusterDemand;
  readonly bus: ClusterBus;
  readonly poller: () => PollerHandle | undefined;
  readonly logger: Logger;
  readonly now: () => number;
  /** Timeout of each Redis read, ms. */
  readonly timeoutMs: number;
}

/** Whether the leader's state is loaded, and the loading. */
export class LeaderTerm {
  /** Whether the poller's store matches Redis for the current term. */
  prepared = false;
  /** The epoch of this term's writes. */
  epoch = '';
  private preparing: Promise<void> | undefined;
  /** The generation the last `begin` asked for. */
  private wanted: number | undefined;

  /** A term keeper for one process. */
  constructor(private readonly opts: LeaderTermOptions) {}

  /**
   * Starts loading for generation `gen`. While an older load runs, the new
   * one starts as soon as it ends (the older one ends early: its generation
   * is gone).
   */
  begin(gen: number): void {
    this.prepared = false;
    this.wanted = gen;
    this.preparing ??= this.prepare(gen).finally(() => {
      this.preparing = undefined;
      const next = this.wanted;
      if (next !== undefined && next !== gen && this.opts.leadership.lease.gen === next) this.begin(next);
    });
  }

  /** The lease is gone or Redis is away: the poller must not run. */
  end(): void {
    this.prepared = false;
  }

  /** A write failed: the poller's store may differ from Redis; stop until reloaded. */
  diverged(reason: string): void {
    if (!this.prepared) return;
    this.prepared = false;
    this.opts.logger.warn({ reason }, 'shared state write failed: reloading before polling again');
  }

  /** Periodic: a leader whose state is not loaded (after a divergence) loads it again. */
  ensure(): void {
    const lease = this.opts.leadership.lease;
    if (lease.leader && !this.prepared) this.begin(lease.gen!);
  }

  /**
   * Waits until the lease allows the first call, fixes the epoch, loads the
   * shared rows and seqs into the poller's store, restores the shared budget
   * and demand, republishes the feed states, then wakes the poller.
   */
  private async prepare(gen: number): Promise<void> {
    const o = this.opts;
    const lease = o.leadership.lease;
    const st = lease.state;
    if (st.role !== 'leader' || st.gen !== gen) return;
    const wait = st.pollFrom - o.now();
    // Unref'd: a shutdown during the wait need not outlast it (the generation check below ends the term).
    if (wait > 0) await new Promise((r) => setTimeout(r, wait).unref());
    try {
      if (lease.gen !== gen || !(await o.mirror.ensureEpoch(true))) return;
      const epoch = o.store.epoch;
      const n = await loadShared(o.backplane, o.keys, o.pollStore, epoch, o.timeoutMs);
      await o.budgetShare.pull();
      // Polling before the cluster's demand is known would follow this process's subscriptions alone.
      if (!(await o.union.refresh())) throw new Error('cluster demand not read');
      if (lease.gen !== gen || !o.backplane.up) return;
      this.epoch = epoch;
      this.prepared = true;
      o.logger.info({ gen, epoch, topics: n }, 'polling as the cluster leader');
      const poller = o.poller();
      for (const s of poller?.statuses() ?? []) if (s.state !== 'idle') o.bus.publishStatus(s);
      poller?.wakeAll();
    } catch (err) {
      o.logger.warn({ err: (err as Error).message }, 'leader state not loaded; retrying');
    }
  }
}
