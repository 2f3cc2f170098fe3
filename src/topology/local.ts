import { LocalBus, type FeedStatus } from '../bus/bus.js';
import type { PollerHandle } from '../poller/poller.js';
import type { Logger } from '../log.js';
import { loadState } from '../persist/load.js';
import { restoreInto } from '../persist/restore.js';
import { Demand } from '../poller/demand.js';
import { StateStore } from '../state/store.js';
import type { RestoredState, Topology } from './topology.js';

/** Options of `LocalTopology`. */
export interface LocalTopologyOptions {
  /** Patches kept per topic for resume (RING_SIZE). */
  readonly ringSize: number;
  /** The state directory to restore from (STATE=on), or undefined (STATE=off). */
  readonly stateDir: string | undefined;
  readonly logger: Logger;
  /** Clock, ms epoch. */
  readonly now: () => number;
}

/**
 * One process on its own: its store, an in-process bus, its own demand; it
 * always may poll. With a state directory, the last state of every topic
 * is loaded before anything can serve it, and a clean shutdown's epoch is
 * kept, so clients resume across the restart.
 */
export class LocalTopology implements Topology {
  readonly kind = 'local' as const;
  readonly store: StateStore;
  readonly bus = new LocalBus();
  readonly demand = new Demand();
  readonly sharedCache = undefined;
  readonly sharedAllowance = undefined;
  readonly restored: RestoredState | undefined;
  private poller: PollerHandle | undefined;

  /** A topology restored from `opts.stateDir`, if given. */
  constructor(opts: LocalTopologyOptions) {
    const loaded = opts.stateDir === undefined ? undefined : loadState(opts.stateDir, opts.now());
    this.store = new StateStore({ ringSize: opts.ringSize, ...(loaded?.cleanEpoch ? { epoch: loaded.cleanEpoch } : {}) });
    if (loaded) {
      const counts = restoreInto(this.store, loaded);
      this.restored = { loaded, topics: counts.restored, rejected: counts.rejected };
      opts.logger.info({ topics: counts.restored, clean: loaded.cleanEpoch !== undefined, dir: opts.stateDir }, 'state loaded');
      for (const p of loaded.problems) opts.logger.warn({ file: p.file, line: p.line, reason: p.reason, setAside: p.setAside }, 'state file damaged');
      if (counts.rejected.length) opts.logger.warn({ topics: counts.rejected.length }, 'state rows left out: checksum mismatch');
    }
  }

  /** The store the poller writes: the one clients are served from. */
  get pollStore(): StateStore {
    return this.store;
  }

  /** The demand the poller follows: this process's. */
  get pollDemand(): Demand {
    return this.demand;
  }

  /** Nothing to join. */
  async start(): Promise<void> {}

  /** Keeps the poller, whose feeds' states are this topology's statuses. */
  attach(poller: PollerHandle): void {
    this.poller = poller;
  }

  /** Always. */
  mayPoll(): boolean {
    return true;
  }

  /** The poller's feed states. */
  statuses(): FeedStatus[] {
    return this.poller?.statuses() ?? [];
  }

  /** Nothing beyond the bridge's own facts. */
  info(): undefined {
    return undefined;
  }

  /** Nothing to leave. */
  async stop(): Promise<void> {}

  /** Closes the bus. */
  close(): Promise<void> {
    return this.bus.close();
  }
}
