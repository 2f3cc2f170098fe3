import { cpus } from 'node:os';
import { Child } from '../lib/child.js';
import { listingTopics } from '../lib/listing.js';
import { wallMs } from '../lib/market.js';
import { msToQuietPhase } from '../lib/phase.js';
import { busyCores, machineCpu, type MachineCpu } from '../lib/procstat.js';
import { median } from '../lib/stats.js';
import type { ContinuityTotals } from '../lib/stats.js';
import type { SubsLayout } from '../lib/subs.js';
import type { LoadCounts, Target } from '../load/pool.js';
import type { E2eServerMark } from '../server/e2e.js';
import type { PollingPeerName } from '../server/polling.js';
import { STAMP_FIELD, type StandInCounts } from '../upstream/standin.js';
import type { E2eConfig, E2ePeerResult, E2eWindow } from './e2e.js';
import { drain } from './fanout.js';

/**
 * One peer's run of the end-to-end scenario (see e2e.ts): the stand-in,
 * the server and the load process started, clients connected and
 * subscribed with the market at rest, then the changes, the windows, the
 * drain and the continuity count.
 */

type UpstreamMark = StandInCounts & { skippedSteps: number; lastAnswers: number[]; cpuUs: number; wallMs: number };
type LoadMark = LoadCounts & { cpuUs: number; wallMs: number };

interface Marks {
  readonly s: E2eServerMark;
  readonly l: LoadMark;
  readonly u: UpstreamMark;
  readonly m: MachineCpu | undefined;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, Math.max(0, ms)));

/** Sleeps until the middle of the largest gap between the peer's polls of the two markets. */
async function betweenPolls(upstream: Child, periodMs: number): Promise<void> {
  const { lastAnswers } = await upstream.request<UpstreamMark>('mark');
  await sleep(msToQuietPhase(lastAnswers, wallMs(), periodMs));
}

/** The bridge's mean poll cycle between two marks, from its own cycle-time histogram. */
function cycleMs(a: Record<string, number>, b: Record<string, number>): { cycleMs?: number } {
  const n = (b.cycleCount ?? 0) - (a.cycleCount ?? 0);
  return n > 0 ? { cycleMs: (((b.cycleSecondsSum ?? 0) - (a.cycleSecondsSum ?? 0)) / n) * 1000 } : {};
}

async function marks(server: Child, load: Child, upstream: Child): Promise<Marks> {
  const m = machineCpu();
  const [s, l, u] = await Promise.all([server.request<E2eServerMark>('mark'), load.request<LoadMark>('mark'), upstream.request<UpstreamMark>('mark')]);
  return { s, l, u, m };
}

function windowOf(a: Marks, b: Marks): E2eWindow {
  const sMs = b.s.wallMs - a.s.wallMs;
  const lMs = b.l.wallMs - a.l.wallMs;
  const uMs = b.u.wallMs - a.u.wallMs;
  const updates = b.l.received - a.l.received;
  const cpu = b.s.cpuUs - a.s.cpuUs;
  const serverCpu = cpu / (sMs * 1000);
  const loadCpu = (b.l.cpuUs - a.l.cpuUs) / (lMs * 1000);
  const upstreamCpu = (b.u.cpuUs - a.u.cpuUs) / (uMs * 1000);
  return {
    ms: sMs,
    updatesPerSec: (updates / lMs) * 1000,
    offeredPerSec: ((b.u.offered - a.u.offered) / uMs) * 1000,
    cpuUsPerUpdate: updates > 0 ? cpu / updates : NaN,
    serverCpu,
    loadCpu,
    upstreamCpu,
    otherCpu: Math.max(0, busyCores(a.m, b.m, cpus().length) - serverCpu - loadCpu - upstreamCpu),
    latency: b.l.latency,
    serverRssMb: b.s.rss / 2 ** 20,
    ...cycleMs(a.s.peer, b.s.peer),
  };
}

/** The three processes of one peer's run. */
interface Procs {
  readonly upstream: Child;
  readonly server: Child;
  readonly load: Child;
}

interface Connected {
  readonly openMs: number;
  readonly subscribeMs: number;
  readonly failed: number;
  readonly errors: number;
  readonly lastError: string;
}

interface Finish {
  readonly tailLost: number;
  readonly totals: ContinuityTotals;
  readonly disconnects: number;
  readonly lastDisconnect: string;
}

/** Starts the stand-in (at rest) and the peer, then connects and subscribes every client. */
async function setUp(peer: PollingPeerName, cfg: E2eConfig, p: Procs, log: (s: string) => void): Promise<Connected> {
  const layout: SubsLayout = { seed: cfg.seed, clients: cfg.clients, topicsPerClient: cfg.topicsPerClient, symbols: cfg.symbols };
  const up = await p.upstream.request<{ url: string; apiKey: string }>('start', {
    symbols: cfg.symbols,
    seed: cfg.seed,
    changeRatio: cfg.changeRatio,
    periodMs: cfg.periodMs,
    subs: layout,
  });
  const { port } = await p.server.request<{ port: number }>('start', { peer, upstream: up, symbols: cfg.symbols, seed: cfg.seed }, 60_000);
  const target: Target = {
    peer,
    port,
    symbols: cfg.symbols,
    seed: cfg.seed,
    topics: listingTopics(cfg.symbols, cfg.seed),
    stampField: STAMP_FIELD,
    perAddress: cfg.perAddress,
  };
  const conn = await p.load.request<Connected>('connect', { target, layout, concurrency: cfg.concurrency }, 300_000);
  if (conn.failed > 0) log(`  ${peer}: ${conn.failed} clients failed to connect or subscribe`);
  if (conn.errors > 0) log(`  ${peer}: ${conn.errors} error messages (last: ${conn.lastError})`);
  log(`  ${peer}: ${cfg.clients} clients open in ${conn.openMs.toFixed(0)} ms, subscribed in ${conn.subscribeMs.toFixed(0)} ms`);
  return conn;
}

/** Starts the changes, waits out the warm-up, and takes the windows' marks between polls. */
async function measure(cfg: E2eConfig, p: Procs, profileDir: string | undefined): Promise<{ first: Marks; last: Marks; windows: E2eWindow[] }> {
  // The market stood still until every client held its topics: seq baselines are exact. Its
  // changes then come half-way between the peer's polls, so each poll carries one period's.
  await sleep(cfg.periodMs);
  await betweenPolls(p.upstream, cfg.periodMs);
  await p.upstream.request('go');
  await sleep(cfg.warmupMs);
  await betweenPolls(p.upstream, cfg.periodMs);
  if (profileDir) await p.server.request('profileStart');
  const first = await marks(p.server, p.load, p.upstream);
  let last = first;
  const windows: E2eWindow[] = [];
  for (let w = 0; w < cfg.windows; w++) {
    await sleep(cfg.windowMs - cfg.periodMs / 2);
    await betweenPolls(p.upstream, cfg.periodMs);
    const next = await marks(p.server, p.load, p.upstream);
    windows.push(windowOf(last, next));
    last = next;
  }
  if (profileDir) await p.server.request('profileStop', { dir: profileDir });
  return { first, last, windows };
}

/** Stops the changes, lets the peer carry the last ones out, and counts what never arrived. */
async function wrapUp(
  cfg: E2eConfig,
  p: Procs,
): Promise<{ fin: Finish; drainedMs: number; peerStats: Record<string, number>; load: LoadMark; upstream: UpstreamMark }> {
  await p.upstream.request('pause');
  // Two more polls carry the last changes out; then wait for the deliveries to stop.
  await sleep(2.5 * cfg.periodMs);
  const drainedMs = await drain(p.load, cfg.drainMs);
  const { seqs } = await p.server.request<{ seqs: number[] }>('seqs');
  const fin = await p.load.request<Finish>('finish', { seqs });
  const peerStats = await p.server.request<Record<string, number>>('stats');
  return { fin, drainedMs, peerStats, load: await p.load.request<LoadMark>('mark'), upstream: await p.upstream.request<UpstreamMark>('mark') };
}

/**
 * Runs one peer through the end-to-end scenario; with `profileDir`, the
 * server process writes a V8 CPU profile of the measured windows there.
 */
export async function runE2ePeer(peer: PollingPeerName, cfg: E2eConfig, log: (s: string) => void, profileDir?: string): Promise<E2ePeerResult> {
  const p: Procs = {
    upstream: new Child({ name: 'upstream(e2e)', script: 'bench/upstream/main.ts', core: 1 }),
    server: new Child({ name: `server(e2e ${peer})`, script: 'bench/server/e2e.ts', core: 0 }),
    load: new Child({ name: `load(e2e ${peer})`, script: 'bench/load/main.ts', core: 1 }),
  };
  try {
    const conn = await setUp(peer, cfg, p, log);
    const m = await measure(cfg, p, profileDir);
    return summarise(cfg, conn, m, await wrapUp(cfg, p));
  } finally {
    // The stand-in last: a peer still polling it would log each refused call.
    await Promise.all([p.load.close(), p.server.close(20_000)]);
    await p.upstream.close();
  }
}

function summarise(
  cfg: E2eConfig,
  conn: Connected,
  m: { first: Marks; last: Marks; windows: E2eWindow[] },
  end: Awaited<ReturnType<typeof wrapUp>>,
): E2ePeerResult {
  const { windows, first, last } = m;
  const { fin, upstream: u } = end;
  const med = (f: (w: E2eWindow) => number): number => median(windows.map(f));
  const loadCpu = med((w) => w.loadCpu);
  const updates = last.l.received - first.l.received;
  return {
    updatesPerSec: med((w) => w.updatesPerSec),
    offeredPerSec: med((w) => w.offeredPerSec),
    // Over the whole measured span: a cycle's CPU and its deliveries come in one burst a second, so a
    // window edge that splits a burst skews that window's ratio, but only the span's two ends here.
    cpuUsPerUpdate: updates > 0 ? (last.s.cpuUs - first.s.cpuUs) / updates : NaN,
    p50Ms: med((w) => w.latency.p50),
    p99Ms: med((w) => w.latency.p99),
    ...(windows.some((w) => w.cycleMs !== undefined) ? { cycleMs: med((w) => w.cycleMs ?? NaN) } : {}),
    lost: fin.totals.lost + fin.tailLost,
    outOfOrder: fin.totals.outOfOrder,
    disconnects: fin.disconnects,
    ...(fin.disconnects > 0 ? { lastDisconnect: fin.lastDisconnect } : {}),
    unstamped: end.load.unstamped,
    scanCheck: { verifiedFrames: end.load.verified, mismatches: end.load.scanMismatches },
    drainedMs: end.drainedMs,
    serverCpu: med((w) => w.serverCpu),
    loadCpu,
    upstreamCpu: med((w) => w.upstreamCpu),
    otherCpu: med((w) => w.otherCpu),
    loadSaturated: loadCpu >= 0.9,
    connect: { openMs: conn.openMs, subscribeMs: conn.subscribeMs, failed: conn.failed },
    continuity: { ...fin.totals, tailLost: fin.tailLost },
    upstream: {
      steps: u.steps,
      changes: u.changes,
      superseded: u.superseded,
      served: u.served,
      offered: u.offered,
      quoteResponses: u.quoteResponses,
      quoteBytes: u.quoteBytes,
      otherResponses: u.otherResponses,
      skippedSteps: u.skippedSteps,
    },
    peerStats: end.peerStats,
    measurement: { warmupMs: cfg.warmupMs, windows: cfg.windows, windowMs: cfg.windowMs, statistic: 'median' },
    windows,
  };
}
