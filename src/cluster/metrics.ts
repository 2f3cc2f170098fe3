import { Counter, Gauge, type Registry } from 'prom-client';

/**
 * Metrics of cluster mode, registered in the bridge's registry (so they
 * appear at `/metrics` next to the others). Listed in docs/DEPLOYMENT.md
 * §What to monitor.
 */
export class ClusterMetrics {
  /** 1 while this process holds the lease and may poll. */
  readonly leader: Gauge;
  /** 1 while both Redis connections are up. */
  readonly backplaneUp: Gauge;
  /** Fencing generation of this process's current or last term. */
  readonly generation: Gauge;
  /** Times this process acquired the lease. */
  readonly elections: Counter;
  /** Batch and status writes of the leader, by outcome. */
  readonly writes: Counter<'kind' | 'outcome'>;
  /** Changes received from the backplane, by what the mirror did with them. */
  readonly events: Counter<'outcome'>;
  /** Feed reloads from Redis, by reason. */
  readonly resyncs: Counter<'reason'>;
  /** Shared on-demand cache lookups, by result. */
  readonly sharedCache: Counter<'result'>;

  /** Registers every cluster metric in `registry`. */
  constructor(registry: Registry) {
    const registers = [registry];
    this.leader = new Gauge({ name: 'krx_cluster_leader', help: '1 while this process holds the poller lease and may poll', registers });
    this.backplaneUp = new Gauge({ name: 'krx_cluster_backplane_up', help: '1 while the Redis connections are up', registers });
    this.generation = new Gauge({ name: 'krx_cluster_generation', help: 'Fencing generation of the current or last lease term', registers });
    this.elections = new Counter({ name: 'krx_cluster_elections_total', help: 'Times this process acquired the poller lease', registers });
    this.writes = new Counter({
      name: 'krx_cluster_writes_total',
      help: 'Leader writes to Redis by kind (batch, status) and outcome (ok, fenced, epoch, error, dropped)',
      labelNames: ['kind', 'outcome'] as const,
      registers,
    });
    this.events = new Counter({
      name: 'krx_cluster_events_total',
      help: 'Changes received over the backplane by outcome (applied, duplicate, gap, fenced)',
      labelNames: ['outcome'] as const,
      registers,
    });
    this.resyncs = new Counter({
      name: 'krx_cluster_resyncs_total',
      help: 'Feed reloads from Redis by reason (gap, epoch)',
      labelNames: ['reason'] as const,
      registers,
    });
    this.sharedCache = new Counter({
      name: 'krx_cluster_shared_cache_total',
      help: 'Shared on-demand cache lookups by result (hit, call, waited, fallback)',
      labelNames: ['result'] as const,
      registers,
    });
  }
}
