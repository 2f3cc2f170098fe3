import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBridge, type Bridge } from '../../src/bridge/bridge.js';
import { defaultConfig } from '../../src/config/config.js';
import { silentLogger } from '../../src/log.js';
import type { ServerMsg, StatusMsg } from '../../src/protocol/messages.js';
import { Simulator } from '../../src/sim/index.js';
import type { FaultsInput } from '../../src/sim/server/faults.js';
import { SIM_KEY, TestClient, connect, freeze, startBridge, truth, until, type TestBridge } from '../bridge/helpers.js';
import { ProcessWatch, indexFrom, metric, startProxy, statusesOf, type Proxy } from './helpers.js';

/**
 * Chaos: the simulator's fault switches turned on and off under a running
 * bridge with clients attached. For each fault the affected feed goes
 * stale (with a reason naming the fault), nothing fresh is sent while it
 * is stale (a newcomer gets the old row with its old `ts` and the stale
 * status in the same frame), and it is live again once the fault clears,
 * without a restart. Throughout, every client's seqs and checksums hold,
 * no client is cut, and the process neither exits nor throws.
 */

const FEED = { channel: 'quote', market: 'kospi' } as const;
const ENDPOINT = 'v2.multiquote.lists';
const MATCH = 'multiquote/stocks/kospi/lists';
const TOPIC = 'quote.kospi.005930';
/**
 * The bridge's upstream timeout here: short, so the timeout fault fails
 * polls quickly, but not so short that the untouched feed's own poll times
 * out when the event loop this bridge shares with its in-process simulator
 * stalls on a loaded two-core machine (at 300 ms it did once in a CI run).
 */
const TIMEOUT_MS = 1000;

interface Scenario {
  readonly name: string;
  readonly fault: FaultsInput;
  /** What the stale status's reason must say. */
  readonly reason: RegExp;
  /** `krx_upstream_calls_total` outcome the fault produces, or `dropped` for rows dropped as unusable. */
  readonly counts: string;
}

const SCENARIOS: Scenario[] = [
  { name: 'a burst of 5xx', fault: { error: { match: MATCH, status: [500, 502, 503] } }, reason: /^upstream_error: /, counts: 'upstream_error' },
  {
    name: 'timeouts (no answer within UPSTREAM_TIMEOUT_MS)',
    fault: { timeout: { match: MATCH } },
    reason: new RegExp(`^timeout: .*${TIMEOUT_MS} ms`),
    counts: 'timeout',
  },
  { name: 'connection resets', fault: { reset: { match: MATCH } }, reason: /^network: /, counts: 'network' },
  { name: 'malformed JSON', fault: { malformed: { match: MATCH } }, reason: /^malformed_body: .*not JSON/, counts: 'malformed_body' },
  {
    name: 'schema drift: a renamed field (trdPrc -> tradePrice)',
    fault: { drift: { match: MATCH, rename: { trdPrc: 'tradePrice' } } },
    reason: /schema drift: all \d+ rows unusable/,
    counts: 'dropped',
  },
  { name: 'schema drift: a missing field', fault: { drift: { match: MATCH, drop: ['trdPrc'] } }, reason: /schema drift/, counts: 'dropped' },
  {
    name: 'schema drift: a string where a number belongs',
    fault: { drift: { match: MATCH, nonNumeric: ['trdPrc'] } },
    reason: /schema drift/,
    counts: 'dropped',
  },
];

const isFeedData = (m: ServerMsg): m is Extract<ServerMsg, { type: 'snapshot' | 'patch' }> =>
  (m.type === 'snapshot' || m.type === 'patch') && m.topic.startsWith('quote.kospi.');
const isFeedStatus = (state: string) => (m: ServerMsg) => m.type === 'status' && m.channel === FEED.channel && m.market === FEED.market && m.state === state;

describe('chaos: upstream faults under a running bridge', () => {
  let tb: TestBridge;
  let watch: ProcessWatch;
  let explicit: TestClient;
  let wild: TestClient;
  let other: TestClient;

  beforeAll(async () => {
    watch = new ProcessWatch();
    tb = await startBridge({ UPSTREAM_TIMEOUT_MS: TIMEOUT_MS });
    explicit = await connect(tb);
    await explicit.request({ op: 'subscribe', ...FEED, codes: ['005930', '000660'] });
    wild = await connect(tb);
    await wild.request({ op: 'subscribe', ...FEED, codes: ['*'] });
    // A feed the faults do not touch: it must stay live throughout.
    other = await connect(tb);
    await other.request({ op: 'subscribe', channel: 'price', market: 'kosdaq', codes: ['247540'] });
    await until(() => explicit.rows.size === 2 && wild.rows.size > 1000 && other.rows.size === 1, 10_000, 'first snapshots');
    await until(() => statusesOf(explicit, 'quote', 'kospi').at(-1)?.state === 'live', 5000, 'live');
  }, 30_000);

  afterAll(async () => {
    for (const c of [explicit, wild, other]) c?.close();
    await tb?.bridge.stop();
    watch?.dispose();
  });

  /** Waits for a newcomer's first snapshot of TOPIC and returns it with the frame that carried it. */
  async function newcomer(): Promise<{
    snap: Extract<ServerMsg, { type: 'snapshot' }>;
    frame: string;
    resynced: Extract<ServerMsg, { type: 'snapshot' }>;
    status: StatusMsg;
    subscribedAt: number;
  }> {
    const n = await connect(tb);
    try {
      // The subscribe is asked strictly after anything stamped before it.
      const connectedAt = Date.now();
      await until(() => Date.now() > connectedAt, 1000, 'the clock to move on', 1);
      const subscribedAt = Date.now();
      await n.request({ op: 'subscribe', ...FEED, codes: ['005930'] });
      await until(() => n.ofType('snapshot').length === 1, 5000, 'newcomer snapshot');
      n.send({ op: 'resync', topic: TOPIC });
      await until(() => n.ofType('snapshot').length === 2, 5000, 'resync snapshot');
      expect(n.problems).toEqual([]);
      const frame = n.frames.find((f) => f.includes('"type":"snapshot"'))!;
      return { snap: n.ofType('snapshot')[0]!, frame, resynced: n.ofType('snapshot')[1]!, status: statusesOf(n, 'quote', 'kospi')[0]!, subscribedAt };
    } finally {
      n.close();
    }
  }

  /** Data of the feed a client received between two message indexes. */
  const dataBetween = (c: TestClient, from: number, to: number) => c.messages.slice(from, to).filter(isFeedData);

  /** The measure a fault moves: upstream calls with its outcome, or rows dropped as unusable. */
  const faultCount = (s: Scenario) =>
    s.counts === 'dropped'
      ? metric(tb.bridge.metrics, 'krx_upstream_rows_dropped_total', { endpoint: ENDPOINT })
      : metric(tb.bridge.metrics, 'krx_upstream_calls_total', { endpoint: ENDPOINT, outcome: s.counts });

  for (const s of SCENARIOS) {
    it(`${s.name}: stale with a reason, nothing fresh while stale, live again when cleared`, async () => {
      const before = await faultCount(s);
      const mark = { e: explicit.messages.length, w: wild.messages.length };
      tb.bridge.sim!.faults.set(s.fault);
      try {
        await throughFault(s, mark);
      } finally {
        tb.bridge.sim!.faults.set({});
      }
      expect(await faultCount(s)).toBeGreaterThan(before);
      for (const c of [explicit, wild, other]) {
        expect(c.problems).toEqual([]);
        expect(c.closed).toBeUndefined();
      }
      expect(watch.events).toEqual([]);
    }, 30_000);
  }

  /** The checks of one fault switched on at `mark`: stale, old data only, then live and fresh once cleared. */
  async function throughFault(s: Scenario, mark: { e: number; w: number }): Promise<void> {
    await until(() => indexFrom(explicit, mark.e, isFeedStatus('stale')) >= 0, 8000, 'stale');
    await until(() => indexFrom(wild, mark.w, isFeedStatus('stale')) >= 0, 3000, 'stale (wildcard client)');
    const staleAt = { e: indexFrom(explicit, mark.e, isFeedStatus('stale')), w: indexFrom(wild, mark.w, isFeedStatus('stale')) };
    const stale = explicit.messages[staleAt.e] as StatusMsg;
    expect(stale.reason).toMatch(s.reason);
    expect(stale.reason).not.toContain(SIM_KEY);

    // A newcomer during the fault: the last confirmed row with its old ts, and the stale status in the same frame.
    const entry = tb.bridge.store.entry('quote', 'kospi', '005930')!;
    const { snap, frame, resynced, status: told, subscribedAt } = await newcomer();
    expect(snap.ts).toBe(entry.seenTs);
    expect(snap.ts).toBeLessThanOrEqual(stale.ts);
    expect(frame).toMatch(/"type":"status","market":"kospi","channel":"quote","state":"stale"/);
    // The status says since when the feed is stale, not when it was asked.
    expect(told.ts).toBeGreaterThanOrEqual(stale.ts);
    expect(told.ts).toBeLessThan(subscribedAt);
    expect(resynced.ts).toBe(snap.ts);
    const status = (await (await fetch(`${tb.url}/status`)).json()) as { feeds: { channel: string; market: string; state: string; lastOkTs: number }[] };
    const fs = status.feeds.find((f) => f.channel === 'quote' && f.market === 'kospi')!;
    expect(fs.state).toBe('stale');
    expect(fs.lastOkTs).toBeGreaterThanOrEqual(snap.ts);
    expect(fs.lastOkTs).toBeLessThanOrEqual(stale.ts);

    // The poller fails again while stale (nothing fresh may slip out meanwhile).
    const failed = await faultCount(s);
    await until(async () => (await faultCount(s)) > failed, 10_000, 'another failed poll while stale');
    const cleared = Date.now();
    tb.bridge.sim!.faults.set({});
    await until(() => indexFrom(explicit, staleAt.e, isFeedStatus('live')) >= 0, 15_000, 'live again');
    await until(() => indexFrom(wild, staleAt.w, isFeedStatus('live')) >= 0, 3000, 'live again (wildcard client)');
    const liveAt = { e: indexFrom(explicit, staleAt.e, isFeedStatus('live')), w: indexFrom(wild, staleAt.w, isFeedStatus('live')) };
    // Nothing sent between the stale and the live status is newer than the stale status.
    for (const d of [...dataBetween(explicit, staleAt.e, liveAt.e), ...dataBetween(wild, staleAt.w, liveAt.w)]) {
      expect(d.ts).toBeLessThanOrEqual(stale.ts);
    }
    // Fresh data flows again, stamped after the fault cleared.
    await until(() => dataBetween(wild, liveAt.w, wild.messages.length).some((d) => d.ts >= cleared), 5000, 'fresh data');
  }

  it('kept the untouched feed live, never cut a client, and every client holds exactly the upstream state', async () => {
    expect(statusesOf(other, 'price', 'kosdaq').map((st) => st.state)).toEqual(['live']);
    await freeze(tb);
    try {
      const rows = await truth(tb, ENDPOINT, { marketcode: 'kospi' });
      for (const code of ['005930', '000660']) expect(explicit.rows.get(`quote.kospi.${code}`)).toEqual(rows.get(code));
      let compared = 0;
      for (const [code, row] of rows) {
        expect(wild.rows.get(`quote.kospi.${code}`)).toEqual(row);
        compared++;
      }
      expect(compared).toBeGreaterThan(1000);
      const price = await truth(tb, 'v3.realtime.multiquote.price', { marketcode: 'kosdaq', isuCd: ['247540'] });
      expect(other.rows.get('price.kosdaq.247540')).toEqual(price.get('247540'));
    } finally {
      tb.bridge.sim!.resume();
    }
    for (const c of [explicit, wild, other]) {
      expect(c.problems).toEqual([]);
      expect(c.closed).toBeUndefined();
    }
    expect((await (await fetch(`${tb.url}/healthz`)).text()).trim()).toBe('ok');
    expect(watch.events).toEqual([]);
  }, 20_000);
});

/**
 * Only some rows of a snapshot fail validation: they are dropped and
 * counted, the feed stays live and the rest of the snapshot is delivered.
 * A proxy in front of a standalone simulator makes single rows bad.
 */
describe('chaos: a few bad rows in an otherwise good snapshot', () => {
  let sim: Simulator;
  let proxy: Proxy;
  let bridge: Bridge;
  let c: TestClient;
  const BAD = ['000660', '035420'];

  beforeAll(async () => {
    sim = new Simulator({ apiKey: SIM_KEY, dailyLimit: 1_000_000_000 });
    const { url } = await sim.start();
    proxy = await startProxy(url);
    const config = defaultConfig({
      PORT: 0,
      HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
      STATE: 'off',
      RECORD: 'off',
      NAMES_PER_DAY: 0,
      UPSTREAM_URL: proxy.url,
      UPSTREAM_API_KEY: SIM_KEY,
      MARKET_CLOCK: 'always',
    });
    bridge = await createBridge(config, { logger: silentLogger() });
    const addr = bridge.address;
    c = await new TestClient(addr.wsUrl).ready();
    await c.request({ op: 'subscribe', ...FEED, codes: ['005930', ...BAD] });
    await until(() => c.rows.size === 3, 10_000, 'snapshots');
  }, 30_000);

  afterAll(async () => {
    c?.close();
    await bridge?.stop();
    await proxy?.close();
    await sim?.stop();
  });

  it('drops and counts the bad rows; the good rows keep flowing and the feed stays live', async () => {
    const dropped0 = await metric(bridge.metrics, 'krx_upstream_rows_dropped_total', { endpoint: ENDPOINT });
    const mark = c.messages.length;
    const badTs = BAD.map((code) => bridge.store.entry('quote', 'kospi', code)!.seenTs);
    proxy.mangle = (path, body) => {
      if (!path.includes(MATCH)) return body;
      const b = body as { result?: { isuLists?: Record<string, unknown>[] }; isuLists?: Record<string, unknown>[] };
      for (const r of b.result?.isuLists ?? b.isuLists ?? []) if (BAD.includes(String(r.isuSrtCd))) r.trdPrc = 'n/a';
      return body;
    };
    const start = Date.now();
    const dropped = async () => (await metric(bridge.metrics, 'krx_upstream_rows_dropped_total', { endpoint: ENDPOINT })) - dropped0;
    await until(async () => (await dropped()) >= BAD.length * 2, 10_000, 'two polls with bad rows', 50);
    // Two polls with bad rows, each dropping exactly those rows, while the good row kept changing.
    expect(await dropped()).toBeGreaterThanOrEqual(BAD.length * 2);
    expect((await dropped()) % BAD.length).toBe(0);
    await until(() => c.ofType('patch').some((p) => p.topic === TOPIC && p.ts > start), 5000, 'fresh patches of a good row');
    // The feed never left live; the bad rows were neither patched nor re-stamped.
    expect(c.messages.slice(mark).filter((m) => m.type === 'status' && m.state !== 'live')).toEqual([]);
    expect(statusesOf(c, 'quote', 'kospi').at(-1)?.state).toBe('live');
    for (const m of c.messages.slice(mark)) if (m.type === 'patch') expect(BAD.map((b) => `quote.kospi.${b}`)).not.toContain(m.topic);
    expect(BAD.map((code) => bridge.store.entry('quote', 'kospi', code)!.seenTs)).toEqual(badTs);
    // A newcomer gets the bad rows as last confirmed (old ts), the good one fresh.
    const n = await new TestClient(c.ws.url).ready();
    await n.request({ op: 'subscribe', ...FEED, codes: ['005930', ...BAD] });
    await until(() => n.ofType('snapshot').length === 3, 5000, 'newcomer snapshots');
    for (const s of n.ofType('snapshot')) {
      if (s.topic === TOPIC) expect(s.ts).toBeGreaterThan(start);
      else expect(s.ts).toBeLessThan(start);
    }
    n.close();
    proxy.mangle = undefined;
    await until(() => c.ofType('patch').some((p) => p.topic === `quote.kospi.${BAD[0]}`), 8000, 'the bad row flows again');
    expect(c.problems).toEqual([]);
    expect(c.closed).toBeUndefined();
  }, 30_000);
});
