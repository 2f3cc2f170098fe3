import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Poller, type PollerOptions } from '../../src/poller/poller.js';
import { Demand } from '../../src/poller/demand.js';
import { marketClock, type MarketClock } from '../../src/market/clock.js';
import { KrxCalendar } from '../../src/market/calendar.js';
import { Sessions } from '../../src/market/session.js';
import { StateStore } from '../../src/state/store.js';
import { LocalBus, type FeedStatus } from '../../src/bus/bus.js';
import { silentLogger } from '../../src/log.js';
import type { Row } from '../../src/upstream/normalise.js';
import { readBody } from '../../src/upstream/body.js';
import { endpoint } from '../../src/upstream/catalogue.js';
import type { ListReader } from '../../src/upstream/listread.js';
import type { ChangeEvent } from '../../src/state/store.js';

const SESSIONS = new Sessions(new KrxCalendar());

class FakeCaller {
  calls: { id: string; params: Record<string, unknown>; at: number }[] = [];
  fail: ((id: string) => Error | undefined) | undefined;
  dropAll = false;
  price = 100;
  async call(id: string, params: Record<string, unknown>) {
    this.calls.push({ id, params, at: Date.now() });
    const err = this.fail?.(id);
    if (err) throw err;
    if (/close(price|index)$/.test(id)) {
      // A closing-data answer: one object, with fields the channel's rows do not all carry.
      const data = { isuSrtCd: params.issuecode as string, trdPrc: this.price, cmpprevddPrc: 1, opnprc: 99, accTrdvol: 10, accTrdval: 1000 };
      return { data, rows: [], dropped: 0, receivedAt: Date.now() };
    }
    const codes = (params.isuCd as string[] | undefined) ?? ['005930', '000660'];
    const rows: Row[] = this.dropAll ? [] : codes.map((c) => ({ isuSrtCd: c, trdPrc: this.price }));
    return { data: { isuLists: rows }, rows, dropped: this.dropAll ? codes.length : 0, receivedAt: Date.now() };
  }
}

const coded = (code: string, extra: Record<string, unknown> = {}) => Object.assign(new Error(code), { code, ...extra });

describe('Poller', () => {
  let caller: FakeCaller;
  let demand: Demand;
  let bus: LocalBus;
  let statuses: FeedStatus[];
  let budget: { remaining: number | null; resetAt: number | null; exhaustedUntil: number; isExhausted(now: number): boolean };
  let poller: Poller;
  const make = (clock: MarketClock = marketClock('always', SESSIONS), store = new StateStore(), extra: Partial<PollerOptions> = {}) => {
    poller = new Poller({ caller, budget, store, bus, demand, clock, logger: silentLogger(), idleGraceMs: 3000, random: () => 0.5, ...extra });
    poller.start();
    return poller;
  };

  beforeEach(() => {
    vi.useFakeTimers({ now: Date.parse('2026-11-20T10:00:00+09:00') });
    caller = new FakeCaller();
    demand = new Demand();
    bus = new LocalBus();
    statuses = [];
    bus.subscribe('status', (s) => statuses.push(s));
    budget = {
      remaining: null,
      resetAt: null,
      exhaustedUntil: 0,
      isExhausted(now) {
        return now < this.exhaustedUntil;
      },
    };
  });
  afterEach(() => {
    poller?.stop();
    vi.useRealTimers();
  });

  it('reads the list bodies of each call with a reader of its own, and publishes what the plain way would', async () => {
    const served: { id: string; key: string; reader: ListReader | undefined; body: Buffer; ts: number; delta: boolean }[] = [];
    let tick = 0;
    const bodyCaller = {
      async call(id: string, params: Record<string, unknown>, opts?: { list?: ListReader }) {
        const codes = (params.isuCd as string[] | undefined) ?? ['005930', '000660', '035420'];
        // Every other cycle one code's price moves; the rest of the body stays byte for byte the same.
        const rows = codes.map((c, i) => ({ isuSrtCd: c, trdPrc: 100 + i + (i === 1 ? Math.floor(tick / 2) : 0), accTrdvol: 5 }));
        const key = id === 'v2.multiquote.price' ? 'isulist' : 'isuLists';
        const body = Buffer.from(JSON.stringify({ trdDd: '20240603', [key]: rows }));
        tick++;
        const r = readBody(endpoint(id), body, opts?.list);
        if (!r.ok) throw new Error(r.reason);
        const ts = Date.now();
        served.push({ id, key: `${id} ${JSON.stringify(params)}`, reader: opts?.list, body, ts, delta: r.delta !== undefined });
        return { data: r.value.data, rows: r.value.rows, dropped: r.value.dropped, receivedAt: ts, ...(r.delta ? { delta: r.delta } : {}) };
      },
    };
    const published: ChangeEvent[] = [];
    bus.subscribe('batch', (b) => published.push(...b.events));
    const store = new StateStore({ epoch: 'e' });
    const withDelta: boolean[] = [];
    const apply = store.apply.bind(store);
    store.apply = (...args: Parameters<StateStore['apply']>) => {
      withDelta.push(args[5] !== undefined);
      return apply(...args);
    };
    poller = new Poller({ caller: bodyCaller, budget, store, bus, demand, clock: marketClock('always', SESSIONS), logger: silentLogger(), random: () => 0.5 });
    poller.start();
    demand.add('quote', 'kospi', '005930');
    demand.add('price', 'kospi', '005930');
    demand.add('price', 'kospi', '000660');
    await vi.advanceTimersByTimeAsync(6_050);
    const keys = [...new Set(served.map((s) => s.key))];
    expect(keys).toHaveLength(2);
    for (const k of keys) {
      const readers = new Set(served.filter((s) => s.key === k).map((s) => s.reader));
      expect(readers.size).toBe(1);
      expect([...readers][0]).toBeDefined();
    }
    expect(served.filter((s) => s.delta).length).toBe(served.length);
    expect(withDelta).toStrictEqual(served.map(() => true));
    // The plain way over the same bodies, in the same order.
    const plain = new StateStore({ epoch: 'e' });
    const want: ChangeEvent[] = [];
    for (const s of served) {
      const r = readBody(endpoint(s.id), s.body);
      if (!r.ok) throw new Error(r.reason);
      want.push(...plain.apply(s.id === 'v2.multiquote.price' ? 'price' : 'quote', 'kospi', r.value.rows, s.ts).events);
    }
    const seen = (e: ChangeEvent) => [e.topic, e.seq, e.kind, e.frame, e.crc];
    expect(published.map(seen)).toEqual(want.map(seen));
    expect(published.filter((e) => e.kind === 'patch').length).toBeGreaterThan(3);
  });

  it('polls both markets on one grid and publishes the changes of each round together; a failed cycle is not waited for', async () => {
    const t0 = Date.now();
    const delayed = {
      calls: [] as { market: string; at: number }[],
      failKosdaq: false,
      price: 100,
      async call(id: string) {
        const market = id === 'v2.multiquote.lists' ? 'kospi' : 'kosdaq';
        this.calls.push({ market, at: Date.now() - t0 });
        // KOSPI answers after 5 ms, KOSDAQ after 20.
        await new Promise((r) => setTimeout(r, market === 'kospi' ? 5 : 20));
        if (market === 'kosdaq' && this.failKosdaq) throw coded('upstream_unavailable');
        const rows: Row[] = [{ isuSrtCd: market === 'kospi' ? '005930' : '035720', trdPrc: this.price++ }];
        return { data: { isuLists: rows }, rows, dropped: 0, receivedAt: Date.now() };
      },
    };
    const log: string[] = [];
    bus.subscribe('batch', (b) => log.push(`${b.market}@${Date.now() - t0}`));
    bus.subscribe('settled', () => log.push('settled'));
    poller = new Poller({
      caller: delayed,
      budget,
      store: new StateStore(),
      bus,
      demand,
      clock: marketClock('always', SESSIONS),
      logger: silentLogger(),
      random: () => 0.5,
    });
    poller.start();
    demand.add('quote', 'kospi', '005930');
    await vi.advanceTimersByTimeAsync(300);
    // KOSDAQ's first cycle runs at once, off the grid; its second is on it.
    demand.add('quote', 'kosdaq', '035720');
    await vi.advanceTimersByTimeAsync(3_800);
    const at = (m: string) => delayed.calls.filter((c) => c.market === m).map((c) => c.at);
    expect(at('kospi')).toEqual([0, 1000, 2000, 3000, 4000]);
    expect(at('kosdaq')).toEqual([300, 2000, 3000, 4000]);
    expect(log).toEqual([
      'kospi@5',
      'settled',
      'kosdaq@320',
      'settled',
      'kospi@1005',
      'settled',
      // From here on, one round a second: KOSPI's changes wait for KOSDAQ's, and both go out in one publish.
      'kospi@2020',
      'kosdaq@2020',
      'settled',
      'kospi@3020',
      'kosdaq@3020',
      'settled',
      'kospi@4020',
      'kosdaq@4020',
      'settled',
    ]);
    log.length = 0;
    delayed.failKosdaq = true;
    await vi.advanceTimersByTimeAsync(1_000);
    // KOSDAQ's call failed at 5020: KOSPI's changes went out then, not at the end of the hold.
    expect(log).toEqual(['kospi@5020', 'settled']);
  });

  it('makes no call while nobody subscribes', async () => {
    make();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(caller.calls).toEqual([]);
  });

  it('polls a list channel once per second while subscribed, and stops after the idle grace', async () => {
    make();
    demand.add('quote', 'kospi', '005930');
    await vi.advanceTimersByTimeAsync(10_050);
    expect(caller.calls.length).toBe(11);
    expect(new Set(caller.calls.map((c) => c.id))).toEqual(new Set(['v2.multiquote.lists']));
    demand.remove('quote', 'kospi', '005930');
    await vi.advanceTimersByTimeAsync(3_000);
    const n = caller.calls.length;
    await vi.advanceTimersByTimeAsync(20_000);
    expect(caller.calls.length).toBe(n);
    expect(statuses.at(-1)).toMatchObject({ channel: 'quote', state: 'idle' });
  });

  it('book for 45 codes makes exactly 3 calls per cycle', async () => {
    make();
    for (let i = 0; i < 45; i++) demand.add('book', 'kosdaq', String(200000 + i));
    await vi.advanceTimersByTimeAsync(4_950);
    expect(caller.calls.length).toBe(15);
    expect(caller.calls.every((c) => c.id === 'v3.realtime.multiquote.orderbook')).toBe(true);
    expect(caller.calls.slice(0, 3).map((c) => (c.params.isuCd as string[]).length)).toEqual([20, 20, 5]);
  });

  it('after a 429 it makes no call until the reset, then resumes', async () => {
    make();
    const resetAt = Date.now() + 30_000;
    caller.fail = () => coded('rate_limited', { resetAt });
    demand.add('quote', 'kospi', '005930');
    await vi.advanceTimersByTimeAsync(100);
    expect(caller.calls.length).toBe(1);
    expect(statuses.at(-1)).toMatchObject({ state: 'rate_limited' });
    caller.fail = undefined;
    await vi.advanceTimersByTimeAsync(29_000);
    expect(caller.calls.length).toBe(1);
    await vi.advanceTimersByTimeAsync(6_000);
    expect(caller.calls.length).toBeGreaterThan(1);
    expect(statuses.at(-1)).toMatchObject({ state: 'live' });
  });

  it('a feed whose budget is spent says closed, with opensAt, once the market closes, and calls nothing until the reset', async () => {
    // Friday 15:29:30 KST; the budget resets at 09:00 KST on Saturday.
    vi.setSystemTime(Date.parse('2026-11-20T15:29:30+09:00'));
    const resetAt = Date.parse('2026-11-21T09:00:00+09:00');
    const spent = () => {
      budget.exhaustedUntil = resetAt;
      budget.resetAt = resetAt;
      return coded('rate_limited', { resetAt });
    };
    caller.fail = spent;
    make(marketClock('kst', SESSIONS));
    demand.add('quote', 'kospi', '005930');
    await vi.advanceTimersByTimeAsync(1_000);
    expect(statuses.at(-1)).toMatchObject({ state: 'rate_limited' });
    await vi.advanceTimersByTimeAsync(60_000);
    expect(statuses.at(-1)).toMatchObject({
      state: 'closed',
      reason: 'market closed; no data to show until the session opens',
      opensAt: Date.parse('2026-11-23T09:00:00+09:00'),
    });
    await vi.advanceTimersByTimeAsync(3 * 3600_000);
    expect(caller.calls.length).toBe(1);
  });

  it('an exhausted budget blocks calls without trying', async () => {
    budget.exhaustedUntil = Date.now() + 20_000;
    budget.resetAt = budget.exhaustedUntil;
    make();
    demand.add('quote', 'kospi', '005930');
    await vi.advanceTimersByTimeAsync(15_000);
    expect(caller.calls.length).toBe(0);
    expect(statuses.at(-1)).toMatchObject({ state: 'rate_limited' });
  });

  it('5xx bursts mark the feed stale with backoff, then live again', async () => {
    make();
    caller.fail = () => coded('upstream_error');
    demand.add('quote', 'kospi', '005930');
    await vi.advanceTimersByTimeAsync(10_000);
    const failing = caller.calls.length;
    expect(failing).toBeGreaterThan(1);
    expect(failing).toBeLessThan(8);
    expect(statuses.at(-1)).toMatchObject({ state: 'stale' });
    caller.fail = undefined;
    await vi.advanceTimersByTimeAsync(40_000);
    expect(statuses.at(-1)).toMatchObject({ state: 'live', intervalMs: 1000 });
  });

  it('401 is an error state retried slowly', async () => {
    make();
    caller.fail = () => coded('unauthorized');
    demand.add('quote', 'kospi', '005930');
    await vi.advanceTimersByTimeAsync(59_000);
    expect(caller.calls.length).toBe(1);
    expect(statuses.at(-1)).toMatchObject({ state: 'error' });
    await vi.advanceTimersByTimeAsync(2_000);
    expect(caller.calls.length).toBe(2);
  });

  it('a response whose every row is unusable is schema drift: stale', async () => {
    make();
    caller.dropAll = true;
    demand.add('quote', 'kospi', '005930');
    await vi.advanceTimersByTimeAsync(100);
    expect(statuses.at(-1)).toMatchObject({ state: 'stale' });
    expect(statuses.at(-1)!.reason).toMatch(/schema drift/);
  });

  it('while the market is closed, fetches the last state once, says closed, and makes no call after', async () => {
    // 15:35 on a Tuesday: closed between the close and after-hours; the 1-second list still serves the day's last state.
    vi.setSystemTime(Date.parse('2026-11-24T15:35:00+09:00'));
    const store = new StateStore();
    make(marketClock('kst', SESSIONS), store);
    demand.add('quote', 'kospi', '005930');
    await vi.advanceTimersByTimeAsync(60_000);
    expect(caller.calls.map((c) => c.id)).toEqual(['v2.multiquote.lists']);
    expect(store.entry('quote', 'kospi', '005930')).toBeDefined();
    expect(statuses.map((st) => st.state)).toEqual(['closed']);
    expect(statuses.at(-1)).toMatchObject({ state: 'closed', reason: 'market closed', opensAt: Date.parse('2026-11-25T09:00:00+09:00') });
    expect(statuses.at(-1)!.asOf).toBe(caller.calls[0]!.at);
    // 000660 came with the first answer: nothing to fetch. 035420 did not: fetched once, and not again.
    demand.add('quote', 'kospi', '000660');
    await vi.advanceTimersByTimeAsync(60_000);
    expect(caller.calls.length).toBe(1);
    demand.add('quote', 'kospi', '035420');
    await vi.advanceTimersByTimeAsync(60_000);
    expect(caller.calls.length).toBe(2);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(caller.calls.length).toBe(2);
  });

  it('at night and on closed days, fetches the last close from the closing-data endpoint, one call per code, in the channel’s fields', async () => {
    vi.setSystemTime(Date.parse('2026-11-21T10:00:00+09:00')); // a Saturday
    const store = new StateStore();
    make(marketClock('kst', SESSIONS), store);
    demand.add('quote', 'kospi', '005930');
    demand.add('quote', 'kospi', '000660');
    demand.add('index', 'kosdaq', 'Q001');
    await vi.advanceTimersByTimeAsync(60_000);
    expect(caller.calls.map((c) => `${c.id} ${String(c.params.issuecode)}`).sort()).toEqual([
      'v2.stocks.closeprice 000660',
      'v2.stocks.closeprice 005930',
      'v3.closed.index.closeindex Q001',
    ]);
    // A quote row keeps the quote's fields (no open, no change), whatever endpoint filled it.
    expect(store.entry('quote', 'kospi', '005930')!.row).toEqual({ isuSrtCd: '005930', trdPrc: 100, accTrdvol: 10, accTrdval: 1000 });
    expect(store.entry('index', 'kosdaq', 'Q001')!.row).toMatchObject({ isuSrtCd: 'Q001', trdPrc: 100, cmpprevddPrc: 1 });
    expect(statuses.filter((st) => st.channel === 'quote').at(-1)).toMatchObject({
      state: 'closed',
      reason: 'market closed',
      opensAt: Date.parse('2026-11-23T09:00:00+09:00'),
    });
    await vi.advanceTimersByTimeAsync(5 * 60_000);
    expect(caller.calls.length).toBe(3);
  });

  it('at the close, fetches the closing auction’s result once the close has settled, and then calls nothing', async () => {
    vi.setSystemTime(Date.parse('2026-11-24T15:29:50+09:00'));
    const store = new StateStore();
    make(marketClock('kst', SESSIONS), store);
    demand.add('price', 'kospi', '005930');
    await vi.advanceTimersByTimeAsync(9_000);
    const open = caller.calls.length;
    expect(open).toBeGreaterThan(5);
    // The closing auction: its result is in the upstream's snapshot after 15:30.
    caller.price = 150;
    await vi.advanceTimersByTimeAsync(1_500);
    expect(statuses.at(-1)).toMatchObject({ state: 'closed', reason: 'market closed' });
    expect(store.entry('price', 'kospi', '005930')!.row.trdPrc).toBe(100);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(caller.calls.slice(open).map((c) => [c.id, new Date(c.at).toISOString()])).toEqual([['v2.multiquote.price', '2026-11-24T06:30:10.000Z']]);
    expect(store.entry('price', 'kospi', '005930')!.row.trdPrc).toBe(150);
    expect(statuses.at(-1)).toMatchObject({ state: 'closed', asOf: Date.parse('2026-11-24T15:30:10+09:00') });
    await vi.advanceTimersByTimeAsync(5 * 60_000);
    expect(caller.calls.length).toBe(open + 1);
  });

  it('a closing fetch of some codes does not make the feed fresher than the rows it did not bring: asOf is the oldest wanted', async () => {
    vi.setSystemTime(Date.parse('2026-11-24T17:59:50+09:00'));
    const store = new StateStore();
    make(marketClock('kst', SESSIONS), store);
    demand.add('quote', 'kospi', '*');
    await vi.advanceTimersByTimeAsync(9_000);
    const lastList = caller.calls.filter((c) => c.id === 'v2.multiquote.lists').at(-1)!.at;
    await vi.advanceTimersByTimeAsync(60_000);
    // Closed at 18:00: the whole market has no closing data, so its rows stay as the last list brought them.
    expect(statuses.at(-1)).toMatchObject({ state: 'closed', asOf: lastList });
    const calls = caller.calls.length;
    // A code the bridge holds nothing of: one closing-data call, its row as of the close.
    demand.add('quote', 'kospi', '035420');
    await vi.advanceTimersByTimeAsync(60_000);
    expect(caller.calls.slice(calls).map((c) => `${c.id} ${String(c.params.issuecode)}`)).toEqual(['v2.stocks.closeprice 035420']);
    expect(store.entry('quote', 'kospi', '035420')!.seenTs).toBe(Date.parse('2026-11-24T18:00:10+09:00'));
    expect(statuses.at(-1)).toMatchObject({ state: 'closed', asOf: lastList });
    // Without the whole market, what is wanted is as of the close.
    demand.remove('quote', 'kospi', '*');
    demand.add('quote', 'kospi', '005930');
    await vi.advanceTimersByTimeAsync(60_000);
    expect(caller.calls.slice(calls + 1).map((c) => `${c.id} ${String(c.params.issuecode)}`)).toEqual(['v2.stocks.closeprice 005930']);
    expect(statuses.at(-1)).toMatchObject({ state: 'closed', asOf: Date.parse('2026-11-24T18:00:10+09:00') });
  });

  it('rows held from before the close (a restart, an earlier session) are fetched again once; a clock that passes a session fetches again and moves opensAt', async () => {
    vi.setSystemTime(Date.parse('2026-11-24T20:00:00+09:00'));
    const store = new StateStore();
    // The state a restart loads: a row last seen at 10:00 that day.
    store.apply('price', 'kospi', [{ isuSrtCd: '005930', trdPrc: 88 }], Date.parse('2026-11-24T10:00:00+09:00'));
    store.apply('price', 'kospi', [{ isuSrtCd: '000660', trdPrc: 77 }], Date.parse('2026-11-24T18:00:30+09:00'));
    make(marketClock('kst', SESSIONS), store);
    demand.add('price', 'kospi', '005930');
    demand.add('price', 'kospi', '000660');
    await vi.advanceTimersByTimeAsync(60_000);
    // 000660 was seen after the day's end: it is the close. 005930 was not.
    expect(caller.calls.map((c) => `${c.id} ${String(c.params.issuecode)}`)).toEqual(['v2.stocks.closeprice 005930']);
    expect(store.entry('price', 'kospi', '005930')!.row.trdPrc).toBe(100);
    // The closing data is the day's close: as of the close (settled), not of the evening's fetch.
    expect(statuses.at(-1)).toMatchObject({ state: 'closed', opensAt: Date.parse('2026-11-25T09:00:00+09:00'), asOf: Date.parse('2026-11-24T18:00:10+09:00') });
    await vi.advanceTimersByTimeAsync(5 * 60_000);
    expect(caller.calls.length).toBe(1);
    // The wall clock steps to Saturday noon: Wednesday to Friday traded meanwhile.
    caller.price = 120;
    vi.setSystemTime(Date.parse('2026-11-28T12:00:00+09:00'));
    await vi.advanceTimersByTimeAsync(60_000);
    expect(
      caller.calls
        .slice(1)
        .map((c) => String(c.params.issuecode))
        .sort(),
    ).toEqual(['000660', '005930']);
    expect(store.entry('price', 'kospi', '000660')!.row.trdPrc).toBe(120);
    expect(statuses.at(-1)).toMatchObject({ state: 'closed', opensAt: Date.parse('2026-11-30T09:00:00+09:00'), asOf: Date.parse('2026-11-27T18:00:10+09:00') });
    await vi.advanceTimersByTimeAsync(5 * 60_000);
    expect(caller.calls.length).toBe(3);
  });

  it('paces over the polling time until the reset (the next pre-market too) and leaves the lookups’ calls aside', async () => {
    // Tuesday 17:59 KST: a minute of after-hours left, then 30 minutes of pre-market before the 09:00 reset.
    vi.setSystemTime(Date.parse('2026-11-24T17:59:00+09:00'));
    budget.remaining = 1_000;
    budget.resetAt = Date.parse('2026-11-25T09:00:00+09:00');
    make(marketClock('kst', SESSIONS), new StateStore(), { lookupsLeft: () => 900 });
    demand.add('price', 'kospi', '005930');
    await vi.advanceTimersByTimeAsync(100);
    // 100 calls for the poller over 31 minutes of polling, one call a cycle: every 18.6 s.
    expect(statuses.at(-1)).toMatchObject({ state: 'live', intervalMs: 18_600 });
  });

  it('under budget pressure announces its interval when it moves by more than 5 %, not on every cycle', async () => {
    vi.setSystemTime(Date.parse('2026-11-24T17:00:00+09:00'));
    budget.remaining = 1_000;
    budget.resetAt = Date.parse('2026-11-25T09:00:00+09:00');
    const spend = caller.call.bind(caller);
    caller.call = async (id: string, params: Record<string, unknown>) => {
      // Each call costs two (a retry, say): the plan drifts a little on every cycle.
      budget.remaining = Math.max(0, budget.remaining! - 2);
      return spend(id, params);
    };
    make(marketClock('kst', SESSIONS), new StateStore(), { lookupsLeft: () => 100 });
    demand.add('price', 'kospi', '005930');
    await vi.advanceTimersByTimeAsync(30 * 60_000);
    const live = statuses.filter((st) => st.state === 'live');
    // 900 calls over 90 minutes of polling planned at first (one every 6 s); each cycle costs more than planned and the plan widens
    // a little each time: about a hundred cycles, a plan each, a few announcements.
    expect(caller.calls.length).toBeGreaterThan(80);
    expect(live[0]!.intervalMs).toBeGreaterThanOrEqual(5_900);
    expect(live.length).toBeGreaterThan(1);
    expect(live.length).toBeLessThanOrEqual(12);
    for (let i = 1; i < live.length; i++) expect(live[i]!.intervalMs / live[i - 1]!.intervalMs).toBeGreaterThan(1.05);
  });

  it('feeds of one code share its closing-data call: quote, ohlc and price of 005930 make one closeprice call, and each has its row', async () => {
    vi.setSystemTime(Date.parse('2026-11-21T10:00:00+09:00')); // a Saturday
    const store = new StateStore();
    make(marketClock('kst', SESSIONS), store);
    demand.add('quote', 'kospi', '005930');
    demand.add('price', 'kospi', '005930');
    demand.add('ohlc', 'kospi', '005930');
    demand.add('price', 'kospi', '000660');
    await vi.advanceTimersByTimeAsync(60_000);
    expect(caller.calls.map((c) => `${c.id} ${String(c.params.issuecode)}`).sort()).toEqual(['v2.stocks.closeprice 000660', 'v2.stocks.closeprice 005930']);
    for (const channel of ['quote', 'price', 'ohlc'] as const) expect(store.entry(channel, 'kospi', '005930')?.row.trdPrc, channel).toBe(100);
    expect(poller.feed('quote', 'kospi')!.calls + poller.feed('price', 'kospi')!.calls + poller.feed('ohlc', 'kospi')!.calls).toBe(2);
    // A later subscriber of another channel of a code asked for takes the same answer.
    demand.add('quote', 'kospi', '000660');
    await vi.advanceTimersByTimeAsync(5 * 60_000);
    expect(store.entry('quote', 'kospi', '000660')?.row.trdPrc).toBe(100);
    expect(caller.calls).toHaveLength(2);
  });

  it('a feed with nothing to fetch at this hour says so, and calls nothing', async () => {
    vi.setSystemTime(Date.parse('2026-11-24T20:00:00+09:00'));
    make(marketClock('kst', SESSIONS));
    demand.add('book', 'kospi', '005930'); // no closing data for a book, and no snapshot after 18:00
    demand.add('quote', 'kosdaq', '*'); // no closing data for the whole market
    await vi.advanceTimersByTimeAsync(60_000);
    expect(caller.calls).toEqual([]);
    const last = (channel: string) => statuses.filter((st) => st.channel === channel).at(-1);
    const why = { book: 'not provided at this hour', quote: 'closing data is per code: none for a whole market' };
    for (const channel of ['book', 'quote'] as const) {
      expect(last(channel), channel).toMatchObject({
        state: 'closed',
        reason: `market closed; no data to show until the session opens (${why[channel]})`,
        opensAt: Date.parse('2026-11-25T09:00:00+09:00'),
      });
      expect(last(channel)!.asOf, channel).toBeUndefined();
    }
  });

  it('a closed fetch that failed in passing is tried again after 30 s, then twice as long; one refused for the hour is not', async () => {
    vi.setSystemTime(Date.parse('2026-11-21T10:00:00+09:00')); // a Saturday
    let failing = 2;
    caller.fail = () => (failing-- > 0 ? coded('upstream_error') : undefined);
    const store = new StateStore();
    make(marketClock('kst', SESSIONS), store);
    demand.add('price', 'kospi', '005930');
    await vi.advanceTimersByTimeAsync(1_000);
    expect(caller.calls).toHaveLength(1);
    expect(statuses.at(-1)).toMatchObject({ state: 'closed', reason: 'market closed; no data to show until the session opens (upstream_error)' });
    await vi.advanceTimersByTimeAsync(30_000);
    expect(caller.calls).toHaveLength(2);
    // The second failed too: the next try a minute later.
    await vi.advanceTimersByTimeAsync(50_000);
    expect(caller.calls).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(15_000);
    expect(caller.calls).toHaveLength(3);
    expect(store.entry('price', 'kospi', '005930')!.row.trdPrc).toBe(100);
    expect(statuses.at(-1)).toMatchObject({ state: 'closed', reason: 'market closed' });
    await vi.advanceTimersByTimeAsync(10 * 60_000);
    expect(caller.calls).toHaveLength(3);
  });

  it('a closed fetch the upstream refuses says so in the reason', async () => {
    vi.setSystemTime(Date.parse('2026-11-21T10:00:00+09:00'));
    caller.fail = () => coded('not_provided_now');
    make(marketClock('kst', SESSIONS));
    demand.add('price', 'kospi', '005930');
    await vi.advanceTimersByTimeAsync(60_000);
    expect(caller.calls.map((c) => c.id)).toEqual(['v2.stocks.closeprice']);
    expect(statuses.at(-1)).toMatchObject({ state: 'closed', reason: 'market closed; no data to show until the session opens (not_provided_now)' });
  });

  it('publishes the changes it sees', async () => {
    make();
    const events: string[] = [];
    bus.subscribe('batch', (b) => events.push(...b.events.map((e) => `${e.kind}:${e.topic}:${e.seq}`)));
    demand.add('quote', 'kospi', '005930');
    await vi.advanceTimersByTimeAsync(100);
    caller.price = 101;
    await vi.advanceTimersByTimeAsync(1000);
    expect(events).toEqual(['snapshot:quote.kospi.005930:1', 'snapshot:quote.kospi.000660:1', 'patch:quote.kospi.005930:2', 'patch:quote.kospi.000660:2']);
  });
});

describe('the feed around the clock (injected clock)', () => {
  // Each: the moment, the state the feed settles in, when it says the market opens (null: open), upstream calls in 60 s, the endpoint called.
  const LISTS = 'v2.multiquote.lists';
  const CLOSE = 'v2.stocks.closeprice';
  const CASES: [string, string, string | null, number, string][] = [
    ['2026-11-28T12:00:00+09:00', 'closed', '2026-11-30T09:00:00+09:00', 1, CLOSE], // a Saturday
    ['2026-11-24T20:00:00+09:00', 'closed', '2026-11-25T09:00:00+09:00', 1, CLOSE], // a weekday at 20:00
    ['2026-11-24T08:29:00+09:00', 'closed', '2026-11-24T09:00:00+09:00', 1, CLOSE], // the day before's close
    ['2026-11-24T08:30:00+09:00', 'live', null, 60, LISTS], // the pre-market is polled
    ['2026-11-24T09:00:00+09:00', 'live', null, 60, LISTS],
    ['2026-11-24T15:30:00+09:00', 'closed', '2026-11-25T09:00:00+09:00', 2, LISTS], // the snapshot still holds the day's last state: at once, and again once the close has settled
    ['2026-11-24T15:40:00+09:00', 'live', null, 60, LISTS], // after-hours
    ['2026-11-24T18:00:00+09:00', 'closed', '2026-11-25T09:00:00+09:00', 2, CLOSE], // at once, and again once the day's last match has settled
    ['2026-12-25T10:00:00+09:00', 'closed', '2026-12-28T09:00:00+09:00', 1, CLOSE], // Christmas
    ['2026-09-25T10:00:00+09:00', 'closed', '2026-09-28T09:00:00+09:00', 1, CLOSE], // Chuseok
    ['2026-12-31T10:00:00+09:00', 'closed', '2027-01-04T10:00:00+09:00', 1, CLOSE], // the year-end closure; the New Year late open
    ['2027-01-04T09:00:00+09:00', 'closed', '2027-01-04T10:00:00+09:00', 1, CLOSE], // the first trading day: no pre-market before 09:30
    ['2027-01-04T09:30:00+09:00', 'live', null, 60, LISTS], // its pre-market
    ['2026-11-19T09:10:00+09:00', 'closed', '2026-11-19T10:00:00+09:00', 1, CLOSE], // the exam day: an hour late
    ['2026-11-19T16:10:00+09:00', 'live', null, 60, LISTS], // the exam day: still trading at 16:10
    ['2026-11-19T16:35:00+09:00', 'closed', '2026-11-20T09:00:00+09:00', 1, LISTS], // the exam day's gap before after-hours
  ];

  let caller: FakeCaller;
  let poller: Poller;
  afterEach(() => {
    poller?.stop();
    vi.useRealTimers();
  });

  it.each(CASES)('%s: %s, opens %s, %d calls in a minute to %s', async (iso, state, opens, calls, id) => {
    vi.useFakeTimers({ now: Date.parse(iso) });
    caller = new FakeCaller();
    const bus = new LocalBus();
    const statuses: FeedStatus[] = [];
    bus.subscribe('status', (st) => statuses.push(st));
    const demand = new Demand();
    const budget = { remaining: null, resetAt: null, isExhausted: () => false };
    poller = new Poller({
      caller,
      budget,
      store: new StateStore(),
      bus,
      demand,
      clock: marketClock('kst', SESSIONS, Date.now),
      logger: silentLogger(),
      random: () => 0.5,
    });
    poller.start();
    demand.add('quote', 'kospi', '005930');
    await vi.advanceTimersByTimeAsync(59_500);
    const last = statuses.at(-1)!;
    expect(last.state).toBe(state);
    if (opens === null) expect(last.opensAt).toBeUndefined();
    else expect(last.opensAt).toBe(Date.parse(opens));
    expect(caller.calls.length).toBe(calls);
    expect(new Set(caller.calls.map((c) => c.id))).toEqual(new Set([id]));
  });

  it('goes live when the session opens, and closed when it ends', async () => {
    vi.useFakeTimers({ now: Date.parse('2026-11-24T08:29:30+09:00') });
    caller = new FakeCaller();
    const bus = new LocalBus();
    const states: string[] = [];
    bus.subscribe('status', (st) => states.push(st.state));
    const demand = new Demand();
    poller = new Poller({
      caller,
      budget: { remaining: null, resetAt: null, isExhausted: () => false },
      store: new StateStore(),
      bus,
      demand,
      clock: marketClock('kst', SESSIONS, Date.now),
      logger: silentLogger(),
      random: () => 0.5,
    });
    poller.start();
    demand.add('quote', 'kospi', '005930');
    await vi.advanceTimersByTimeAsync(40_000);
    expect(states).toEqual(['closed', 'live']);
    expect(caller.calls.length).toBeGreaterThanOrEqual(10);
    const before = caller.calls.length;
    vi.setSystemTime(Date.parse('2026-11-24T18:00:00+09:00'));
    await vi.advanceTimersByTimeAsync(120_000);
    expect(states.at(-1)).toBe('closed');
    expect(caller.calls.length - before).toBeLessThanOrEqual(1);
  });

  it.each([
    ['2026-11-24T08:29:30+09:00', '2026-11-24T08:30:00+09:00', '2026-11-24T09:00:00+09:00'], // the pre-market, before the open it announces
    ['2026-11-24T15:35:00+09:00', '2026-11-24T15:40:00+09:00', '2026-11-25T09:00:00+09:00'], // after-hours trading
    ['2027-01-04T09:20:00+09:00', '2027-01-04T09:30:00+09:00', '2027-01-04T10:00:00+09:00'], // the New Year's late pre-market
  ])('closed at %s, it polls again at %s, while saying it opens at %s', async (iso, resumes, opens) => {
    vi.useFakeTimers({ now: Date.parse(iso) });
    caller = new FakeCaller();
    const bus = new LocalBus();
    const seen: FeedStatus[] = [];
    bus.subscribe('status', (st) => seen.push(st));
    const demand = new Demand();
    // A closed feed that would look at the clock only once an hour: the wake comes from the sessions.
    poller = new Poller({
      caller,
      budget: { remaining: null, resetAt: null, isExhausted: () => false },
      store: new StateStore(),
      bus,
      demand,
      clock: marketClock('kst', SESSIONS, Date.now),
      logger: silentLogger(),
      random: () => 0.5,
      closedCheckMs: 3_600_000,
    });
    poller.start();
    demand.add('quote', 'kospi', '005930');
    await vi.advanceTimersByTimeAsync(Date.parse(resumes) - Date.parse(iso) - 1000);
    expect(seen.at(-1)).toMatchObject({ state: 'closed', opensAt: Date.parse(opens) });
    await vi.advanceTimersByTimeAsync(1500);
    expect(seen.at(-1)!.state).toBe('live');
    expect(caller.calls.at(-1)!.at).toBeGreaterThanOrEqual(Date.parse(resumes));
  });

  it('goes live at 08:30 whichever of its reads of the clock the minute turns between', async () => {
    // A closed feed's wake is due at 08:30:00.000 exactly, so its cycle often runs in the millisecond before, and the
    // clock turns while the cycle asks it things. Here every read moves the clock on a millisecond, and the cycle starts
    // k ms before 08:30, for every k up to past the reads a cycle makes: whatever the read the minute turns at, the feed
    // polls the pre-market at once. Asked at several instants, a cycle judged the market closed at one, found at the
    // next that it resumed not today but the next trading day, and slept its closed interval (the demo page's empty
    // order book, 30 s).
    const EDGE = Date.parse('2026-11-24T08:30:00+09:00');
    for (let k = 1; k <= 40; k++) {
      vi.useFakeTimers({ now: EDGE - 60_000 });
      caller = new FakeCaller();
      const demand = new Demand();
      let t = EDGE - k;
      poller = new Poller({
        caller,
        budget: { remaining: null, resetAt: null, isExhausted: () => false },
        store: new StateStore(),
        bus: new LocalBus(),
        demand,
        clock: marketClock('kst', SESSIONS, () => t++),
        logger: silentLogger(),
        random: () => 0.5,
        closedCheckMs: 3_600_000,
      });
      poller.start();
      demand.add('book', 'kospi', '005930');
      await vi.advanceTimersByTimeAsync(1000);
      expect(
        caller.calls.map((c) => c.id),
        `starting ${k} ms before 08:30`,
      ).toContain('v2.multiquote.orderbook');
      poller.stop();
      vi.useRealTimers();
    }
  });
});
