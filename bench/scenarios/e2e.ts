import { median } from '../lib/stats.js';
import type { ContinuityTotals, LatencySummary } from '../lib/stats.js';
import type { PollingPeerName } from '../server/polling.js';
import type { StandInCounts } from '../upstream/standin.js';
import { runE2ePeer } from './e2e-peer.js';

/**
 * The end-to-end scenario: the whole path from the upstream's HTTP answer
 * to the client's socket. A stand-in upstream (its own process) serves
 * both markets' whole quote lists and changes a fixed share of the symbols
 * every second; the peer under test (server process, core 0) polls it over
 * HTTP once a second and fans the changes out to the load's clients (load
 * process, core 1, beside the stand-in). Peers run one after the other.
 * Latency runs from the stand-in's answer (stamped into each changed row)
 * to the client's receipt. Marks are taken in the middle of the largest
 * gap between the peer's polls, where the stand-in's changes also come, so
 * each window holds whole poll cycles and each poll one period's changes.
 */

/** Parameters of the end-to-end scenario. */
export interface E2eConfig {
  readonly symbols: number;
  readonly clients: number;
  readonly topicsPerClient: number;
  readonly changeRatio: number;
  /** The stand-in's change period and the peers' poll interval, ms. */
  readonly periodMs: number;
  readonly seed: number;
  readonly warmupMs: number;
  readonly windows: number;
  /** Window length, ms: a whole number of periods. */
  readonly windowMs: number;
  /** Connection handshakes (and subscriptions) in flight at once. */
  readonly concurrency: number;
  /** Quiet time that ends the drain after the last change, ms. */
  readonly drainMs: number;
  /** Load clients per loopback source address (the bridge's MAX_CONNECTIONS_PER_IP is 100). */
  readonly perAddress: number;
  readonly peers: readonly PollingPeerName[];
}

/** One measurement window of one peer. */
export interface E2eWindow {
  readonly ms: number;
  readonly updatesPerSec: number;
  /** Deliveries the changes the stand-in served call for, per second. */
  readonly offeredPerSec: number;
  readonly cpuUsPerUpdate: number;
  readonly serverCpu: number;
  readonly loadCpu: number;
  readonly upstreamCpu: number;
  /** CPU other processes on the machine took, cores (NaN off Linux). */
  readonly otherCpu: number;
  readonly latency: LatencySummary;
  readonly serverRssMb: number;
  /** The bridge's mean poll cycle in the window, request sent to last frame written, ms (bridge only). */
  readonly cycleMs?: number;
}

/** Medians over one peer's windows, with totals over its whole run. */
export interface E2ePeerResult {
  readonly updatesPerSec: number;
  readonly offeredPerSec: number;
  /** Server CPU over every window together ÷ the updates received in them, µs. */
  readonly cpuUsPerUpdate: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** The bridge's own poll cycle, request sent to last frame written, ms (median of the windows' means; bridge only). */
  readonly cycleMs?: number;
  readonly lost: number;
  readonly outOfOrder: number;
  readonly disconnects: number;
  readonly lastDisconnect?: string;
  /** Patches that arrived without the stand-in's stamp (must be 0). */
  readonly unstamped: number;
  /** Frames the load scanned and also parsed to check the scan, and how many disagreed (must be 0; socket.io's are parsed by its client). */
  readonly scanCheck: { verifiedFrames: number; mismatches: number };
  readonly drainedMs: number;
  readonly serverCpu: number;
  readonly loadCpu: number;
  readonly upstreamCpu: number;
  readonly otherCpu: number;
  readonly loadSaturated: boolean;
  readonly connect: { openMs: number; subscribeMs: number; failed: number };
  readonly continuity: ContinuityTotals & { tailLost: number };
  /** The stand-in's totals: changes made, served, and overwritten before any poll carried them. */
  readonly upstream: StandInCounts & { skippedSteps: number };
  readonly peerStats: Record<string, number>;
  readonly measurement: { warmupMs: number; windows: number; windowMs: number; statistic: 'median' };
  readonly windows: E2eWindow[];
  /** Seconds waited for a quiet machine before the run (`--wait-idle`). */
  readonly waitedIdleS?: number;
}

/** The run's figures: each peer's (or its error), by name, and the bridge's ratio to socket.io. */
export type E2eResult = {
  readonly clients: number;
  readonly topicsPerClient: number;
  readonly symbols: number;
  readonly changeRatio: number;
  readonly periodMs: number;
  /** Bridge CPU per update ÷ socket.io's (the median of the rounds' ratios; null without both). */
  readonly ratios: { readonly cpuVsSocketio: number | null };
  readonly roundRatios?: number[];
} & { readonly [P in PollingPeerName]?: E2ePeerResult | { error: string } };

/** How `runE2e` runs: rounds, the wait for a quiet machine, logging, and where server profiles go. */
export interface E2eRun {
  readonly rounds: number;
  /** Waits for a quiet machine; resolves with the seconds waited, or undefined when not asked to. */
  readonly settle: () => Promise<number | undefined>;
  readonly log: (s: string) => void;
  /** Directory of each peer's server profile (first round only); none by default. */
  readonly profileDir?: (peer: PollingPeerName) => string;
}

/**
 * Runs every peer `rounds` times in turn (bridge, socket.io, bridge, …).
 * A peer's figures are medians over its rounds (lost, out of order and
 * closed summed); the ratio is the median of the rounds' ratios.
 */
export async function runE2e(cfg: E2eConfig, run: E2eRun): Promise<E2eResult> {
  const { rounds, settle, log } = run;
  const got = new Map<PollingPeerName, E2ePeerResult[]>();
  const failed = new Map<PollingPeerName, string>();
  const perRound: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const these: Partial<Record<PollingPeerName, E2ePeerResult>> = {};
    for (const peer of cfg.peers) {
      if (failed.has(peer)) continue;
      log(`e2e: ${peer}${rounds > 1 ? ` (round ${round + 1} of ${rounds})` : ''}`);
      try {
        const waitedIdleS = await settle();
        const r = await runE2ePeer(peer, cfg, log, round === 0 ? run.profileDir?.(peer) : undefined);
        these[peer] = waitedIdleS === undefined ? r : { ...r, waitedIdleS };
        got.set(peer, [...(got.get(peer) ?? []), these[peer]]);
      } catch (e) {
        failed.set(peer, e instanceof Error ? e.message : String(e));
        log(`  ${peer} failed: ${failed.get(peer)!}`);
      }
    }
    perRound.push((these.bridge?.cpuUsPerUpdate ?? NaN) / (these.socketio?.cpuUsPerUpdate ?? NaN));
  }
  const peers: Partial<Record<PollingPeerName, E2ePeerResult | { error: string }>> = {};
  for (const peer of cfg.peers) {
    const f = failed.get(peer);
    peers[peer] = f !== undefined ? { error: f } : mergeE2eRounds(got.get(peer) ?? []);
  }
  const ratio = median(perRound);
  return {
    clients: cfg.clients,
    topicsPerClient: cfg.topicsPerClient,
    symbols: cfg.symbols,
    changeRatio: cfg.changeRatio,
    periodMs: cfg.periodMs,
    ...peers,
    ratios: { cpuVsSocketio: Number.isFinite(ratio) ? ratio : null },
    ...(rounds > 1 ? { roundRatios: perRound } : {}),
  };
}

/** One peer's rounds merged: medians of rates, CPU and latency; sums of what went wrong; every window kept. */
export function mergeE2eRounds(results: readonly E2ePeerResult[]): E2ePeerResult {
  const first = results[0];
  if (first === undefined) throw new Error('mergeE2eRounds: no rounds');
  if (results.length === 1) return first;
  const med = (f: (r: E2ePeerResult) => number): number => median(results.map(f));
  const sum = (f: (r: E2ePeerResult) => number): number => results.reduce((a, r) => a + f(r), 0);
  return {
    ...first,
    updatesPerSec: med((r) => r.updatesPerSec),
    offeredPerSec: med((r) => r.offeredPerSec),
    cpuUsPerUpdate: med((r) => r.cpuUsPerUpdate),
    p50Ms: med((r) => r.p50Ms),
    p99Ms: med((r) => r.p99Ms),
    ...(first.cycleMs !== undefined ? { cycleMs: med((r) => r.cycleMs ?? NaN) } : {}),
    serverCpu: med((r) => r.serverCpu),
    loadCpu: med((r) => r.loadCpu),
    upstreamCpu: med((r) => r.upstreamCpu),
    otherCpu: med((r) => r.otherCpu),
    loadSaturated: results.some((r) => r.loadSaturated),
    lost: sum((r) => r.lost),
    outOfOrder: sum((r) => r.outOfOrder),
    disconnects: sum((r) => r.disconnects),
    unstamped: sum((r) => r.unstamped),
    scanCheck: { verifiedFrames: sum((r) => r.scanCheck.verifiedFrames), mismatches: sum((r) => r.scanCheck.mismatches) },
    windows: results.flatMap((r) => r.windows),
  };
}
