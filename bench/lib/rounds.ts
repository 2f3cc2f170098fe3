import type { PeerResult } from '../scenarios/fanout.js';
import { median } from './stats.js';

/**
 * Fan-out peers run in rounds (`--rounds=N`): every round runs each peer
 * once, in the same order, so peers compared in one round ran minutes
 * apart at most. On a shared machine whose speed drifts between runs, the
 * median of per-round ratios is steadier than the ratio of one run each.
 * Pure functions.
 */

/** One round's figures of one peer, kept in the merged result. */
export interface RoundFigures {
  readonly updatesPerSec: number;
  readonly cpuUsPerUpdate: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly lost: number;
}

/** A peer's results over several rounds: medians of the rates and latencies, sums of the losses. */
export type MergedPeerResult = PeerResult & { readonly rounds: readonly RoundFigures[] };

/**
 * One peer's results of every round merged: the rates, CPU figures and
 * latency percentiles are medians over the rounds; lost, out-of-order,
 * closed and scan mismatches are summed; windows and snapshot probes are
 * every round's. Everything else is the first round's.
 */
export function mergeRounds(results: readonly PeerResult[]): MergedPeerResult {
  const first = results[0];
  if (first === undefined) throw new Error('mergeRounds: no rounds');
  const med = (f: (r: PeerResult) => number): number => median(results.map(f));
  const sum = (f: (r: PeerResult) => number): number => results.reduce((a, r) => a + f(r), 0);
  const probes = results.flatMap((r) => r.snapshotProbes ?? []);
  return {
    ...first,
    updatesPerSec: med((r) => r.updatesPerSec),
    cpuUsPerUpdate: med((r) => r.cpuUsPerUpdate),
    p50Ms: med((r) => r.p50Ms),
    p99Ms: med((r) => r.p99Ms),
    offeredPerSec: med((r) => r.offeredPerSec),
    serverCpu: med((r) => r.serverCpu),
    loadCpu: med((r) => r.loadCpu),
    otherCpu: med((r) => r.otherCpu),
    loadSaturated: results.some((r) => r.loadSaturated),
    lost: sum((r) => r.lost),
    outOfOrder: sum((r) => r.outOfOrder),
    disconnects: sum((r) => r.disconnects),
    scanCheck: { verifiedFrames: sum((r) => r.scanCheck.verifiedFrames), mismatches: sum((r) => r.scanCheck.mismatches) },
    windows: results.flatMap((r) => r.windows),
    ...(probes.length ? { snapshotProbes: probes } : {}),
    rounds: results.map((r) => ({ updatesPerSec: r.updatesPerSec, cpuUsPerUpdate: r.cpuUsPerUpdate, p50Ms: r.p50Ms, p99Ms: r.p99Ms, lost: r.lost })),
  };
}

/** The fan-out ratios of one round's peers. */
export function roundRatios(round: Readonly<Record<string, PeerResult | undefined>>): { cpuVsSocketio: number; cpuVsFloor: number; p99VsFloor: number } {
  const cpu = (p: string): number => round[p]?.cpuUsPerUpdate ?? NaN;
  const p99 = (p: string): number => round[p]?.p99Ms ?? NaN;
  return { cpuVsSocketio: cpu('bridge') / cpu('socketio'), cpuVsFloor: cpu('bridge') / cpu('floor'), p99VsFloor: p99('bridge') / p99('floor') };
}

/** Each ratio's median over the rounds (NaN where no round has it). */
export function medianRatios(perRound: readonly ReturnType<typeof roundRatios>[]): ReturnType<typeof roundRatios> {
  const m = (k: keyof ReturnType<typeof roundRatios>): number => median(perRound.map((r) => r[k]));
  return { cpuVsSocketio: m('cpuVsSocketio'), cpuVsFloor: m('cpuVsFloor'), p99VsFloor: m('p99VsFloor') };
}
