import type { FeedStatus } from '../bus/bus.js';
import { ClusterNode, type ClusterNodeOptions } from '../cluster/node.js';
import { type PollerHandle } from '../poller/poller.js';
import { Demand } from '../poller/demand.js';
import { StateStore } from '../state/store.js';
import type { Topology } from './topology.js';

/** Options of `ClusterTopology`: the node's, without the parts the topology makes. */
export type ClusterTopologyOptions = Omit<ClusterNodeOptions, 'store' | 'demand'> & {
  /** Patches kept per topic for resume (RING_SIZE). */
  readonly ringSize: number;
};

/**
 * Processes joined by Redis (REDIS_URL): the lease holder polls and writes
 * the shared state through a fenced writer; every process serves from its
 * mirror of that state, fed by the shared bus; demand, the budget and
 * lookups are shared. The state lives in Redis, so nothing is restored
 * from files. See src/cluster/ and docs/DEPLOYMENT.md §Cluster mode.
 */
export class ClusterTopology implements Topology {
  readonly kind = 'cluster' as const;
  readonly store: StateStore;
  readonly demand = new Demand();
  readonly restored = undefined;
  /** This process's cluster membership. */
  readonly node: ClusterNode;

  /** A topology joining the cluster at `opts.url` once started. */
  constructor(opts: ClusterTopologyOptions) {
    this.store = new StateStore({ ringSize: opts.ringSize });
    this.node = new ClusterNode({ ...opts, store: this.store, demand: this.demand });
  }

  /** The shared bus. */
  get bus(): ClusterNode['bus'] {
    return this.node.bus;
  }

  /** The fenced writer of the shared state. */
  get pollStore(): StateStore {
    return this.node.pollStore;
  }

  /** Every process's demand together. */
  get pollDemand(): ClusterNode['union'] {
    return this.node.union;
  }

  /** The lookups cache in Redis. */
  get sharedCache(): ClusterNode['cache'] {
    return this.node.cache;
  }

  /** The day's on-demand calls of every process, counted in Redis. */
  get sharedAllowance(): ClusterNode['allowance'] {
    return this.node.allowance;
  }

  /** Connects, loads the shared state and takes part in the lease election. */
  start(): Promise<void> {
    return this.node.start();
  }

  /** Lets `poller` poll while this process holds the lease. */
  attach(poller: PollerHandle): void {
    this.node.attach(poller);
  }

  /** While this process holds the lease and Redis is reachable. */
  mayPoll(): boolean {
    return this.node.mayPoll();
  }

  /** The leader's feed states as shared (`degraded` while Redis is away). */
  statuses(): FeedStatus[] {
    return this.node.statuses();
  }

  /** Role, lease and backplane. */
  info(): Record<string, unknown> {
    return { ...this.node.info() };
  }

  /** Gives up the lease, so another process takes over while this one drains its clients. */
  stop(): Promise<void> {
    return this.node.stop();
  }

  /** Closes the shared bus. */
  close(): Promise<void> {
    return this.node.bus.close();
  }
}
