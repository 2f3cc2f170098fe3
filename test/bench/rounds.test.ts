import { describe, expect, it } from 'vitest';
import { medianRatios, mergeRounds, roundRatios } from '../../bench/lib/rounds.js';
import type { PeerResult } from '../../bench/scenarios/fanout.js';

function peer(cpu: number, p99: number, lost = 0): PeerResult {
  return {
    updatesPerSec: 1000 * cpu,
    cpuUsPerUpdate: cpu,
    p50Ms: p99 / 2,
    p99Ms: p99,
    lost,
    disconnects: 0,
    drainedMs: 0,
    outOfOrder: lost,
    offeredPerSec: 150_000,
    serverCpu: 0.2,
    loadCpu: 0.4,
    otherCpu: 0,
    loadSaturated: false,
    connect: { openMs: 1, subscribeMs: 1, failed: 0 },
    continuity: {} as PeerResult['continuity'],
    scanCheck: { verifiedFrames: 10, mismatches: 0 },
    measurement: { warmupMs: 0, windows: 1, windowMs: 1, statistic: 'median' },
    peerStats: {},
    windows: [{} as PeerResult['windows'][number]],
    snapshotProbes: [{ ms: cpu } as NonNullable<PeerResult['snapshotProbes']>[number]],
  };
}

describe('fan-out rounds', () => {
  it('takes medians of rates and latencies and sums losses', () => {
    const m = mergeRounds([peer(2, 100), peer(1, 300, 2), peer(3, 200)]);
    expect(m.cpuUsPerUpdate).toBe(2);
    expect(m.p99Ms).toBe(200);
    expect(m.lost).toBe(2);
    expect(m.outOfOrder).toBe(2);
    expect(m.scanCheck.verifiedFrames).toBe(30);
    expect(m.windows).toHaveLength(3);
    expect(m.snapshotProbes).toHaveLength(3);
    expect(m.rounds.map((r) => r.cpuUsPerUpdate)).toEqual([2, 1, 3]);
  });

  it('pairs peers within a round and takes the median of the rounds’ ratios', () => {
    const rounds = [
      { bridge: peer(2, 100), floor: peer(1, 100), socketio: peer(10, 400) },
      { bridge: peer(3, 90), floor: peer(3, 100), socketio: peer(12, 400) },
      { bridge: peer(1.5, 80), floor: peer(1.2, 100) },
    ];
    const per = rounds.map(roundRatios);
    expect(per[0]!.cpuVsFloor).toBe(2);
    expect(per[2]!.cpuVsSocketio).toBeNaN();
    const m = medianRatios(per);
    expect(m.cpuVsFloor).toBe(1.25);
    expect(m.cpuVsSocketio).toBeCloseTo((0.2 + 0.25) / 2);
    expect(m.p99VsFloor).toBe(0.9);
  });
});
