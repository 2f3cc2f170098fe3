import { randomBytes } from 'node:crypto';
import type { Config } from '../config/config.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics/metrics.js';
import type { Sessions } from '../market/session.js';
import { Simulator, type SimulatorOptions } from '../sim/index.js';
import type { OnDemandAllowance } from '../upstream/allowance.js';
import type { Budget } from '../upstream/budget.js';
import type { Spender } from '../upstream/cache.js';
import { UpstreamClient, type UpstreamResult } from '../upstream/client.js';
import { requireRows } from '../upstream/errors.js';

/** The upstream a bridge calls. */
export interface StartedUpstream {
  readonly client: UpstreamClient;
  /** The built-in simulator, when no UPSTREAM_URL is configured. */
  readonly sim: Simulator | undefined;
  /** The origin called (the simulator's loopback URL when simulated); never shown to clients. */
  readonly origin: string;
}

/** What starting the upstream needs. */
export interface UpstreamDeps {
  readonly budget: Budget;
  readonly metrics: Metrics;
  readonly logger: Logger;
  readonly sessions: Sessions;
  /** Clock, ms epoch. */
  readonly now: () => number;
  /** Overrides of the built-in simulator's options (tests). */
  readonly simulator?: Partial<SimulatorOptions> | undefined;
}

/**
 * The upstream client of `config`: the configured service, or with no
 * UPSTREAM_URL the built-in simulator started on a loopback port with a
 * random key. Its calls and the budget feed the metrics.
 */
export async function startUpstream(config: Config, deps: UpstreamDeps): Promise<StartedUpstream> {
  let baseUrl = config.UPSTREAM_URL;
  let apiKey = config.UPSTREAM_API_KEY;
  let sim: Simulator | undefined;
  if (!baseUrl || !apiKey) {
    const key = randomBytes(16).toString('hex');
    sim = new Simulator({
      apiKey: key,
      clock: config.SIM_CLOCK,
      seed: config.SIM_SEED,
      dailyLimit: config.SIM_DAILY_LIMIT,
      sessions: deps.sessions,
      logger: deps.logger.child({ component: 'sim' }),
      ...deps.simulator,
    });
    deps.logger.info({ clock: config.SIM_CLOCK, seed: config.SIM_SEED }, 'no UPSTREAM_URL set: starting the built-in simulator on a loopback port');
    baseUrl = (await sim.start({ port: 0, host: '127.0.0.1' })).url;
    apiKey = deps.simulator?.apiKey ?? key;
  }
  const client = new UpstreamClient({
    baseUrl,
    apiKey,
    timeoutMs: config.UPSTREAM_TIMEOUT_MS,
    retries: config.UPSTREAM_RETRIES,
    connections: config.UPSTREAM_CONNECTIONS,
    logger: deps.logger.child({ component: 'upstream' }),
    budget: deps.budget,
    now: deps.now,
  });
  observe(client, deps.budget, deps.metrics, deps.now);
  return { client, sim, origin: new URL(baseUrl).origin };
}

function observe(upstream: UpstreamClient, budget: Budget, m: Metrics, now: () => number): void {
  upstream.on('call', (e) => {
    if (e.attempts === 0) return;
    m.upstreamCalls.inc({ endpoint: e.endpointId, outcome: e.code ?? 'ok' }, e.attempts);
    m.upstreamLatency.observe({ endpoint: e.endpointId }, e.ms / 1000);
    if (e.dropped) m.rowsDropped.inc({ endpoint: e.endpointId }, e.dropped);
    if (e.plain !== undefined) m.listPlain.inc({ endpoint: e.endpointId, reason: e.plain });
  });
  budget.on('change', (s) => {
    if (s.remaining !== null) m.budgetRemaining.set(s.remaining);
    if (s.limit !== null) m.budgetLimit.set(s.limit);
  });
  // A scrape after the reset, with no call since (a weekend), sees the new day's budget.
  m.beforeScrape(() => budget.refresh(now()));
}

/** The caller behind the on-demand cache. */
export interface LookupCaller {
  call(id: string, params: Record<string, unknown>, spend?: Spender): Promise<UpstreamResult>;
}

/**
 * The upstream calls of client lookups: each takes a ticket of the on-demand
 * share first, and the share (and the asking client's part of it) counts
 * the HTTP attempts actually made, retries too (none for a call refused
 * before any request). An answer whose every row was dropped is schema
 * drift, answered as an error, never as an empty success.
 */
export function lookupCaller(upstream: UpstreamClient, allowance: OnDemandAllowance, metrics: Metrics): LookupCaller {
  return {
    async call(id, params, spend) {
      const ticket = await allowance.take();
      let attempts = 0;
      try {
        const r = await upstream.call(id, params, { onAttempt: () => void attempts++ });
        requireRows(r, id);
        return r;
      } catch (err) {
        if ((err as { drift?: unknown }).drift !== undefined) metrics.lookupDrift.inc({ endpoint: id });
        throw err;
      } finally {
        allowance.settle(ticket, attempts);
        spend?.spent(attempts);
      }
    },
  };
}
