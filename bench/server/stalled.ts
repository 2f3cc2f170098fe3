import { readFileSync } from 'node:fs';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { LocalBus } from '../../src/bus/bus.js';
import { Gateway } from '../../src/gateway/gateway.js';
import { Metrics } from '../../src/metrics/metrics.js';
import { Demand } from '../../src/poller/demand.js';
import type { Channel, Market } from '../../src/protocol/constants.js';
import { StateStore } from '../../src/state/store.js';
import type { Row } from '../../src/upstream/normalise.js';
import { fullGc, serve } from '../lib/child.js';
import { SyntheticMarket, tickSize, wallMs } from '../lib/market.js';
import { STALLED_FEEDS } from '../scenarios/stalled.js';
import { Ticker } from './ticker.js';

/**
 * The server process of the stalled scenario (bench/scenarios/stalled.ts):
 * the bridge's StateStore, LocalBus and Gateway with its defaults, fed a
 * KRX-sized synthetic market on six feeds (quote, ohlc and top of KOSPI and
 * KOSDAQ). Each feed is applied once per interval, one after the other
 * (as a poller's list calls come back), the whole list every time. The
 * store keeps RING_SIZE patches per topic for resume, and the market is
 * stepped that many times over before clients come, so the rings are full
 * from the start: memory that grows later is the clients'.
 */

/** Patches kept per topic (the bridge's default is 32; fewer fill sooner, and take nothing from a stalled client's cost). */
const RING_SIZE = 4;
/** Steps of every feed before clients come: each topic then changed RING_SIZE times or more (at a 30% change ratio, all but about one in 10^5). */
const PREFILL_STEPS = 60;

/** Arguments of `start`. */
export interface StalledStart {
  readonly kospi: number;
  readonly kosdaq: number;
  readonly seed: number;
  readonly changeRatio: number;
}

/** One market's quote rows (the synthetic market) and the ohlc and top rows derived from them. */
class MarketFeeds {
  readonly market: SyntheticMarket;
  private readonly ohlc: Row[] = [];
  private readonly top: Row[] = [];
  /** The quote row each derived row was made from: a row is remade only when its quote changed. */
  private readonly from: Row[] = [];

  constructor(symbols: number, seed: number, changeRatio: number) {
    this.market = new SyntheticMarket({ symbols, seed, changeRatio });
    for (const r of this.market.rows) {
      const p = r.trdPrc as number;
      this.ohlc.push({ isuSrtCd: r.isuSrtCd as string, opnprc: p, hgprc: p, lwprc: p, trdPrc: p, accTrdvol: r.accTrdvol as number });
      this.top.push(topRow(r));
      this.from.push(r);
    }
  }

  /** The rows of a channel as they stand. */
  rows(channel: Channel): Row[] {
    if (channel === 'quote') return this.market.rows;
    const rows = this.market.rows;
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i]!;
      if (this.from[i] === r) continue;
      this.from[i] = r;
      const o = this.ohlc[i]!;
      const p = r.trdPrc as number;
      this.ohlc[i] = { ...o, hgprc: Math.max(o.hgprc as number, p), lwprc: Math.min(o.lwprc as number, p), trdPrc: p, accTrdvol: r.accTrdvol as number };
      this.top[i] = topRow(r);
    }
    return channel === 'ohlc' ? this.ohlc : this.top;
  }
}

function topRow(r: Row): Row {
  const p = r.trdPrc as number;
  const v = r.accTrdvol as number;
  return { isuSrtCd: r.isuSrtCd as string, trdPrc: p, askPrc: p + tickSize(p), bidPrc: p, askQty: (v * 7) % 10_000, bidQty: (v * 13) % 10_000 };
}

const http: HttpServer = createServer();
const store = new StateStore({ ringSize: RING_SIZE });
const bus = new LocalBus();
const metrics = new Metrics();
let gateway: Gateway | undefined;
let ticker: Ticker | undefined;
const markets = new Map<Market, MarketFeeds>();
let next = 0;

function apply(channel: Channel, market: Market, ts: number): void {
  bus.publish(store.apply(channel, market, markets.get(market)!.rows(channel), ts));
}

/** Applies the next feed (a market's quote feed steps that market first). */
function tick(): void {
  const [channel, market] = STALLED_FEEDS[next++ % STALLED_FEEDS.length]!;
  if (channel === 'quote') markets.get(market)!.market.step();
  apply(channel, market, Math.floor(wallMs()));
}

/**
 * The process's resident anonymous memory (`RssAnon` of /proc/self/status),
 * bytes; undefined off Linux. RSS without the file-backed pages of the
 * node binary and libraries, which the kernel drops and reloads as the
 * machine's page cache needs: megabytes that come and go whatever the
 * process does.
 */
function rssAnon(): number | undefined {
  try {
    const m = /^RssAnon:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

function reading(): { rss: number; rssAnon: number; heapUsed: number; heapTotal: number; external: number } {
  const m = process.memoryUsage();
  return { rss: m.rss, rssAnon: rssAnon() ?? m.rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external };
}

/** What the gateway holds for its connections: sessions, those behind, and the bytes waiting in their sockets. */
function held(): { connections: number; behind: number; maxQueuedBytes: number; queuedBytes: number } {
  const sessions = (gateway as unknown as { sessions: Set<{ ws: { bufferedAmount: number } }> }).sessions;
  let max = 0;
  let sum = 0;
  for (const s of sessions) {
    const b = s.ws.bufferedAmount;
    sum += b;
    if (b > max) max = b;
  }
  const g = gateway!.stats();
  return { connections: g.clients, behind: g.behind, maxQueuedBytes: max, queuedBytes: sum };
}

serve(
  {
    async start(a: StalledStart) {
      markets.set('kospi', new MarketFeeds(a.kospi, a.seed, a.changeRatio));
      markets.set('kosdaq', new MarketFeeds(a.kosdaq, a.seed + 1, a.changeRatio));
      const now = Date.now();
      for (let i = 0; i <= PREFILL_STEPS * STALLED_FEEDS.length; i++) tick();
      for (const [c, m] of STALLED_FEEDS) apply(c, m, now);
      gateway = new Gateway({
        server: http,
        store,
        bus,
        demand: new Demand(),
        symbols: { has: () => true },
        onDemand: { get: () => Promise.reject(new Error('no upstream in the stalled benchmark')) },
        metrics,
        // Every load client comes from 127.0.0.1.
        maxConnectionsPerIp: 1_000_000,
      });
      await new Promise<void>((r) => http.listen(0, '127.0.0.1', () => r()));
      return { port: (http.address() as AddressInfo).port, topics: store.size };
    },
    ticks(a: { feedIntervalMs: number }) {
      ticker?.stop();
      ticker = new Ticker(a.feedIntervalMs / STALLED_FEEDS.length, tick);
      ticker.start();
      return true;
    },
    /**
     * Memory after full collections, once the sweeper has given pages and
     * buffers back: collected, 300 ms later collected again (what the ticks
     * allocated meanwhile is not counted) and read at once, until two RSS
     * readings agree within 256 KB (at most 8 times).
     */
    async memory() {
      let last: ReturnType<typeof reading> | undefined;
      for (let i = 0; i < 8; i++) {
        fullGc();
        await new Promise((r) => setTimeout(r, 300));
        fullGc();
        const now = reading();
        if (last !== undefined && Math.abs(now.rssAnon - last.rssAnon) < 256 << 10) return now;
        last = now;
      }
      return last!;
    },
    async stats() {
      const closes = (await metrics.closes.get()).values.find((v) => String(v.labels.code) === '4008')?.value ?? 0;
      return { ...held(), slowCloses: closes, skippedTicks: ticker?.skipped ?? 0 };
    },
  },
  async () => {
    ticker?.stop();
    await gateway?.close(1_000);
    await new Promise<void>((r) => http.close(() => r()));
  },
);
