import { cpus } from 'node:os';
import { Child } from '../lib/child.js';
import { busyCores, machineCpu, type MachineCpu } from '../lib/procstat.js';
import { median } from '../lib/stats.js';
import type { SubsLayout } from '../lib/subs.js';
import type { ContinuityTotals } from '../lib/stats.js';
import type { LoadCounts } from '../load/pool.js';
import type { LatencySummary } from '../lib/stats.js';
import type { ServerMark } from '../server/main.js';
import type { PeerName } from '../server/peer.js';
import type { SnapshotProbe } from '../load/snapshot.js';

/**
 * The fan-out scenario: one peer at a time, in its own server process on
 * core 0, with a fresh load process on core 1 running every client. The
 * tick source starts once all clients are subscribed; after a warm-up,
 * figures are taken over consecutive windows and summarised by median.
 */

/** Parameters of a fan-out run. */
export interface FanoutConfig {
  readonly symbols: number;
  readonly clients: number;
  readonly topicsPerClient: number;
  readonly changeRatio: number;
  readonly tickMs: number;
  readonly seed: number;
  readonly warmupMs: number;
  readonly windows: number;
  readonly windowMs: number;
  /** Connection handshakes (and subscriptions) in flight at once. */
  readonly concurrency: number;
  /**
   * After the last tick, wait at least this long, and then until no update
   * arrived for this long (at most `MAX_DRAIN_MS`), before counting what
   * never arrived, ms.
   */
  readonly drainMs: number;
  /** Wildcard snapshot probes run against the bridge while its load runs (0 for none). */
  readonly snapshotProbes: number;
}

/** One measurement window of one peer. */
export interface Window {
  /** Length by the server's clock, ms. */
  readonly ms: number;
  readonly updatesPerSec: number;
  /** Deliveries the published changes called for, per second. */
  readonly offeredPerSec: number;
  readonly cpuUsPerUpdate: number;
  /** Server CPU time over wall time (1 = one core busy). */
  readonly serverCpu: number;
  /** Load process CPU time over wall time. */
  readonly loadCpu: number;
  /** CPU other processes on the machine took over the window, cores (NaN off Linux). */
  readonly otherCpu: number;
  readonly latency: LatencySummary;
  readonly lost: number;
  readonly outOfOrder: number;
  readonly ticks: number;
  readonly skippedTicks: number;
  readonly maxTickLagMs: number;
  readonly maxTickMs: number;
  readonly serverRssMb: number;
}

/** Medians over the windows of one peer, plus totals over its whole run. */
export interface PeerResult {
  readonly updatesPerSec: number;
  readonly cpuUsPerUpdate: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** Updates lost over the whole run: gaps seen plus updates that never arrived. */
  readonly lost: number;
  /** Clients whose connection closed during the run without being asked to. */
  readonly disconnects: number;
  readonly lastDisconnect?: string;
  /** Time from the last tick until deliveries stopped (backlog drained), ms. */
  readonly drainedMs: number;
  readonly outOfOrder: number;
  readonly offeredPerSec: number;
  readonly serverCpu: number;
  readonly loadCpu: number;
  /** CPU taken by other processes on the machine (it may be shared), cores. */
  readonly otherCpu: number;
  /** The load process was busy ≥ 90% of a core: its figures bound the peer's from below. */
  readonly loadSaturated: boolean;
  readonly connect: { openMs: number; subscribeMs: number; failed: number };
  readonly continuity: ContinuityTotals & { tailLost: number; unexpected: number };
  /** Frames the load scanned and also parsed in full to check the scan, and how many disagreed (must be 0). */
  readonly scanCheck: { verifiedFrames: number; mismatches: number };
  readonly measurement: { warmupMs: number; windows: number; windowMs: number; statistic: 'median' };
  readonly peerStats: Record<string, number>;
  readonly windows: Window[];
  readonly snapshotProbes?: SnapshotProbe[];
}

interface Finish {
  readonly tailLost: number;
  readonly totals: ContinuityTotals;
  /** Connections that closed without being asked to, and the last reason given. */
  readonly disconnects: number;
  readonly lastDisconnect: string;
}

interface LoadMark extends LoadCounts {
  readonly cpuUs: number;
  readonly wallMs: number;
}

const SERVER = 'bench/server/main.ts';
const LOAD = 'bench/load/main.ts';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Longest wait for a backlog to drain after the last tick, ms. */
const MAX_DRAIN_MS = 60_000;

/** Waits until the load received nothing for `quietMs` (and `quietMs` at least); returns the time waited, ms. */
export async function drain(load: Child, quietMs: number): Promise<number> {
  const t0 = performance.now();
  let last = -1;
  for (;;) {
    await sleep(quietMs);
    const { received, snapshots } = await load.request<LoadMark>('mark');
    if (received + snapshots === last || performance.now() - t0 > MAX_DRAIN_MS) return performance.now() - t0;
    last = received + snapshots;
  }
}

/** The subscription layout of a fan-out run. */
export function layoutOf(cfg: FanoutConfig): SubsLayout {
  return { seed: cfg.seed, clients: cfg.clients, topicsPerClient: cfg.topicsPerClient, symbols: cfg.symbols };
}

/** Where to write CPU profiles of a run's processes (none by default). */
export interface ProfileDirs {
  readonly server?: string;
  readonly load?: string;
}

/** Runs one peer through the fan-out scenario. */
export async function runFanoutPeer(peer: PeerName, cfg: FanoutConfig, log: (s: string) => void, profile: ProfileDirs = {}): Promise<PeerResult> {
  const server = new Child({ name: `server(${peer})`, script: SERVER, core: 0, ...(profile.server ? { profileDir: profile.server } : {}) });
  const load = new Child({ name: `load(${peer})`, script: LOAD, core: 1, ...(profile.load ? { profileDir: profile.load } : {}) });
  try {
    const layout = layoutOf(cfg);
    const { port } = await server.request<{ port: number }>('start', {
      peer,
      symbols: cfg.symbols,
      seed: cfg.seed,
      changeRatio: cfg.changeRatio,
      subs: layout,
    });
    const target = { peer, port, symbols: cfg.symbols, seed: cfg.seed };
    const conn = await load.request<{ openMs: number; subscribeMs: number; failed: number; errors: number; lastError: string }>(
      'connect',
      { target, layout, concurrency: cfg.concurrency },
      300_000,
    );
    if (conn.failed > 0) log(`  ${peer}: ${conn.failed} clients failed to connect or subscribe`);
    if (conn.errors > 0) log(`  ${peer}: ${conn.errors} error messages (last: ${conn.lastError})`);
    log(`  ${peer}: ${cfg.clients} clients open in ${conn.openMs.toFixed(0)} ms, subscribed in ${conn.subscribeMs.toFixed(0)} ms`);
    await server.request('ticks', { tickMs: cfg.tickMs });
    await sleep(cfg.warmupMs);
    let prev = await marks(server, load);
    const windows: Window[] = [];
    for (let w = 0; w < cfg.windows; w++) {
      await sleep(cfg.windowMs);
      const next = await marks(server, load);
      windows.push(windowOf(prev, next));
      prev = next;
    }
    let snapshotProbes: SnapshotProbe[] | undefined;
    if (peer === 'bridge' && cfg.snapshotProbes > 0) {
      snapshotProbes = await load.request<SnapshotProbe[]>('snapshot', { port, expected: cfg.symbols, repeats: cfg.snapshotProbes, pauseMs: 300 });
    }
    const { seqs } = await server.request<{ seqs: number[] }>('stopTicks');
    const drainedMs = await drain(load, cfg.drainMs);
    const fin = await load.request<Finish>('finish', { seqs });
    const peerStats = await server.request<Record<string, number>>('stats');
    const scanCheck = { verifiedFrames: prev.l.verified, mismatches: prev.l.scanMismatches };
    return summarise(cfg, windows, conn, { ...fin, drainedMs }, peerStats, scanCheck, snapshotProbes);
  } finally {
    await Promise.all([load.close(), server.close()]);
  }
}

interface Marks {
  readonly s: ServerMark;
  readonly l: LoadMark;
  readonly m: MachineCpu | undefined;
}

async function marks(server: Child, load: Child): Promise<Marks> {
  const m = machineCpu();
  const [s, l] = await Promise.all([server.request<ServerMark>('mark'), load.request<LoadMark>('mark')]);
  return { s, l, m };
}

function windowOf(a: Marks, b: Marks): Window {
  const sMs = b.s.wallMs - a.s.wallMs;
  const lMs = b.l.wallMs - a.l.wallMs;
  const updates = b.l.received - a.l.received;
  const cpu = b.s.cpuUs - a.s.cpuUs;
  const serverCpu = cpu / (sMs * 1000);
  const loadCpu = (b.l.cpuUs - a.l.cpuUs) / (lMs * 1000);
  return {
    ms: sMs,
    updatesPerSec: (updates / lMs) * 1000,
    offeredPerSec: ((b.s.offered - a.s.offered) / sMs) * 1000,
    cpuUsPerUpdate: updates > 0 ? cpu / updates : NaN,
    serverCpu,
    loadCpu,
    otherCpu: Math.max(0, busyCores(a.m, b.m, cpus().length) - serverCpu - loadCpu),
    latency: b.l.latency,
    lost: b.l.totals.lost - a.l.totals.lost,
    outOfOrder: b.l.totals.outOfOrder - a.l.totals.outOfOrder,
    ticks: b.s.ticks - a.s.ticks,
    skippedTicks: b.s.skipped - a.s.skipped,
    maxTickLagMs: b.s.maxLagMs,
    maxTickMs: b.s.maxTickMs,
    serverRssMb: b.s.rss / 2 ** 20,
  };
}

function summarise(
  cfg: FanoutConfig,
  windows: Window[],
  conn: { openMs: number; subscribeMs: number; failed: number },
  fin: Finish & { drainedMs: number },
  peerStats: Record<string, number>,
  scanCheck: { verifiedFrames: number; mismatches: number },
  snapshotProbes: SnapshotProbe[] | undefined,
): PeerResult {
  const med = (f: (w: Window) => number): number => median(windows.map(f));
  const loadCpu = med((w) => w.loadCpu);
  return {
    updatesPerSec: med((w) => w.updatesPerSec),
    cpuUsPerUpdate: med((w) => w.cpuUsPerUpdate),
    p50Ms: med((w) => w.latency.p50),
    p99Ms: med((w) => w.latency.p99),
    lost: fin.totals.lost + fin.tailLost,
    disconnects: fin.disconnects,
    ...(fin.disconnects > 0 ? { lastDisconnect: fin.lastDisconnect } : {}),
    drainedMs: fin.drainedMs,
    outOfOrder: fin.totals.outOfOrder,
    offeredPerSec: med((w) => w.offeredPerSec),
    serverCpu: med((w) => w.serverCpu),
    loadCpu,
    otherCpu: med((w) => w.otherCpu),
    loadSaturated: loadCpu >= 0.9,
    connect: { openMs: conn.openMs, subscribeMs: conn.subscribeMs, failed: conn.failed },
    continuity: { ...fin.totals, tailLost: fin.tailLost },
    scanCheck,
    measurement: { warmupMs: cfg.warmupMs, windows: cfg.windows, windowMs: cfg.windowMs, statistic: 'median' },
    peerStats,
    windows,
    ...(snapshotProbes ? { snapshotProbes } : {}),
  };
}
