import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { createBridge } from '../../src/bridge/bridge.js';
import { defaultConfig } from '../../src/config/config.js';
import { CATALOGUE } from '../../src/upstream/catalogue.js';
import type { Feed } from '../../src/poller/feed.js';
import type { Channel, Market } from '../../src/protocol/constants.js';
import { economyMix, minimumPerCycle, type Sub } from '../lib/mix.js';

/**
 * The economy scenario: the whole bridge (built-in simulator, poller,
 * gateway) in this process under a fixed mix of subscriptions from two
 * clients whose codes overlap. Upstream calls are counted by the simulator
 * and compared with the least the mix needs: one call per list feed per
 * cycle, ⌈codes/20⌉ per cycle for `price` and `book` (codes counted once
 * across clients). The simulator's counts and the poller's cycle counts
 * are read together, synchronously, at both ends of the window, so the
 * minimum is taken over the cycles that actually ran: a cycle that lands
 * on the window's edge counts on both sides or neither. The cadence
 * (window ÷ cycles) shows the poller runs no faster than its interval.
 * Then every client leaves, and realtime calls are counted again.
 */

/** Parameters of the economy scenario. */
export interface EconomyConfig {
  /** Length of the measured window with subscribers, ms; a multiple of the poll interval (1 s by default). */
  readonly measureMs: number;
  /** Length of the window counted after every subscriber left (and the idle grace passed), ms. */
  readonly idleMs: number;
}

/** Calls per feed of the mix. */
export interface FeedEconomy {
  readonly feed: string;
  /** Distinct codes subscribed, or `*` for the whole market. */
  readonly codes: number | '*';
  readonly callsPerCycle: number;
  readonly intervalMs: number;
  readonly minimumCallsPerMin: number;
  /** Cycles the feed ran in the measured window. */
  readonly cycles: number;
  /** Upstream calls of the feed's endpoint in the window. */
  readonly calls: number;
  /** Mean time between the starts of the feed's cycles in the window, ms: `intervalMs` when paced right. */
  readonly cadenceMs: number;
}

/** Figures of the economy scenario. */
export interface EconomyResult {
  /** Realtime calls in the window, per minute of the window. */
  readonly callsPerMin: number;
  /** The least the mix needs per minute at the intervals the poller reports. */
  readonly minimumCallsPerMin: number;
  /** `calls` ÷ `minimumCalls`. */
  readonly ratioToMinimum: number;
  /** Realtime calls in the window. */
  readonly calls: number;
  /** The least the cycles that ran in the window needed. */
  readonly minimumCalls: number;
  readonly idleRealtimeCalls: number;
  /** The measured window, ms (a whole number of poll intervals). */
  readonly measureMs: number;
  /** The window as the clock saw it, HTTP round trips included, ms. */
  readonly elapsedMs: number;
  readonly idleMs: number;
  readonly feeds: FeedEconomy[];
  /** Realtime calls per endpoint id in the measured window. */
  readonly byEndpoint: Record<string, number>;
}

const IDLE_GRACE_MS = 1_000;
const REALTIME = new Set(CATALOGUE.filter((e) => e.kind === 'realtime').map((e) => e.id));
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function realtimeCalls(byEndpoint: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(byEndpoint).filter(([id]) => REALTIME.has(id)));
}

function subscribe(url: string, subs: readonly Sub[]): Promise<WebSocket> {
  const ws = new WebSocket(url, { perMessageDeflate: false });
  return new Promise((resolve, reject) => {
    let owed = subs.length;
    ws.on('error', reject);
    ws.on('open', () => subs.forEach((s, i) => ws.send(JSON.stringify({ op: 'subscribe', id: i + 1, ...s }))));
    ws.on('message', (data: Buffer) => {
      const v = JSON.parse(data.toString()) as { type?: string; message?: string } | { type?: string }[];
      for (const m of Array.isArray(v) ? v : [v]) {
        if (m.type === 'error') reject(new Error(`subscribe refused: ${(m as { message?: string }).message}`));
        if (m.type === 'subscribed' && --owed === 0) resolve(ws);
      }
    });
  });
}

/**
 * Runs the economy scenario with a bridge and its built-in simulator in this
 * process. Its state files and recordings go to a fresh directory, removed
 * afterwards: none is read from, or left in, the checkout's `./data`.
 */
export async function runEconomy(cfg: EconomyConfig): Promise<EconomyResult> {
  const dir = mkdtempSync(join(tmpdir(), 'krx-bench-economy-'));
  const bridge = await createBridge(defaultConfig({ PORT: 0, HOST: '127.0.0.1', LOG_LEVEL: 'silent', IDLE_GRACE_MS: IDLE_GRACE_MS, DATA_DIR: dir }));
  const addr = bridge.address;
  const clients: WebSocket[] = [];
  try {
    const sim = bridge.sim;
    const poller = bridge.poller;
    if (sim === undefined || poller === undefined) throw new Error('economy needs the built-in simulator and the poller');
    for (let i = 0; i < 100 && !(bridge.symbols.loaded('kospi') && bridge.symbols.loaded('kosdaq')); i++) await sleep(100);
    const list = (m: Market): string[] => bridge.symbols.list(m).map((s) => s.code);
    const mix = economyMix(list('kospi'), list('kosdaq'));
    for (const subs of mix) clients.push(await subscribe(addr.wsUrl, subs));
    const minimum = [...minimumPerCycle(mix)];
    const feedOf = (feed: string): Feed | undefined => poller.feed(...(feed.split('.') as [Channel, Market]));
    const cyclesNow = (): Map<string, { cycles: number; at: number }> =>
      new Map(minimum.map(([feed]) => [feed, { cycles: feedOf(feed)?.cycles ?? 0, at: feedOf(feed)?.lastCycleAt ?? 0 }]));
    // Let every feed reach its steady cadence before counting.
    await sleep(2_000);
    // Between cycles (no feed mid-cycle, no call in flight), and in one synchronous step: the
    // simulator's counts and the poller's cycles, so every call in the window belongs to a
    // cycle counted in it.
    const between = async (): Promise<void> => {
      for (let i = 0; i < 5_000; i++) {
        if (sim.stats.snapshot().inFlight === 0 && minimum.every(([feed]) => !feedOf(feed)?.busy)) return;
        await sleep(1);
      }
      throw new Error('economy: the feeds never paused between cycles');
    };
    await between();
    sim.stats.reset();
    const before = cyclesNow();
    const t0 = performance.now();
    await sleep(cfg.measureMs);
    await between();
    const busy = realtimeCalls(sim.stats.snapshot().byEndpoint);
    const after = cyclesNow();
    const elapsedMs = performance.now() - t0;
    const intervals = new Map(poller.statuses().map((s) => [`${s.channel}.${s.market}`, s.intervalMs]));
    const feeds: FeedEconomy[] = minimum.map(([feed, m]) => {
      const intervalMs = intervals.get(feed) ?? NaN;
      const a = after.get(feed);
      const b = before.get(feed);
      const cycles = (a?.cycles ?? 0) - (b?.cycles ?? 0);
      const endpoints = new Set(
        feedOf(feed)
          ?.plan()
          .map((c) => c.endpointId),
      );
      return {
        feed,
        codes: m.codes,
        callsPerCycle: m.calls,
        intervalMs,
        minimumCallsPerMin: (m.calls * 60_000) / intervalMs,
        cycles,
        calls: [...endpoints].reduce((a, e) => a + (busy[e] ?? 0), 0),
        // From the last cycle before the window to the last in it: whole periods only.
        cadenceMs: cycles > 0 && a !== undefined && b !== undefined ? (a.at - b.at) / cycles : NaN,
      };
    });
    for (const ws of clients) ws.close();
    // Past the idle grace plus one interval, any feed still polling is a feed that should have stopped.
    await sleep(IDLE_GRACE_MS + Math.max(...feeds.map((f) => f.intervalMs).filter(Number.isFinite), 1_000) + 500);
    sim.stats.reset();
    await sleep(cfg.idleMs);
    const idle = realtimeCalls(sim.stats.snapshot().byEndpoint);
    const calls = Object.values(busy).reduce((a, b) => a + b, 0);
    // The least the cycles that ran could have cost, against what they cost.
    const minimumCalls = feeds.reduce((a, f) => a + f.cycles * f.callsPerCycle, 0);
    return {
      callsPerMin: (calls * 60_000) / elapsedMs,
      minimumCallsPerMin: feeds.reduce((a, f) => a + f.minimumCallsPerMin, 0),
      ratioToMinimum: calls / minimumCalls,
      calls,
      minimumCalls,
      idleRealtimeCalls: Object.values(idle).reduce((a, b) => a + b, 0),
      measureMs: cfg.measureMs,
      elapsedMs,
      idleMs: cfg.idleMs,
      feeds,
      byEndpoint: busy,
    };
  } finally {
    for (const ws of clients) ws.terminate();
    await bridge.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
