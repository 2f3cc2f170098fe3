import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBridge, type Bridge } from '../../src/bridge/bridge.js';
import { loadConfig, type Config } from '../../src/config/config.js';
import type { Channel, Market } from '../../src/protocol/constants.js';
import { LISTING_MARKETS, splitTopic } from '../lib/listing.js';
import type { PollingPeer, UpstreamTarget } from './polling.js';

/**
 * The bridge as `npm start` runs it: `createBridge` of `loadConfig` (the
 * CLI's configuration path, every default kept) with the stand-in as
 * UPSTREAM_URL. Its demand-driven poller polls the `quote` feeds of both
 * markets once a second as soon as clients subscribe. Settings that differ
 * from the defaults, and why, are in `E2E_SETTINGS`.
 */

/**
 * The settings given to the bridge beyond the upstream's address and key.
 * `MARKET_CLOCK=always`: with an upstream the default follows the KRX
 * sessions, and the run must not depend on the hour. `NAMES_PER_DAY=0`: the
 * stand-in serves no master data, so the English-name lookups would only
 * fail. `LOG_LEVEL=warn`: problems still show in the run's output.
 * `DATA_DIR`: a fresh directory per run (state journal and recordings stay
 * on, as by default).
 */
export const E2E_SETTINGS = { PORT: '0', HOST: '127.0.0.1', MARKET_CLOCK: 'always', NAMES_PER_DAY: '0', LOG_LEVEL: 'warn' } as const;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The whole bridge, polling the stand-in. */
export class BridgePollingPeer implements PollingPeer {
  private readonly dir = mkdtempSync(join(tmpdir(), 'krx-bench-e2e-'));
  private readonly config: Config;
  private bridgeStarted: Bridge | undefined;

  /** A bridge configured for `upstream`; nothing runs until `start`. */
  constructor(upstream: UpstreamTarget) {
    const env = { ...E2E_SETTINGS, UPSTREAM_URL: upstream.url, UPSTREAM_API_KEY: upstream.apiKey, DATA_DIR: this.dir };
    this.config = loadConfig(env, []);
  }

  /** The bridge, once started. */
  private get bridge(): Bridge {
    if (!this.bridgeStarted) throw new Error('the bridge is not started');
    return this.bridgeStarted;
  }

  /** Starts the bridge; resolves once both markets' symbol lists are loaded. */
  async start(): Promise<number> {
    this.bridgeStarted = await createBridge(this.config);
    const { port } = this.bridge.address;
    for (let i = 0; i < 200 && !LISTING_MARKETS.every((m) => this.bridge.symbols.loaded(m)); i++) await sleep(50);
    if (!LISTING_MARKETS.every((m) => this.bridge.symbols.loaded(m))) throw new Error('the bridge did not load the stand-in’s symbol lists');
    return port;
  }

  /**
   * Gateway counts, each quote feed's poll cycles, and from the bridge's own
   * `krx_poll_cycle_seconds` the time of its cycles so far (request sent to
   * the last frame written: fan-out runs inside the publish), summed, with
   * their count.
   */
  async stats(): Promise<Record<string, number>> {
    const g = this.bridge.gateway.stats();
    const out: Record<string, number> = {
      connections: g?.clients ?? 0,
      behind: g?.behind ?? 0,
      topics: g?.topics ?? 0,
      upstreamCalls: this.bridge.poller.calls ?? 0,
    };
    for (const m of LISTING_MARKETS) out[`cycles.${m}`] = this.bridge.poller.feed('quote', m)?.cycles ?? 0;
    const { values } = await this.bridge.metrics.cycleTime.get();
    out.cycleSecondsSum = values.filter((v) => v.metricName?.endsWith('_sum')).reduce((a, v) => a + v.value, 0);
    out.cycleCount = values.filter((v) => v.metricName?.endsWith('_count')).reduce((a, v) => a + v.value, 0);
    return out;
  }

  /** Each topic's seq in the bridge's store. */
  seqs(topics: readonly string[]): number[] {
    return topics.map((t) => {
      const { channel, market, code } = splitTopic(t);
      return this.bridge.store.entry(channel as Channel, market as Market, code)?.seq ?? 0;
    });
  }

  /** Stops the bridge (clients get close 1001) and removes its data directory. */
  async close(): Promise<void> {
    await this.bridge.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
