import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/sim/index.js';
import { MAX_CYCLE_GAP_MS, MIN_CYCLE_GAP_MS, TestClient, cycleGaps, pollCycles, sleep, until, type PollCycle } from '../bridge/helpers.js';
import {
  REDIS_URL,
  SIM_KEY,
  bundleCli,
  clusterEnv,
  dropPrefix,
  leaderOf,
  spawnBridge,
  startSim,
  stopBridge,
  truthAt,
  uniquePrefix,
  type BridgeProc,
} from './harness.js';

/**
 * Three bridge processes joined by Redis against one simulator: the cluster
 * polls the union of its clients' subscriptions exactly as often as one
 * process polls the same subscriptions; every client on every process ends
 * up with the simulator's rows; an on-demand lookup asked everywhere costs
 * one upstream call.
 */

const QUOTE = ['005930', '000660', '035420'];
/** Endpoint of each subscribed feed and its calls per poll cycle. */
const PER_CYCLE: Record<string, number> = { 'v2.multiquote.lists': 1, 'v3.realtime.multiquote.orderbook': 2, 'v2.index.index': 1 };

describe('cluster economy and correctness', () => {
  let sim: Simulator;
  let simUrl: string;
  let cli: { path: string; remove: () => void };
  let book: string[];
  const prefix = uniquePrefix();
  const procs: BridgeProc[] = [];
  const clients: { c: TestClient; quote: string[]; book: string[]; index: boolean }[] = [];

  beforeAll(async () => {
    ({ sim, url: simUrl } = await startSim());
    cli = await bundleCli();
    book = [...(await truthAt(simUrl, 'v3.realtime.multiquote.lists', { marketcode: 'kosdaq' })).keys()].slice(0, 25);
  }, 60_000);
  afterAll(async () => {
    for (const { c } of clients) c.close();
    await Promise.all(procs.map((p) => stopBridge(p)));
    await sim?.stop();
    await dropPrefix(REDIS_URL, prefix);
    cli?.remove();
  }, 30_000);

  async function subscribe(c: TestClient, quote: string[], bookCodes: string[], index: boolean): Promise<void> {
    if (quote.length) await c.request({ op: 'subscribe', channel: 'quote', market: 'kospi', codes: quote });
    if (bookCodes.length) await c.request({ op: 'subscribe', channel: 'book', market: 'kosdaq', codes: bookCodes });
    if (index) await c.request({ op: 'subscribe', channel: 'index', market: 'kospi', codes: ['K1'] });
    clients.push({ c, quote, book: bookCodes, index });
  }

  /** Poll cycles of every feed endpoint begun since `from`. */
  const cyclesSince = (from: number) => Object.keys(PER_CYCLE).map((id) => pollCycles(sim.stats.callTimes(id), from, Infinity));

  /** Waits until every feed endpoint has begun `n` poll cycles since `from`. */
  async function polled(from: number, n: number, what: string): Promise<void> {
    await until(() => cyclesSince(from).every((c) => c.length >= n), 15_000, what);
  }

  /** Each feed endpoint's poll cycles over the next `seconds`. */
  async function measure(seconds: number): Promise<Record<string, PollCycle[]>> {
    const from = Date.now();
    // A measuring window, not a wait: the cluster and one process are compared by the cycles each makes in it.
    await sleep(seconds * 1000);
    const to = Date.now();
    // The calls of a cycle begun before `to` go out within joinMs (250 ms) of each other.
    await sleep(300);
    return Object.fromEntries(Object.keys(PER_CYCLE).map((id) => [id, pollCycles(sim.stats.callTimes(id), from, to)]));
  }

  /**
   * Checks a window of cycles: every cycle makes its feed's calls, and no two
   * come closer than one poller spaces them. Returns whether the window is
   * also complete (no cycle missed); a missed cycle (a transient failure backs
   * off) is reported, and the caller measures again.
   */
  function check(run: string, m: Record<string, PollCycle[]>, logs: () => string): boolean {
    let complete = true;
    for (const [id, perCycle] of Object.entries(PER_CYCLE)) {
      const cycles = m[id]!;
      for (const c of cycles) expect(c.calls, `${run} ${id}: calls of the cycle at ${c.at}`).toBe(perCycle);
      const gaps = cycleGaps(cycles);
      for (const g of gaps) expect(g, `${run} ${id}: gap between cycles`).toBeGreaterThanOrEqual(MIN_CYCLE_GAP_MS);
      if (cycles.length < 5 || gaps.some((g) => g > MAX_CYCLE_GAP_MS)) {
        complete = false;
        console.warn(`${run} ${id}: a cycle was missed`, JSON.stringify(gaps), logs());
      }
    }
    return complete;
  }

  /** The first complete window of two, or the second. */
  async function steady(run: string, logs: () => string): Promise<Record<string, PollCycle[]>> {
    const first = await measure(6);
    return check(run, first, logs) ? first : await measure(6);
  }

  it('polls the union of all processes’ subscriptions exactly as often as one process with the same subscriptions', async () => {
    const single = await spawnBridge(cli.path, 'single', { UPSTREAM_URL: simUrl, UPSTREAM_API_KEY: SIM_KEY, IDLE_GRACE_MS: '500' });
    procs.push(single);
    const s = await new TestClient(single.wsUrl).ready();
    await s.request({ op: 'subscribe', channel: 'quote', market: 'kospi', codes: QUOTE });
    await s.request({ op: 'subscribe', channel: 'book', market: 'kosdaq', codes: book });
    const subscribed = Date.now();
    await s.request({ op: 'subscribe', channel: 'index', market: 'kospi', codes: ['K1'] });
    await polled(subscribed, 2, 'two cycles of every feed');
    const warnings = (ps: BridgeProc[]) => () => ps.flatMap((m) => m.logs.filter((l) => /"level":(40|50)/.test(l)).map((l) => `${m.name} ${l}`)).join('\n');
    const one = await steady('single', warnings([single]));
    s.close();
    await stopBridge(single);

    const symbolCalls = () => ['v2.stocks.lists', 'v3.closed.lists'].map((id) => sim.stats.snapshot().byEndpoint[id] ?? 0);
    const listsBefore = symbolCalls();
    const members = await Promise.all(['a', 'b', 'c'].map((n) => spawnBridge(cli.path, n, clusterEnv(simUrl, REDIS_URL, prefix, { LEASE_MS: '2000' }))));
    procs.push(...members);
    // The symbol lists (KOSPI on v2, KOSDAQ on v3) are loaded once for the whole cluster.
    const loaded = async () => (await Promise.all(members.map((m) => m.status()))).every((st) => Object.values(st.symbols).every((n) => n > 0));
    await until(loaded, 15_000, 'the symbol lists on every member', 100);
    expect(symbolCalls().map((n, i) => n - listsBefore[i]!)).toEqual([1, 1]);
    const [a, b, c] = await Promise.all(members.map((m) => new TestClient(m.wsUrl).ready()));
    // Overlapping subsets whose union is the single process's subscriptions.
    await subscribe(a!, QUOTE.slice(0, 2), book.slice(0, 13), false);
    await subscribe(b!, QUOTE.slice(2), book.slice(13), true);
    await subscribe(c!, QUOTE.slice(0, 1), book.slice(5, 20), true);
    await leaderOf(members);
    await polled(Date.now(), 2, 'two cycles of every feed under the leader');
    const many = await steady('cluster', warnings(members));

    for (const [run, m] of [
      ['single', one],
      ['cluster', many],
    ] as const) {
      const logs = warnings(run === 'single' ? [single] : members);
      expect(check(run, m, logs), `${run}: a cycle was missed in two windows running`).toBe(true);
    }
    // The same number of cycles (give or take the window's edge) as one process polling the same subscriptions.
    for (const id of Object.keys(PER_CYCLE)) expect(Math.abs(many[id]!.length - one[id]!.length), id).toBeLessThanOrEqual(1);
  }, 80_000);

  it('gives every client on every process the simulator’s rows (snapshot plus patches)', async () => {
    expect(clients.length).toBe(3);
    sim.pause();
    try {
      // The leader polls the frozen market (the second cycle since was asked after the first's answer); its changes reach every process.
      await polled(Date.now(), 2, 'two polls of the frozen market');
      const quote = await truthAt(simUrl, 'v2.multiquote.lists', { marketcode: 'kospi' });
      const orderbook = new Map([
        ...(await truthAt(simUrl, 'v3.realtime.multiquote.orderbook', { marketcode: 'kosdaq', isuCd: book.slice(0, 20) })),
        ...(await truthAt(simUrl, 'v3.realtime.multiquote.orderbook', { marketcode: 'kosdaq', isuCd: book.slice(20) })),
      ]);
      const index = await truthAt(simUrl, 'v2.index.index', { marketcode: 'kospi', issuecode: 'K1' });
      let compared = 0;
      for (const { c, quote: q, book: bk, index: ix } of clients) {
        expect(c.problems).toEqual([]);
        expect(c.ofType('patch').length).toBeGreaterThan(0);
        for (const code of q) expect(c.rows.get(`quote.kospi.${code}`), code).toEqual(quote.get(code));
        for (const code of bk) expect(c.rows.get(`book.kosdaq.${code}`), code).toEqual(orderbook.get(code));
        if (ix) expect(c.rows.get('index.kospi.K1')).toEqual(index.get('K1'));
        compared += q.length + bk.length + (ix ? 1 : 0);
      }
      expect(compared).toBe(46);
      // One epoch across the cluster.
      expect(new Set(clients.map(({ c }) => c.epoch)).size).toBe(1);
    } finally {
      sim.resume();
    }
  }, 30_000);

  it('answers an on-demand lookup asked on every process at once with one upstream call', async () => {
    const calls = () => sim.stats.snapshot().byEndpoint['v2.stocks.master'] ?? 0;
    const before = calls();
    const replies = await Promise.all(clients.map(({ c }) => c.request({ op: 'get', resource: 'master', market: 'kospi', code: '000660' })));
    for (const r of replies) expect(r).toMatchObject({ type: 'result', resource: 'master', code: '000660' });
    expect(new Set(replies.map((r) => JSON.stringify((r as { data: unknown }).data))).size).toBe(1);
    expect(calls() - before).toBe(1);
    // Asked on one process, then on the others: they get it from Redis, not the upstream.
    const closes = () => sim.stats.snapshot().byEndpoint['v2.stocks.closeprice'] ?? 0;
    const before2 = closes();
    for (const { c } of clients) {
      const r = await c.request({ op: 'get', resource: 'closeprice', market: 'kospi', code: '005930' });
      expect(r).toMatchObject({ type: 'result', resource: 'closeprice' });
    }
    expect(closes() - before2).toBe(1);
  }, 20_000);

  it('stops polling once the last subscriber anywhere in the cluster has left', async () => {
    const realtime = () => Object.keys(PER_CYCLE).reduce((n, id) => n + (sim.stats.snapshot().byEndpoint[id] ?? 0), 0);
    // Two of three leave: their processes' demand goes, the rest is still polled.
    for (const { c } of clients.slice(0, 2)) c.close();
    // A window, not a wait: past the idle grace (1 s) and a poll interval, a cluster that dropped the feeds would have stopped.
    await sleep(2500);
    const r0 = realtime();
    await until(() => realtime() > r0, 3000, 'the feeds still polled');
    clients[2]!.c.close();
    // After the idle grace (1 s): the upstream quiet for more than a poll interval, and nothing more in a window as long.
    const lastCall = () => Math.max(...Object.keys(PER_CYCLE).map((id) => sim.stats.callTimes(id).at(-1) ?? 0));
    await until(() => Date.now() - lastCall() > 1500, 10_000, 'the polling to stop');
    const r1 = realtime();
    await sleep(1500);
    expect(realtime()).toBe(r1);
  }, 20_000);
});
