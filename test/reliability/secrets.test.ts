import { afterAll, describe, expect, it } from 'vitest';
import { createBridge, type Bridge } from '../../src/bridge/bridge.js';
import { defaultConfig, type Config } from '../../src/config/config.js';
import { createLogger } from '../../src/log.js';
import { RESOURCES } from '../../src/protocol/constants.js';
import { Simulator } from '../../src/sim/index.js';
import type { FaultsInput } from '../../src/sim/server/faults.js';
import { TestClient, until } from '../bridge/helpers.js';
import { MemoryLog, statusesOf } from './helpers.js';

/**
 * Key-leak scan: the upstream API key is a distinctive string; every path
 * that could carry it out (WebSocket frames of every op and resource,
 * failing ones included; HTTP bodies and headers of every route; every log
 * line at debug level) is exercised under every upstream fault and
 * recorded, and the key must appear in none of it. Runs with a logger that
 * scrubs the key and with one that does not (the key must never even reach
 * the logger), against the built-in simulator and a configured upstream.
 */

const KEY = 'KRXKEY-leakcheck-4c1d9e7a2b';
const FAULTS: [string, FaultsInput][] = [
  ['unauthorized', { unauthorized: {} }],
  ['5xx', { error: { status: [500, 502, 503] } }],
  ['timeout', { timeout: {} }],
  ['malformed', { malformed: {} }],
  ['reset', { reset: {} }],
  ['drift', { drift: { rename: { trdPrc: 'tradePrice' }, nonNumeric: ['accTrdvol'] } }],
  ['429', { rateLimit: {} }],
];

/** Everything that left the bridge. */
interface Recorded {
  readonly frames: string[];
  readonly http: string[];
  readonly log: MemoryLog;
}

/** Parameters of a `get` that the resource accepts. */
const GET_PARAMS: Partial<Record<string, Record<string, unknown>>> = {
  selectivemaster: { fields: ['isuSrtCd', 'isuKorAbbrv'] },
  history: { from: '20261101', to: '20261120', count: 5 },
  intraday: { interval: 60 },
  shortsell: { to: '20261120' },
  foreignhistory: { from: '20261101', to: '20261120' },
};

async function httpAll(base: string, rec: Recorded, headers: Record<string, string> = {}): Promise<void> {
  const paths = [
    '/',
    '/index.html',
    '/app.js',
    '/status',
    '/metrics',
    '/healthz',
    '/readyz',
    '/symbols?q=%EC%82%BC%EC%84%B1',
    '/symbols?market=nope',
    '/api/v2/market/stocks/kospi/005930/master',
    '/api/v2/market/stocks/kospi/005930/history?trnsmCycleTpCd=D&inqStrtDd=20261101&inqEndDd=20261120',
    '/api/v2/market/stocks/kospi/005930/history?trnsmCycleTpCd=X',
    '/api/v2/market/stocks/kospi/999999/master',
    '/api/v2/no/such/route',
    '/api/v3/market/closed/kosdaq/lists',
  ];
  for (const p of paths) {
    const res = await fetch(base + p, { headers });
    rec.http.push(`${res.status} ${p} ${JSON.stringify([...res.headers])} ${await res.text()}`);
  }
  const post = await fetch(`${base}/status`, { method: 'POST' });
  rec.http.push(`${post.status} POST ${JSON.stringify([...post.headers])} ${await post.text()}`);
}

async function wsAll(c: TestClient): Promise<void> {
  await c.request({ op: 'subscribe', channel: 'quote', market: 'kospi', codes: ['005930', '000660'] });
  await c.request({ op: 'subscribe', channel: 'book', market: 'kosdaq', codes: ['247540'] });
  await c.request({ op: 'subscribe', channel: 'index', market: 'kospi', codes: ['K1'] });
  await c.request({ op: 'subscribe', channel: 'quote', market: 'kospi', codes: ['999999'] });
  for (const resource of RESOURCES) {
    const code = resource === 'index' ? 'K1' : resource === 'lists' ? undefined : resource === 'closenav' ? '069500' : '005930';
    await c.request({ op: 'get', resource, market: 'kospi', ...(code ? { code } : {}), ...(GET_PARAMS[resource] ? { params: GET_PARAMS[resource] } : {}) });
  }
  await c.request({ op: 'get', resource: 'master', market: 'kospi', code: '000000' });
  await c.request({ op: 'get', resource: 'history', market: 'kospi', code: '005930', params: { from: 'x' } });
  c.send({ op: 'resync', topic: 'quote.kospi.005930' });
  await c.request({ op: 'resync', topic: 'quote.kospi.000001' });
  await c.request({ op: 'nope' });
  await c.request({ op: 'ping' });
}

/** The paths that reach the upstream, with a code not looked up before (no cache hit), and the status routes. */
async function underFault(c: TestClient, base: string, code: string, rec: Recorded): Promise<void> {
  await c.request({ op: 'get', resource: 'master', market: 'kospi', code });
  await c.request({ op: 'get', resource: 'history', market: 'kospi', code, params: GET_PARAMS.history });
  await c.request({ op: 'subscribe', channel: 'price', market: 'kospi', codes: [code] });
  for (const p of [`/api/v2/market/stocks/kospi/${code}/master`, `/api/v2/market/stocks/kospi/${code}/price`, '/status', '/metrics']) {
    const res = await fetch(base + p);
    rec.http.push(`${res.status} ${p} ${JSON.stringify([...res.headers])} ${await res.text()}`);
  }
}

/** Runs every path against a bridge and returns what was recorded. */
async function exercise(bridge: Bridge, simOf: () => Simulator, log: MemoryLog): Promise<Recorded> {
  const addr = bridge.address;
  const sim = simOf();
  const rec: Recorded = { frames: [], http: [], log };
  const c = await new TestClient(addr.wsUrl).ready();
  try {
    await until(() => bridge.symbols.loaded('kospi') && bridge.symbols.loaded('kosdaq'), 10_000, 'symbols');
    await wsAll(c);
    await httpAll(addr.url, rec);
    const codes = bridge.symbols
      .list('kospi')
      .slice(100, 100 + FAULTS.length)
      .map((x) => x.code);
    for (const [i, [name, fault]] of FAULTS.entries()) {
      const mark = statusesOf(c, 'quote', 'kospi').length;
      sim.faults.set(fault);
      await until(
        () =>
          statusesOf(c, 'quote', 'kospi')
            .slice(mark)
            .some((s) => s.state !== 'live'),
        8000,
        `${name} status`,
      );
      await underFault(c, addr.url, codes[i]!, rec);
      sim.faults.set({});
      // The 429 spends the day's budget; the others recover.
      if (name !== '429') await until(() => statusesOf(c, 'quote', 'kospi').at(-1)?.state === 'live', 70_000, `live after ${name}`);
    }
    // A round trip: every frame the server sent before it is in.
    await c.request({ op: 'ping' });
  } finally {
    rec.frames.push(...c.frames);
    c.close();
    await bridge.stop();
  }
  return rec;
}

function expectNoKey(rec: Recorded, keys: readonly string[]): void {
  const variants = keys.flatMap((k) => [k, encodeURIComponent(k), Buffer.from(k).toString('base64'), k.slice(0, 16)]);
  for (const v of variants) {
    expect(rec.frames.filter((f) => f.includes(v))).toEqual([]);
    expect(rec.http.filter((h) => h.includes(v))).toEqual([]);
    expect(rec.log.lines.filter((l) => l.includes(v))).toEqual([]);
  }
  // The scan saw real traffic: frames of every kind, errors, log lines about the faults.
  const all = rec.frames.join('\n');
  for (const t of ['"type":"welcome"', '"type":"result"', '"type":"error"', '"code":"upstream_unavailable"', '"state":"stale"', '"state":"error"'])
    expect(all).toContain(t);
  expect(rec.http.some((h) => h.startsWith('502 '))).toBe(true);
  expect(rec.log.lines.length).toBeGreaterThan(100);
  expect(rec.log.text).toMatch(/upstream call failed/);
}

const base: Partial<Config> = {
  STATE: 'off',
  RECORD: 'off',
  NAMES_PER_DAY: 0,
  PORT: 0,
  HOST: '127.0.0.1',
  LOG_LEVEL: 'debug',
  UPSTREAM_TIMEOUT_MS: 300,
  IDLE_GRACE_MS: 1000,
};
const poller = { authRetryMs: 1000, maxBackoffMs: 1000 };

describe('the upstream API key never leaves the bridge', () => {
  const sims: Simulator[] = [];
  afterAll(async () => {
    for (const s of sims) await s.stop();
  });

  it.concurrent(
    'built-in simulator, logger scrubbing the key: in no frame, response or log line',
    async () => {
      const log = new MemoryLog();
      const logger = createLogger({ level: 'debug', secrets: [KEY], destination: log });
      const bridge = await createBridge(defaultConfig(base), { logger, simulator: { apiKey: KEY }, poller });
      const rec = await exercise(bridge, () => bridge.sim!, log);
      expectNoKey(rec, [KEY]);
    },
    90_000,
  );

  it.concurrent(
    'built-in simulator, logger WITHOUT scrubbing: the key never reaches the logger',
    async () => {
      const log = new MemoryLog();
      const logger = createLogger({ level: 'debug', destination: log });
      const bridge = await createBridge(defaultConfig(base), { logger, simulator: { apiKey: KEY }, poller });
      const rec = await exercise(bridge, () => bridge.sim!, log);
      expectNoKey(rec, [KEY]);
    },
    90_000,
  );

  it.concurrent(
    'configured upstream (UPSTREAM_URL, UPSTREAM_API_KEY), logger WITHOUT scrubbing',
    async () => {
      const sim = new Simulator({ apiKey: KEY, dailyLimit: 1_000_000_000 });
      sims.push(sim);
      const { url } = await sim.start();
      const log = new MemoryLog();
      const logger = createLogger({ level: 'debug', destination: log });
      const config = defaultConfig({ ...base, UPSTREAM_URL: url, UPSTREAM_API_KEY: KEY, MARKET_CLOCK: 'always' });
      const bridge = await createBridge(config, { logger, poller });
      const rec = await exercise(bridge, () => sim, log);
      expectNoKey(rec, [KEY]);
    },
    90_000,
  );
});
