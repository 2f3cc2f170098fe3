import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { LocalBus } from '../../src/bus/bus.js';
import { silentLogger } from '../../src/log.js';
import { StateJournal } from '../../src/persist/journal.js';
import { decodeLine } from '../../src/persist/lines.js';
import { FILES } from '../../src/persist/load.js';
import type { StatusMsg } from '../../src/protocol/messages.js';
import { StateStore } from '../../src/state/store.js';
import { ROOT, buildCli, startCli, type CliBridge } from './cli.js';
import { TestClient, sleep, until } from './helpers.js';

/**
 * Around the clock, end to end, as a user runs the bridge: the build of
 * `npm start` (dist/cli.js), under a wall clock set with Debian's
 * `faketime`. The cases run the built-in simulator on the KST clock
 * (`SIM_CLOCK=kst`), which answers like the provider at each hour (400
 * outside an endpoint's provision time) on the bridge's own calendar; each
 * checks the state, `opensAt` and the upstream calls by endpoint. Then: a
 * minute of the bridge's time at 20× (one call per feed, none after), a
 * crash (SIGKILL while open on a weekday morning, a restart on a Saturday
 * with the upstream failing), a clean restart, and a damaged state
 * directory. The injected-clock tests in test/poller are the detailed ones.
 */

const CODES = ['005930', '000660'];
const LISTS = 'v2.multiquote.lists';
const BOOK = 'v2.multiquote.orderbook';
const CLOSE = 'v2.stocks.closeprice';
/** The reason of a feed with nothing to fetch at the hour (a book at night). */
const NOTHING = 'market closed; no data to show until the session opens (not provided at this hour)';

let entry = '';
let removeBuild: (() => void) | undefined;
beforeAll(async () => {
  ({ entry, remove: removeBuild } = await buildCli());
}, 240_000);
afterAll(() => removeBuild?.());

/** The UTC wall time faketime is set to for a KST `YYYY-MM-DD HH:MM`. */
function utcOf(kst: string): string {
  return new Date(Date.parse(`${kst.replace(' ', 'T')}:00+09:00`)).toISOString().slice(0, 19).replace('T', ' ');
}

/** Upstream calls by endpoint and outcome, from `/metrics`. */
async function upstreamCalls(b: CliBridge): Promise<Map<string, number>> {
  const text = await (await request(`${b.url}/metrics`)).body.text();
  const out = new Map<string, number>();
  for (const m of text.matchAll(/^krx_upstream_calls_total\{endpoint="([^"]+)",outcome="([^"]+)"\} (\d+)/gm)) {
    out.set(m[2] === 'ok' ? m[1]! : `${m[1]!} ${m[2]!}`, Number(m[3]));
  }
  return out;
}

/** The poller's calls (symbol lists and other lookups left out): `endpoint` or `endpoint outcome` → count. */
async function feedCalls(b: CliBridge): Promise<Record<string, number>> {
  const all = await upstreamCalls(b);
  return Object.fromEntries([...all].filter(([k]) => /multiquote|closeprice|closeindex|index\.index/.test(k)));
}

/** The last `status` a client got for a channel. */
function statusOf(c: TestClient, channel: string): StatusMsg | undefined {
  return c
    .ofType('status')
    .filter((s) => s.channel === channel)
    .at(-1);
}

async function readyClient(b: CliBridge): Promise<TestClient> {
  await until(() => /"msg":"symbol list loaded".*"market":"kosdaq"|"market":"kosdaq".*"msg":"symbol list loaded"/.test(b.output()), 20_000, 'the symbol lists');
  return new TestClient(`${b.url.replace('http', 'ws')}/ws`).ready();
}

interface Case {
  /** KST `YYYY-MM-DD HH:MM`. */
  readonly at: string;
  readonly what: string;
  readonly state: 'closed' | 'live';
  /** KST `YYYY-MM-DD HH:MM` of `opensAt`; null when open. */
  readonly opens: string | null;
  /** Closed: the poller's calls, exactly. Live: the endpoint polled. */
  readonly calls: Record<string, number> | string;
  /**
   * Closed at a close (15:30, 18:00): the calls when the feeds first asked
   * after the close had settled (the bridge started late, on a loaded
   * machine): the fetch made at once is then already the settled one.
   */
  readonly settled?: { readonly at: string; readonly calls: Record<string, number> };
  /** Closed: the book's reason (it has no closing data). */
  readonly book?: string;
  readonly env?: Record<string, string>;
}

const holidays = join(mkdtempSync(join(tmpdir(), 'krx-holidays-')), 'closures.txt');
writeFileSync(holidays, '# closed at short notice\n2026-11-26\n');

const CASES: Case[] = [
  { at: '2026-11-28 12:00', what: 'a Saturday', state: 'closed', opens: '2026-11-30 09:00', calls: { [CLOSE]: 2 }, book: NOTHING },
  { at: '2026-11-24 20:00', what: 'a weekday at 20:00', state: 'closed', opens: '2026-11-25 09:00', calls: { [CLOSE]: 2 }, book: NOTHING },
  { at: '2026-11-24 08:29', what: 'before the pre-market', state: 'closed', opens: '2026-11-24 09:00', calls: { [CLOSE]: 2 }, book: NOTHING },
  { at: '2026-11-24 08:30', what: 'the pre-market', state: 'live', opens: null, calls: LISTS },
  { at: '2026-11-24 09:00', what: 'the open', state: 'live', opens: null, calls: LISTS },
  {
    at: '2026-11-24 15:30',
    what: 'the close, before after-hours',
    state: 'closed',
    opens: '2026-11-25 09:00',
    // At once, and again once the close has settled (the closing auction's result).
    calls: { [LISTS]: 2, [BOOK]: 2 },
    settled: { at: '2026-11-24 15:30:10', calls: { [LISTS]: 1, [BOOK]: 1 } },
    book: 'market closed',
  },
  { at: '2026-11-24 15:40', what: 'after-hours at the close', state: 'live', opens: null, calls: LISTS },
  {
    at: '2026-11-24 18:00',
    what: 'the end of after-hours',
    state: 'closed',
    opens: '2026-11-25 09:00',
    // At once, and again once the day's last match has settled.
    calls: { [CLOSE]: 4 },
    settled: { at: '2026-11-24 18:00:10', calls: { [CLOSE]: 2 } },
    book: NOTHING,
  },
  { at: '2026-12-25 10:00', what: 'Christmas', state: 'closed', opens: '2026-12-28 09:00', calls: { [CLOSE]: 2 }, book: NOTHING },
  { at: '2026-09-25 10:00', what: 'Chuseok', state: 'closed', opens: '2026-09-28 09:00', calls: { [CLOSE]: 2 }, book: NOTHING },
  { at: '2026-12-31 10:00', what: 'the year-end closure', state: 'closed', opens: '2027-01-04 10:00', calls: { [CLOSE]: 2 }, book: NOTHING },
  {
    at: '2027-01-04 09:10',
    what: 'the New Year late open, before its pre-market',
    state: 'closed',
    opens: '2027-01-04 10:00',
    calls: { [CLOSE]: 2 },
    book: NOTHING,
  },
  { at: '2027-01-04 09:40', what: 'the New Year late pre-market', state: 'live', opens: null, calls: LISTS },
  { at: '2026-11-19 09:10', what: 'the exam day, before its pre-market', state: 'closed', opens: '2026-11-19 10:00', calls: { [CLOSE]: 2 }, book: NOTHING },
  { at: '2026-11-19 16:10', what: 'the exam day, still trading', state: 'live', opens: null, calls: LISTS },
  {
    at: '2026-11-26 10:00',
    what: 'a closure in MARKET_HOLIDAYS=@file (bridge and simulator both closed)',
    state: 'closed',
    opens: '2026-11-27 09:00',
    calls: { [CLOSE]: 2 },
    book: NOTHING,
    env: { MARKET_HOLIDAYS: `@${holidays}` },
  },
];

describe('around the clock: `npm start` under a set wall clock', () => {
  it.concurrent.for(CASES)('$at KST, $what: $state', { timeout: 60_000 }, async (c, { expect }) => {
    const b = await startCli({ SIM_CLOCK: 'kst', NAMES_PER_DAY: '0', ...c.env }, { faketime: utcOf(c.at), entry });
    try {
      const client = await readyClient(b);
      // The bridge's clock as the feeds are first asked for.
      const pong = await client.request({ op: 'ping' });
      const asked = pong.type === 'pong' ? pong.ts : 0;
      client.send({ op: 'subscribe', channel: 'quote', market: 'kospi', codes: CODES });
      client.send({ op: 'subscribe', channel: 'book', market: 'kospi', codes: ['005930'] });
      await until(() => statusOf(client, 'quote')?.state === c.state && statusOf(client, 'book')?.state === c.state, 20_000, `${c.state} statuses`);
      const quote = statusOf(client, 'quote')!;
      expect(quote.opensAt).toBe(c.opens === null ? undefined : Date.parse(`${c.opens.replace(' ', 'T')}:00+09:00`));
      if (typeof c.calls === 'string') {
        // Open: polled about once a second.
        const id = c.calls;
        await until(() => client.ofType('patch').length > 0 || client.ofType('snapshot').length >= 3, 10_000, 'data');
        const first = (await feedCalls(b))[id] ?? 0;
        // Two more calls within 2.5 s.
        await until(async () => ((await feedCalls(b))[id] ?? 0) - first >= 2, 2500, 'two more polls within 2.5 s', 100);
      } else {
        await until(() => statusOf(client, 'book')?.reason === c.book, 10_000, `the book to say ${c.book}`);
        if (c.calls[CLOSE] || c.calls[LISTS]) {
          await until(() => CODES.every((code) => client.ofType('snapshot').some((s) => s.topic === `quote.kospi.${code}`)), 10_000, 'the last rows');
        }
        expect(quote.reason).toBe('market closed');
        expect(quote.asOf).toBeGreaterThan(0);
        // The calls of the closed stretch (those of the close come 10 s after it), then nothing more while closed: the
        // same calls a while later (a window, not a wait: a feed polling as if open would call within its 1 s interval).
        // Asked for within a second of the close settling, either is right.
        const settledAt = c.settled === undefined ? Infinity : Date.parse(`${c.settled.at.replace(' ', 'T')}+09:00`);
        const allowed = asked >= settledAt + 1000 ? [c.settled!.calls] : asked >= settledAt - 1000 ? [c.calls, c.settled!.calls] : [c.calls];
        let seen: Record<string, number> = {};
        try {
          const calls = async (): Promise<boolean> => {
            seen = await feedCalls(b);
            return allowed.some((a) => isDeepStrictEqual(seen, a));
          };
          await until(calls, 20_000, 'the calls', 200);
        } catch {
          throw new Error(
            `the calls were ${JSON.stringify(seen)}, not ${allowed.map((a) => JSON.stringify(a)).join(' or ')} (asked at ${new Date(asked).toISOString()})`,
          );
        }
        await sleep(1500);
        expect(await feedCalls(b)).toEqual(seen);
      }
      client.close();
    } finally {
      b.kill();
    }
  });

  it('a closed-market subscribe with nothing saved makes one call per feed, and none in the following minute (the clock at 20×)', async () => {
    // Saturday 20:00 KST; the bridge's clock and timers run 20 times faster than real time.
    // Timeouts and the ping interval are in the bridge's time: long enough that 20× does not make a loaded machine look dead.
    const b = await startCli(
      { SIM_CLOCK: 'kst', NAMES_PER_DAY: '0', UPSTREAM_TIMEOUT_MS: '60000', HEARTBEAT_MS: '600000' },
      { faketime: utcOf('2026-11-28 20:00'), speed: 20, entry },
    );
    try {
      const c = await readyClient(b);
      c.send({ op: 'subscribe', channel: 'quote', market: 'kospi', codes: ['005930'] });
      c.send({ op: 'subscribe', channel: 'quote', market: 'kosdaq', codes: ['247540'] });
      c.send({ op: 'subscribe', channel: 'book', market: 'kospi', codes: ['005930'] });
      await until(() => c.ofType('snapshot').length >= 2 && statusOf(c, 'book')?.reason === NOTHING, 20_000, 'the last rows');
      const once = { 'v2.stocks.closeprice': 1, 'v3.closed.closeprice': 1 };
      expect(await feedCalls(b)).toEqual(once);
      const asOf = Math.max(...c.ofType('status').map((s) => s.asOf ?? 0));
      const serverNow = async () => {
        const pong = await c.request({ op: 'ping' });
        return pong.type === 'pong' ? pong.ts : 0;
      };
      // A minute of the bridge's time (a closed feed looks at the clock every 30 s of it).
      const t0 = Date.now();
      await until(async () => (await serverNow()) >= asOf + 61_000, 40_000, 'a minute of the bridge’s time', 200);
      expect(Date.now() - t0).toBeLessThan(30_000); // it did run fast
      expect(await feedCalls(b)).toEqual(once);
      expect(c.ofType('status').every((s) => s.state === 'closed')).toBe(true);
      c.close();
    } finally {
      b.kill();
    }
  }, 90_000);
});

/** A simulator process of its own (for its fault switches), market open at every hour. */
async function startSim(key: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/sim/cli.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', SIM_PORT: '0', SIM_API_KEY: key, SIM_CLOCK: 'open', SIM_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  await until(() => /"url":"http/.test(out), 60_000, 'the simulator to listen');
  return { child, url: /"url":"(http:\/\/[^"]+)"/.exec(out)![1]! };
}

const control = async (sim: string, method: 'POST' | 'PUT', path: string, body?: unknown) => {
  const r = await request(`${sim}/_sim/${path}`, { method, ...(body ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } } : {}) });
  await r.body.dump();
  expect(r.statusCode).toBeLessThan(300);
};

/** Calls the simulator answered, by endpoint. */
const simCalls = async (sim: string): Promise<Record<string, number>> =>
  ((await (await request(`${sim}/_sim/stats`)).body.json()) as { byEndpoint: Record<string, number> }).byEndpoint;

describe('state across a crash and a restart, `npm start` under a set wall clock', () => {
  const KEY = 'around-the-clock-key-7c1e';
  const CRASH_CODES = ['005930', '000660', '035420'];
  let sim: { child: ChildProcess; url: string };
  let bridge: CliBridge | undefined;
  beforeAll(async () => {
    sim = await startSim(KEY);
  }, 90_000);
  afterAll(() => {
    bridge?.kill();
    sim?.child.kill('SIGKILL');
  });

  it('killed (SIGKILL) while the market is open on a weekday morning, restarted on a Saturday with the upstream failing: a new client gets the rows last seen, with their original ts, and the close is asked for once', async () => {
    const env = { UPSTREAM_URL: sim.url, UPSTREAM_API_KEY: KEY, DATA_DIR: mkdtempSync(join(tmpdir(), 'krx-clock-')), STATE: 'on' };
    // Tuesday 10:00 KST on the real (set) clock: the market is open, the feed live.
    bridge = await startCli(env, { faketime: utcOf('2026-11-24 10:00'), entry });
    const live = await new TestClient(`${bridge.url.replace('http', 'ws')}/ws`).ready();
    live.send({ op: 'subscribe', channel: 'quote', market: 'kospi', codes: CRASH_CODES });
    await until(() => live.ofType('patch').length >= 3, 20_000, 'patches');
    expect(statusOf(live, 'quote')?.state).toBe('live');
    // The market stops moving: two polls since (the second asked after the first's answer), and the rows the client holds are on disk. Then the crash.
    const callsAtPause = (await simCalls(sim.url))[LISTS] ?? 0;
    await control(sim.url, 'POST', 'pause');
    await until(async () => ((await simCalls(sim.url))[LISTS] ?? 0) >= callsAtPause + 2, 10_000, 'two polls of the paused market', 100);
    await until(() => onDisk(join(env.DATA_DIR, 'state'), live, CRASH_CODES), 10_000, 'the last rows on disk', 100);
    const seen = new Map(CRASH_CODES.map((c) => [`quote.kospi.${c}`, { row: live.rows.get(`quote.kospi.${c}`), ts: lastTs(live, `quote.kospi.${c}`) }]));
    expect(live.problems).toEqual([]);
    bridge.child.kill('SIGKILL');
    await until(() => bridge!.exited() !== undefined, 10_000, 'the kill');
    live.close();

    // Saturday 2026-11-28 12:00 KST; the upstream now fails every call.
    await control(sim.url, 'PUT', 'faults', { error: { rate: 1, status: [500] } });
    const before = await simCalls(sim.url);
    bridge = await startCli({ ...env, LOG_LEVEL: 'info' }, { faketime: utcOf('2026-11-28 12:00'), entry });
    expect(bridge.output()).toMatch(/"msg":"state loaded"/);
    const fresh = await new TestClient(`${bridge.url.replace('http', 'ws')}/ws`).ready();
    expect(fresh.epoch).not.toBe(live.epoch); // a crash: no resume under the old epoch
    fresh.send({ op: 'subscribe', channel: 'quote', market: 'kospi', codes: CRASH_CODES });
    await until(() => fresh.ofType('snapshot').length >= CRASH_CODES.length && statusOf(fresh, 'quote')?.state === 'closed', 10_000, 'snapshots and status');
    for (const [topic, want] of seen) {
      const snap = fresh.ofType('snapshot').find((m) => m.topic === topic)!;
      expect(snap.data, topic).toEqual(want.row);
      expect(snap.ts, topic).toBe(want.ts);
    }
    const status = statusOf(fresh, 'quote')!;
    expect(status).toMatchObject({ state: 'closed', reason: 'market closed', opensAt: Date.parse('2026-11-30T09:00:00+09:00') });
    expect(status.asOf).toBeGreaterThanOrEqual(Math.max(...[...seen.values()].map((s) => s.ts ?? 0)));
    // The rows held are Tuesday morning's, not the last close: each is asked for once from the closing data
    // (10 s after the restart's first closed check at most; the upstream fails, so the rows stay), then nothing more.
    await until(async () => ((await simCalls(sim.url))[CLOSE] ?? 0) - (before[CLOSE] ?? 0) >= CRASH_CODES.length, 20_000, 'the closing data asked for', 200);
    await sleep(1500);
    const after = await simCalls(sim.url);
    // A window, not a wait: a feed that fetched again would call within its 1 s interval.
    await sleep(1500);
    const later = await simCalls(sim.url);
    for (const id of [LISTS, 'v2.multiquote.price']) expect(later[id] ?? 0, id).toBe(before[id] ?? 0);
    expect(later[CLOSE]).toBe(after[CLOSE]);
    expect(statusOf(fresh, 'quote')).toMatchObject({ state: 'closed', reason: 'market closed' });
    for (const [topic, want] of seen) expect(fresh.rows.get(topic), topic).toEqual(want.row);
    fresh.close();
  }, 120_000);

  it('a clean stop keeps the epoch: a client resumes across the restart and misses nothing', async () => {
    bridge?.kill();
    await control(sim.url, 'PUT', 'faults', { error: null });
    await control(sim.url, 'POST', 'resume');
    const env = { UPSTREAM_URL: sim.url, UPSTREAM_API_KEY: KEY, DATA_DIR: mkdtempSync(join(tmpdir(), 'krx-clock-')), STATE: 'on' };
    // A weekday at 20:00 KST: the last close, fetched once per code.
    bridge = await startCli(env, { faketime: utcOf('2026-11-24 20:00'), entry });
    const c = await new TestClient(`${bridge.url.replace('http', 'ws')}/ws`).ready();
    c.send({ op: 'subscribe', channel: 'quote', market: 'kospi', codes: CRASH_CODES });
    await until(() => c.ofType('snapshot').length >= CRASH_CODES.length && statusOf(c, 'quote')?.state === 'closed', 10_000, 'snapshots and status');
    expect(statusOf(c, 'quote')).toMatchObject({ state: 'closed', reason: 'market closed', opensAt: Date.parse('2026-11-25T09:00:00+09:00') });
    expect(c.ofType('patch')).toEqual([]);
    bridge.child.kill('SIGTERM');
    await until(() => bridge!.exited() !== undefined, 20_000, 'the stop');
    expect(bridge.exited()!.code).toBe(0);
    bridge = await startCli(env, { faketime: utcOf('2026-11-24 20:05'), entry });
    const again = await new TestClient(`${bridge.url.replace('http', 'ws')}/ws`).ready();
    expect(again.epoch).toBe(c.epoch);
    const since = Object.fromEntries(CRASH_CODES.map((code) => [`quote.kospi.${code}`, c.seqs.get(`quote.kospi.${code}`)!]));
    again.send({ op: 'subscribe', channel: 'quote', market: 'kospi', codes: CRASH_CODES, epoch: c.epoch, since });
    await until(() => again.ofType('subscribed').length > 0 && again.ofType('status').length > 0, 10_000, 'resume');
    expect(again.ofType('snapshot')).toEqual([]); // resumed: nothing missed, nothing resent
    c.close();
    again.close();
  }, 120_000);

  it('starts on a damaged state directory: serves, reports the damage in /status and the log, and sets the file aside', async () => {
    bridge?.kill();
    const dataDir = mkdtempSync(join(tmpdir(), 'krx-clock-'));
    const stateDir = join(dataDir, 'state');
    // State as a running bridge writes it, then one byte of the journal changed on disk.
    const store = new StateStore();
    const bus = new LocalBus();
    const journal = new StateJournal({ dir: stateDir, store, logger: silentLogger(), flushMs: 60_000 }, bus);
    await journal.start();
    bus.publish(store.apply('quote', 'kospi', [{ isuSrtCd: '005930', trdPrc: 90_000 }], 1000));
    await journal.flush();
    bus.publish(store.apply('quote', 'kospi', [{ isuSrtCd: '000660', trdPrc: 180_000 }], 2000));
    await journal.flush();
    const path = join(stateDir, FILES.journal);
    writeFileSync(path, readFileSync(path, 'utf8').replace('90000', '90001'));

    bridge = await startCli({ UPSTREAM_URL: sim.url, UPSTREAM_API_KEY: KEY, DATA_DIR: dataDir, STATE: 'on', MARKET_CLOCK: 'always' }, { entry });
    expect(bridge.output()).toMatch(/"msg":"state file damaged"/);
    const status = (await (await request(`${bridge.url}/status`)).body.json()) as { state: { restored: { problems: string[] } } };
    expect(status.state.restored.problems.join('\n')).toMatch(/journal\.ndjson.*checksum mismatch/);
    expect(readdirSync(stateDir).some((f) => f.startsWith(`${FILES.journal}.damaged-`))).toBe(true);
    // It serves: a subscriber gets the live rows.
    const c = await new TestClient(`${bridge.url.replace('http', 'ws')}/ws`).ready();
    c.send({ op: 'subscribe', channel: 'quote', market: 'kospi', codes: CRASH_CODES });
    await until(() => c.ofType('snapshot').length >= CRASH_CODES.length, 10_000, 'snapshots');
    expect(statusOf(c, 'quote')?.state).toBe('live');
    // And it keeps its state: a new journal takes the place of the one set aside.
    await until(() => existsSync(path), 10_000, 'a new journal');
    c.close();
  }, 60_000);
});

/**
 * Whether the state files under `dir` (snapshot, then journal: the last
 * row of a topic wins, and a patch frame that follows its seq) hold each of
 * `codes`' quote rows at the seq the client holds. Read without the loader, which sets damaged files aside: a
 * line being written is only skipped here.
 */
function onDisk(dir: string, c: TestClient, codes: readonly string[]): boolean {
  const seqs = new Map<string, number>();
  for (const file of [FILES.snapshot, FILES.journal]) {
    const path = join(dir, file);
    if (!existsSync(path)) continue;
    for (const line of readFileSync(path, 'utf8').split('\n')) {
      const d = decodeLine(line);
      const r = d.ok ? (d.value as { k?: string; m?: string; c?: string; s?: number; type?: string; topic?: string; seq?: number }) : undefined;
      if (r?.k === 'quote' && r.m === 'kospi' && r.c !== undefined && r.s !== undefined) seqs.set(r.c, r.s);
      // A patch frame counts, as at a start, when it follows the seq held.
      const code = r?.type === 'patch' && r.topic?.startsWith('quote.kospi.') ? r.topic.slice('quote.kospi.'.length) : undefined;
      if (code !== undefined && r!.seq !== undefined && seqs.get(code) === r!.seq - 1) seqs.set(code, r!.seq);
    }
  }
  return codes.every((code) => seqs.get(code) !== undefined && seqs.get(code) === c.seqs.get(`quote.kospi.${code}`));
}

/** The `ts` of the last snapshot or patch a client got for a topic. */
function lastTs(c: TestClient, topic: string): number | undefined {
  const m = c.messages.filter((x) => (x.type === 'patch' || x.type === 'snapshot') && x.topic === topic).at(-1);
  return m && (m.type === 'patch' || m.type === 'snapshot') ? m.ts : undefined;
}
