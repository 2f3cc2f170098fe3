import type { Channel, Market } from '../../src/protocol/constants.js';
import { Child } from '../lib/child.js';
import { num, table } from '../lib/table.js';
import type { Skipped } from '../report.js';
import type { StalledStart } from '../server/stalled.js';

/**
 * The stalled scenario: what clients that stop reading cost the server.
 * A KRX-sized market (KOSPI and KOSDAQ, quote, ohlc and top each: six
 * feeds, each applied once a second) in a server process of its own; in
 * the load process one normal client and N others, all subscribed to every
 * feed whole, and N others, connected and idle. The server's memory is
 * taken as a baseline (after a full GC); then the N subscribe to every
 * feed whole and never read: once every one is behind (its whole-market
 * snapshot filled its socket's kernel buffers) and has stayed so for a
 * while, the memory is taken again. The difference over N is what one
 * stalled client costs, beyond the kernel's socket buffers (which are not
 * the process's). The normal client's p99 (tick stamp to receipt) is taken
 * over the window before and over the stall. The N then close, and the
 * memory is taken at once: what that gives back is all the process held
 * for them. Last, N fresh clients stall the same way and then read (and
 * discard): the time until the server has none behind is taken.
 */

/** The six feeds, in the order the server applies them. */
export const STALLED_FEEDS: readonly (readonly [Channel, Market])[] = [
  ['quote', 'kospi'],
  ['ohlc', 'kospi'],
  ['top', 'kospi'],
  ['quote', 'kosdaq'],
  ['ohlc', 'kosdaq'],
  ['top', 'kosdaq'],
];

/** Parameters of the stalled scenario. */
export interface StalledConfig {
  readonly stalled: number;
  readonly kospi: number;
  readonly kosdaq: number;
  readonly changeRatio: number;
  readonly seed: number;
  /** Every feed is applied once per this interval, ms (the six spread over it). */
  readonly feedIntervalMs: number;
  /** Reading, before the baseline window, ms. */
  readonly warmupMs: number;
  /** The window before the stall (normal client's baseline p99), ms. */
  readonly baselineMs: number;
  /** Longest wait, once the clients stop reading, for every one of them to be behind (their kernel buffers full), ms. */
  readonly behindWithinMs: number;
  /** Then the time they stay stalled before memory is taken, ms (all within the server's 30 s limit on being behind). */
  readonly holdMs: number;
}

/** Figures of the stalled scenario. */
export interface StalledResult {
  readonly stalled: number;
  readonly symbols: number;
  /** Topics each client receives (every feed whole). */
  readonly topicsPerClient: number;
  /**
   * Server RSS growth over the stall, per stalled client, KB (after full
   * GCs): its anonymous pages (RssAnon) where Linux tells them apart, for
   * the file-backed pages of the binary come and go with the machine's page
   * cache; `rssAllKbPerStalled` counts them too.
   */
  readonly rssKbPerStalled: number;
  /** Growth of the whole RSS, file-backed pages included, per stalled client, KB. */
  readonly rssAllKbPerStalled: number;
  /**
   * Server heap and off-heap (buffers) memory given back when the stalled
   * clients close, per stalled client, KB (after full GCs): all the process
   * held for one, its connection included. Taken seconds apart, so the slow
   * growth of a warming process (about 100 KB/s here) does not count.
   */
  readonly liveKbPerStalled: number;
  /** Largest number of bytes waiting in one connection's socket (beyond its kernel buffer) at the end of the stall, KB. */
  readonly maxQueuedKb: number;
  /** Connections behind at the end of the stall. */
  readonly behind: number;
  /** How long the clients were stalled when memory was taken, ms. */
  readonly stalledMs: number;
  /** Connections closed with 4008 during the stall. */
  readonly slowCloses: number;
  /**
   * The normal client over the stall: latency, patches, fresh snapshots
   * (after its subscribe's: it fell behind), seqs lost or out of order, and
   * its close code if it was closed.
   */
  readonly normal: {
    readonly p99BeforeMs: number;
    readonly p99Ms: number;
    readonly p50Ms: number;
    readonly patches: number;
    readonly snapshots: number;
    readonly lost: number;
    readonly outOfOrder: number;
    readonly closed?: number;
  };
  /** From as many fresh clients stalled the same way reading again until none was behind, ms (undefined: still behind after 30 s). */
  readonly catchUpMs?: number;
  /** The server's memory before and after the stall, and once the stalled clients closed, MB. */
  readonly memoryMb: { readonly before: MemMb; readonly after: MemMb; readonly closed: MemMb };
}

/** Where the stalled scenario's result goes in the results file. */
export interface StalledResults {
  stalled?: StalledResult | Skipped;
}

interface Mem {
  rss: number;
  rssAnon: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
}

/** Memory figures in MB. */
export type MemMb = { readonly [K in keyof Mem]: number };

function mb(m: Mem): MemMb {
  const out: Partial<Record<keyof Mem, number>> = {};
  for (const k of Object.keys(m) as (keyof Mem)[]) out[k] = Math.round((m[k] / 2 ** 20) * 10) / 10;
  return out as MemMb;
}
interface Stats {
  connections: number;
  behind: number;
  maxQueuedBytes: number;
  slowCloses: number;
}
interface Mark {
  patches: number;
  snapshots: number;
  p50Ms: number;
  p99Ms: number;
  lost: number;
  outOfOrder: number;
  closed?: number;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls the server until `pred` holds of its stats; the elapsed ms, or undefined after `timeoutMs`. */
async function until(server: Child, pred: (s: Stats) => boolean, timeoutMs: number): Promise<number | undefined> {
  const t0 = performance.now();
  while (performance.now() - t0 < timeoutMs) {
    if (pred(await server.request<Stats>('stats'))) return performance.now() - t0;
    await sleep(50);
  }
  return undefined;
}

/**
 * `n` fresh clients subscribe to everything without reading until all are
 * behind, then read (and discard); resolves with the ms from their reading
 * until none is behind (undefined: still behind after 30 s). They close.
 */
async function stallAndCatchUp(server: Child, load: Child, n: number): Promise<number | undefined> {
  await load.request('open', { n });
  await load.request('stall');
  await until(server, (s) => s.behind >= n, 30_000);
  await load.request('resume');
  const ms = await until(server, (s) => s.behind === 0, 30_000);
  await load.request('closeStalled');
  await until(server, (s) => s.connections === 1, 10_000);
  return ms;
}

/** Runs the stalled scenario. */
export async function runStalled(cfg: StalledConfig, log: (s: string) => void): Promise<StalledResult> {
  const server = new Child({ name: 'server(stalled)', script: 'bench/server/stalled.ts', core: 0 });
  const load = new Child({ name: 'load(stalled)', script: 'bench/load/stalled.ts', core: 1 });
  try {
    const start: StalledStart = { kospi: cfg.kospi, kosdaq: cfg.kosdaq, seed: cfg.seed, changeRatio: cfg.changeRatio };
    const { port, topics } = await server.request<{ port: number; topics: number }>('start', start);
    await server.request('ticks', { feedIntervalMs: cfg.feedIntervalMs });
    await load.request('connect', { port, topics }, 120_000);
    // One client stalls, catches up and leaves first: the code of those paths is compiled before the baseline, not during the stall.
    await stallAndCatchUp(server, load, 1);
    await load.request('open', { n: cfg.stalled });
    if ((await until(server, (s) => s.connections === cfg.stalled + 1, 30_000)) === undefined) throw new Error('the clients did not connect');
    await sleep(cfg.warmupMs);
    await load.request<Mark>('mark');
    await sleep(cfg.baselineMs);
    const before = await load.request<Mark>('mark');
    const mem0 = await server.request<Mem>('memory');
    // The collection's pause is not the stall's doing: the window starts after it.
    await load.request<Mark>('mark');
    log(`stalled: ${cfg.stalled} clients subscribe to everything and do not read`);
    const t0 = performance.now();
    await load.request('stall');
    await until(server, (s) => s.behind >= cfg.stalled, cfg.behindWithinMs);
    await sleep(cfg.holdMs);
    const during = await load.request<Mark>('mark');
    const mem1 = await server.request<Mem>('memory');
    const stats = await server.request<Stats>('stats');
    const stalledMs = performance.now() - t0;
    // What closing them gives back, read at once: everything the process held for them.
    await load.request('closeStalled');
    await until(server, (s) => s.connections === 1, 10_000);
    const mem2 = await server.request<Mem>('memory');
    // Catching up: as many fresh clients stall the same way, then read.
    const catchUp = await stallAndCatchUp(server, load, cfg.stalled);
    const per = (bytes: number): number => bytes / cfg.stalled / 1024;
    return {
      stalled: cfg.stalled,
      symbols: cfg.kospi + cfg.kosdaq,
      topicsPerClient: topics,
      rssKbPerStalled: per(mem1.rssAnon - mem0.rssAnon),
      rssAllKbPerStalled: per(mem1.rss - mem0.rss),
      liveKbPerStalled: per(mem1.heapUsed + mem1.external - mem2.heapUsed - mem2.external),
      maxQueuedKb: stats.maxQueuedBytes / 1024,
      behind: stats.behind,
      stalledMs,
      slowCloses: stats.slowCloses,
      normal: {
        p99BeforeMs: before.p99Ms,
        p99Ms: during.p99Ms,
        p50Ms: during.p50Ms,
        patches: during.patches,
        snapshots: during.snapshots - before.snapshots,
        lost: during.lost,
        outOfOrder: during.outOfOrder,
        ...(during.closed !== undefined ? { closed: during.closed } : {}),
      },
      ...(catchUp !== undefined ? { catchUpMs: catchUp } : {}),
      memoryMb: { before: mb(mem0), after: mb(mem1), closed: mb(mem2) },
    };
  } finally {
    await Promise.all([load.close(20_000), server.close(20_000)]);
  }
}

/** The stalled scenario's table for the console report. */
export function stalledTable(cfg: StalledConfig, r: StalledResult): string {
  return [
    `stalled: ${r.stalled} clients subscribe and never read (for ${num(r.stalledMs / 1000, 1)} s: until all are behind, and ${cfg.holdMs / 1000} s more) beside one normal client, all subscribed to quote, ohlc and top of both markets whole (${num(r.topicsPerClient)} topics, ${num(r.symbols)} symbols, ${cfg.changeRatio * 100}% change per second); server memory growth after full GC`,
    table(
      ['rss KB/stalled', 'live KB/stalled', 'max queued KB', 'behind', '4008', 'normal p99 ms', 'p99 before ms', 'lost', 'out of order', 'catch-up ms'],
      [
        [
          num(r.rssKbPerStalled, 1),
          num(r.liveKbPerStalled, 1),
          num(r.maxQueuedKb, 1),
          num(r.behind),
          num(r.slowCloses),
          num(r.normal.p99Ms, 1),
          num(r.normal.p99BeforeMs, 1),
          num(r.normal.lost),
          num(r.normal.outOfOrder),
          num(r.catchUpMs),
        ],
      ],
    ),
  ].join('\n');
}
