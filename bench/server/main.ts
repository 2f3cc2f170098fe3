import { cpuMicros, fileLimit, fullGc, probe, serve } from '../lib/child.js';
import { SyntheticMarket, wallMs } from '../lib/market.js';
import { subscriberCounts, type SubsLayout } from '../lib/subs.js';
import { createPeer, type Peer, type PeerName, type PeerOptions } from './peer.js';
import { Ticker } from './ticker.js';
import type { CycleConfig } from '../scenarios/cycle.js';
import type { EconomyConfig } from '../scenarios/economy.js';
import type { RecorderConfig } from '../scenarios/recorder.js';

/**
 * The benchmark server process: one peer under test plus the synthetic
 * tick source, driven by the orchestrator over IPC. Every figure that
 * needs this process's own clock or CPU time is measured here.
 */

/** Arguments of `start`. */
export interface StartArgs {
  readonly peer: PeerName;
  readonly symbols: number;
  readonly seed: number;
  readonly changeRatio: number;
  /** The load's subscription layout, to count offered deliveries; none for idle scenarios. */
  readonly subs?: SubsLayout;
  /** The bridge gateway's connection limits (other peers ignore them). */
  readonly limits?: PeerOptions;
}

/** Reply of `mark`: cumulative counters at this instant. */
export interface ServerMark {
  readonly cpuUs: number;
  readonly wallMs: number;
  readonly ticks: number;
  readonly skipped: number;
  /** Changes published. */
  readonly changes: number;
  /** Deliveries the published changes call for (subscribers of each changed topic). */
  readonly offered: number;
  /** Largest tick lag since the previous mark, ms. */
  readonly maxLagMs: number;
  /** Longest time one tick took in the tick source and peer, since the previous mark, ms. */
  readonly maxTickMs: number;
  readonly rss: number;
  readonly heapUsed: number;
  readonly peer: Record<string, number>;
}

let market: SyntheticMarket | undefined;
let peer: Peer | undefined;
let counts: Int32Array = new Int32Array(0);
let ticker: Ticker | undefined;
let changes = 0;
let offered = 0;
let maxTickMs = 0;

function tick(): void {
  const t0 = performance.now();
  const list = market!.step();
  // Stamped after the rows are made, so latency starts where the peer's work does; in whole
  // milliseconds, as the protocol's `ts` is (rounded down: latencies read up to 1 ms long).
  peer!.publish(list, Math.floor(wallMs()));
  changes += list.length;
  for (let i = 0; i < list.length; i++) offered += counts[list[i]!.index]!;
  const took = performance.now() - t0;
  if (took > maxTickMs) maxTickMs = took;
}

serve(
  {
    async start(a: StartArgs) {
      market = new SyntheticMarket({ symbols: a.symbols, seed: a.seed, changeRatio: a.changeRatio });
      counts = a.subs ? subscriberCounts(a.subs) : new Int32Array(a.symbols);
      peer = await createPeer(a.peer, market, a.limits);
      const port = await peer.listen();
      return { port, pid: process.pid, fileLimit: fileLimit() };
    },
    ticks(a: { tickMs: number }) {
      ticker?.stop();
      ticker = new Ticker(a.tickMs, tick);
      ticker.start();
      return true;
    },
    mark(): ServerMark {
      const m = process.memoryUsage();
      const out: ServerMark = {
        cpuUs: cpuMicros(),
        wallMs: performance.now(),
        ticks: ticker?.ticks ?? 0,
        skipped: ticker?.skipped ?? 0,
        changes,
        offered,
        maxLagMs: ticker?.takeMaxLag() ?? 0,
        maxTickMs,
        rss: m.rss,
        heapUsed: m.heapUsed,
        peer: probe(() => peer?.stats()) ?? {},
      };
      maxTickMs = 0;
      return out;
    },
    stopTicks() {
      ticker?.stop();
      return { seqs: Array.from(market?.seqs ?? []) };
    },
    memory(a: { gc?: boolean }) {
      if (a.gc) fullGc();
      const m = process.memoryUsage();
      return { rss: m.rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external, arrayBuffers: m.arrayBuffers };
    },
    stats() {
      return peer?.stats() ?? {};
    },
    // Loaded on demand: the fan-out and connection runs should not carry these modules.
    async cycle(a: CycleConfig) {
      return (await import('../scenarios/cycle.js')).runCycle(a);
    },
    async economy(a: EconomyConfig) {
      return (await import('../scenarios/economy.js')).runEconomy(a);
    },
    async recorder(a: RecorderConfig) {
      return (await import('../scenarios/recorder.js')).runRecorder(a);
    },
  },
  async () => {
    ticker?.stop();
    await peer?.close();
  },
);
