import type { Bus, FeedStatus } from '../bus/bus.js';
import type { PollerHandle } from '../poller/poller.js';
import type { LoadedState } from '../persist/load.js';
import type { Demand, DemandView } from '../poller/demand.js';
import type { StateStore } from '../state/store.js';
import type { SharedCount } from '../upstream/allowance.js';
import type { SharedCache } from '../upstream/cache.js';

/**
 * The seam between one process and a cluster of them. The bridge wires the
 * poller, gateway, journal, recorder and caches to a topology and never
 * asks which one it has: `LocalTopology` (one process, its own state, bus
 * and budget) or `ClusterTopology` (processes joined by Redis: one polls,
 * every one serves). `createTopology` makes the one decision.
 * See docs/ARCHITECTURE.md and docs/DEPLOYMENT.md §Cluster mode.
 */
export interface Topology {
  /** `local` or `cluster`, for logs and `/status`. */
  readonly kind: 'local' | 'cluster';
  /** The state clients are served from (in a cluster, this process's mirror of the shared state). */
  readonly store: StateStore;
  /** The state the poller writes to (in a cluster, through the fenced leader writer). */
  readonly pollStore: StateStore;
  /** Change batches and feed states between the poller and every gateway. */
  readonly bus: Bus;
  /** This process's subscriber demand (what its gateway records). */
  readonly demand: Demand;
  /** The demand the poller follows (in a cluster, the union of every process's). */
  readonly pollDemand: DemandView;
  /** A cache of lookups shared by every process, if there are several. */
  readonly sharedCache: SharedCache | undefined;
  /** Where the day's on-demand calls are counted for every process, if there are several. */
  readonly sharedAllowance: SharedCount | undefined;
  /** What the state files held at start (a single process with STATE=on); a cluster's state is in Redis. */
  readonly restored: RestoredState | undefined;
  /** Joins (a cluster: connects, loads the shared state, takes part in the lease election). */
  start(): Promise<void>;
  /** Hands the topology the poller it lets poll. */
  attach(poller: PollerHandle): void;
  /** Whether this process may call the upstream and write the state and recordings now. */
  mayPoll(): boolean;
  /** Every feed's state as this process reports it: the one source for `status` frames and `/status`. */
  statuses(): FeedStatus[];
  /** Facts for `/status` (a cluster's role, lease and backplane), if any. */
  info(): Record<string, unknown> | undefined;
  /** Leaves (a cluster: gives up the lease, so another process takes over while this one drains its clients). */
  stop(): Promise<void>;
  /** Closes the bus, once nothing publishes or listens any more. */
  close(): Promise<void>;
}

/** What a start restored from the state files. */
export interface RestoredState {
  /** The files' content. */
  readonly loaded: LoadedState;
  /** Topics restored into the store. */
  readonly topics: number;
  /** Topics left out: their written row does not match its checksum. */
  readonly rejected: readonly string[];
}

/** What `/status` shows of a restore. */
export function restoredInfo(r: RestoredState | undefined): Record<string, unknown> | null {
  if (!r) return null;
  const problems = r.loaded.problems.map((p) => `${p.file}:${p.line}: ${p.reason}${p.setAside ? ` (set aside as ${p.setAside})` : ''}`);
  for (const key of r.rejected) problems.push(`${key}: checksum of the written row does not match; left out`);
  return { topics: r.topics, clean: r.loaded.cleanEpoch !== undefined, problems };
}
