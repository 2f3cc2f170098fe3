import WebSocket from 'ws';
import { Bridge } from '../../src/bridge.js';
import { defaultConfig } from '../../src/config/config.js';
import { CATALOGUE } from '../../src/upstream/catalogue.js';
import type { Market } from '../../src/protocol/constants.js';
import { economyMix, minimumPerCycle, type Sub } from '../lib/mix.js';

/**
 * The economy scenario: the whole bridge (built-in simulator, poller,
 * gateway) under a fixed mix of subscriptions from two clients whose
 * codes overlap. Upstream calls per minute are read from the simulator's
 * `GET /_sim/stats` and compared with the least the mix needs: one call
 * per list feed per cycle, ⌈codes/20⌉ per cycle for `price` and `book`
 * (codes counted once across clients), at the cadence the poller
 * reports. Then every client leaves, and realtime calls are counted again.
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
}

/** Figures of the economy scenario. */
export interface EconomyResult {
  readonly callsPerMin: number;
  readonly minimumCallsPerMin: number;
  readonly ratioToMinimum: number;
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

async function stats(simUrl: string, reset = false): Promise<Record<string, number>> {
  const res = await fetch(`${simUrl}/_sim/stats${reset ? '/reset' : ''}`, { method: reset ? 'POST' : 'GET' });
  if (!res.ok) throw new Error(`GET /_sim/stats: HTTP ${res.status}`);
  return ((await res.json()) as { byEndpoint: Record<string, number> }).byEndpoint;
}

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

/** Runs the economy scenario with a bridge and its built-in simulator in this process. */
export async function runEconomy(cfg: EconomyConfig): Promise<EconomyResult> {
  const bridge = new Bridge(defaultConfig({ PORT: 0, HOST: '127.0.0.1', LOG_LEVEL: 'silent', IDLE_GRACE_MS: IDLE_GRACE_MS }));
  const addr = await bridge.start();
  const clients: WebSocket[] = [];
  try {
    const simUrl = (bridge.status().upstream as { url: string }).url;
    for (let i = 0; i < 100 && !(bridge.symbols.loaded('kospi') && bridge.symbols.loaded('kosdaq')); i++) await sleep(100);
    const list = (m: Market): string[] => bridge.symbols.list(m).map((s) => s.code);
    const mix = economyMix(list('kospi'), list('kosdaq'));
    for (const subs of mix) clients.push(await subscribe(addr.wsUrl, subs));
    // Let every feed reach its steady cadence before counting.
    await sleep(2_000);
    await stats(simUrl, true);
    const t0 = performance.now();
    await sleep(cfg.measureMs);
    const busy = realtimeCalls(await stats(simUrl));
    const elapsedMs = performance.now() - t0;
    const intervals = new Map((bridge.poller?.statuses() ?? []).map((s) => [`${s.channel}.${s.market}`, s.intervalMs]));
    const feeds: FeedEconomy[] = [...minimumPerCycle(mix)].map(([feed, m]) => {
      const intervalMs = intervals.get(feed) ?? NaN;
      return { feed, codes: m.codes, callsPerCycle: m.calls, intervalMs, minimumCallsPerMin: (m.calls * 60_000) / intervalMs };
    });
    for (const ws of clients) ws.close();
    // Past the idle grace plus one interval, any feed still polling is a feed that should have stopped.
    await sleep(IDLE_GRACE_MS + Math.max(...feeds.map((f) => f.intervalMs).filter(Number.isFinite), 1_000) + 500);
    await stats(simUrl, true);
    await sleep(cfg.idleMs);
    const idle = realtimeCalls(await stats(simUrl));
    // A window of whole poll intervals holds exactly that many cycles of a periodic poller, whatever its phase.
    const calls = Object.values(busy).reduce((a, b) => a + b, 0);
    const callsPerMin = (calls * 60_000) / cfg.measureMs;
    const minimumCallsPerMin = feeds.reduce((a, f) => a + f.minimumCallsPerMin, 0);
    return {
      callsPerMin,
      minimumCallsPerMin,
      ratioToMinimum: callsPerMin / minimumCallsPerMin,
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
  }
}
