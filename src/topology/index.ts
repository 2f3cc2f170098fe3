import { join } from 'node:path';
import type { Config } from '../config/config.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics/metrics.js';
import type { Budget } from '../upstream/budget.js';
import { ClusterTopology } from './cluster.js';
import { LocalTopology } from './local.js';
import type { Topology } from './topology.js';

export { ClusterTopology, type ClusterTopologyOptions } from './cluster.js';
export { LocalTopology, type LocalTopologyOptions } from './local.js';
export { restoredInfo, type RestoredState, type Topology } from './topology.js';

/** What a topology shares with the rest of the bridge. */
export interface TopologyDeps {
  readonly budget: Budget;
  readonly metrics: Metrics;
  readonly logger: Logger;
  /** Clock, ms epoch. */
  readonly now: () => number;
}

/**
 * The topology `config` asks for: a cluster when REDIS_URL is set, else one
 * process, restored from DATA_DIR/state with STATE=on. The only place the
 * bridge's mode is decided.
 */
export function createTopology(config: Config, deps: TopologyDeps): Topology {
  if (config.REDIS_URL) {
    return new ClusterTopology({
      url: config.REDIS_URL,
      prefix: config.REDIS_PREFIX,
      leaseMs: config.LEASE_MS,
      baseMs: config.POLL_BASE_MS,
      streamMaxLen: config.REDIS_STREAM_MAXLEN,
      lockMs: config.UPSTREAM_TIMEOUT_MS * (config.UPSTREAM_RETRIES + 1) + 1000,
      ringSize: config.RING_SIZE,
      budget: deps.budget,
      metrics: deps.metrics,
      logger: deps.logger.child({ component: 'cluster' }),
      now: deps.now,
    });
  }
  return new LocalTopology({
    ringSize: config.RING_SIZE,
    stateDir: config.STATE === 'on' ? stateDir(config) : undefined,
    logger: deps.logger.child({ component: 'state' }),
    now: deps.now,
  });
}

/** The state directory under DATA_DIR. */
export function stateDir(config: Config): string {
  return join(config.DATA_DIR, 'state');
}
