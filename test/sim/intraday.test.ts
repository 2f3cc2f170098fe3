import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_BODIES } from '../../src/upstream/wire.js';
import { kstAt, startSim, type Running } from './helpers.js';

/**
 * `intraday` serves the bars of the day `inqStrtDd` names: the session's
 * live bars for today (or no date), bars that agree with `history` for a
 * past trading day, none for a closed or later day. The bridge asks for
 * the previous trading day before the open (src/lookups/dates.ts).
 */

interface Row {
  inddTm: string;
  inddOpnprc: number;
  inddHgprc: number;
  inddLwprc: number;
  inddClsprc: number;
  inddTrdvol: number;
  inddTrdval: number;
  inddAccTrdvol: number;
  inddAccTrdval: number;
}

interface HistoryRow {
  trdPrc: number;
  opnprc: number;
  hgprc: number;
  lwprc: number;
  accTrdvol: number;
  accTrdval: number;
}

const STOCK = '/v3/market/realtime/kospi/stocks/005930/intraday';
const INDEX = '/v3/market/realtime/index/kospi/K1/intraday';
const FUTURES = '/v3/market/realtime/derivative/futures/kospi200/K2FA001/intraday';

const q = (cycle: number, date: string | undefined, from = '0900', to = '1800') =>
  `?inddCycleTpCd=${cycle}${date === undefined ? '' : `&inqStrtDd=${date}`}&strtTm=${from}&endTm=${to}`;

async function rows(s: Running, path: string): Promise<Row[]> {
  const res = await s.get(path);
  expect(res.status, res.text).toBe(200);
  return (res.json() as { result: { hisLists: Row[] } }).result.hisLists;
}

async function historyOf(s: Running, path: string, date: string): Promise<HistoryRow> {
  const res = await s.get(`${path}?trnsmCycleTpCd=D&inqStrtDd=${date}&inqEndDd=${date}`);
  expect(res.status, res.text).toBe(200);
  const list = (res.json() as { result: { hisLists: HistoryRow[] } }).result.hisLists;
  expect(list).toHaveLength(1);
  return list[0]!;
}

/** The day's bars (newest first) open, peak, trough, close and trade as the day's history row says. */
function expectDay(bars: Row[], day: HistoryRow): void {
  expect(bars.length).toBeGreaterThan(0);
  expect(bars.at(-1)!.inddOpnprc).toBe(day.opnprc);
  expect(Math.max(...bars.map((b) => b.inddHgprc))).toBe(day.hgprc);
  expect(Math.min(...bars.map((b) => b.inddLwprc))).toBe(day.lwprc);
  expect(bars[0]!.inddClsprc).toBe(day.trdPrc);
  expect(bars[0]!.inddAccTrdvol).toBe(day.accTrdvol);
  expect(bars.reduce((a, b) => a + b.inddTrdvol, 0)).toBe(day.accTrdvol);
  expect(bars[0]!.inddAccTrdval).toBe(day.accTrdval);
}

describe('intraday before the open', () => {
  // Wednesday 2026-11-25 08:40: the session day has rolled, nothing has traded yet. The simulator lived through Tuesday's afternoon.
  let now = kstAt('2026-11-24', '15:00');
  let s: Running;
  beforeAll(async () => {
    s = await startSim({ clock: 'kst', now: () => now });
    now = kstAt('2026-11-25', '08:40');
    s.sim.market.advance(s.sim.clock.marketTime());
  });
  afterAll(() => s.stop());

  it('serves the previous trading day’s bars, as its history has it (stock, index, futures)', async () => {
    const checks: [string, string][] = [
      [STOCK, '/v3/market/closed/kospi/005930/history'],
      [INDEX, '/v3/market/closed/index/kospi/K1/history'],
      [FUTURES, '/v3/market/closed/derivative/futures/kospi200/K2FA001/history'],
    ];
    for (const [intraday, history] of checks) {
      expectDay(await rows(s, intraday + q(600, '20261124')), await historyOf(s, history, '20261124'));
    }
  });

  it('serves a day it did not live through alike, at every bar length', async () => {
    const day = await historyOf(s, '/v3/market/closed/kospi/005930/history', '20261120');
    expectDay(await rows(s, STOCK + q(600, '20261120')), day);
    const minutes = await rows(s, STOCK + q(60, '20261120', '1400', '1800'));
    expect(minutes[0]!.inddClsprc).toBe(day.trdPrc);
    expect(minutes[0]!.inddAccTrdvol).toBe(day.accTrdvol);
    const tens = await rows(s, STOCK + q(10, '20261120', '0900', '0910'));
    expect(tens).toHaveLength(60);
    expect(tens.at(-1)).toMatchObject({ inddTm: '9001000', inddOpnprc: day.opnprc });
  });

  it('has no bars for today before the open', async () => {
    expect(s.sim.market.sessionDate).toBe('20261125');
    expect(await rows(s, STOCK + q(60, undefined))).toEqual([]);
    expect(await rows(s, STOCK + q(60, '20261125'))).toEqual([]);
    expect(await rows(s, STOCK + q(60, '20261124'))).not.toEqual([]);
  });

  it('refuses a date that does not exist, like any bad parameter', async () => {
    for (const date of ['20261131', '20260229', '2026112']) {
      for (const path of [STOCK, INDEX, FUTURES]) {
        const res = await s.get(path + q(60, date));
        expect(res.status, `${path} ${date}`).toBe(400);
        expect(res.json()).toEqual(ERROR_BODIES.badParameter);
      }
    }
  });
});

describe('intraday on a late-open day', () => {
  it('has no bars before 10:00 on the year’s first trading day, while it lasts or looked back on', async () => {
    let now = kstAt('2027-01-04', '09:45');
    const s = await startSim({ clock: 'kst', now: () => now });
    try {
      expect(s.sim.market.sessionDate).toBe('20270104');
      expect(await rows(s, STOCK + q(60, '20270104'))).toEqual([]);
      // What the bridge asks for then: the last session, before the year-end closure.
      expectDay(await rows(s, STOCK + q(600, '20261230')), await historyOf(s, '/v3/market/closed/kospi/005930/history', '20261230'));
      now = kstAt('2027-01-05', '08:40');
      s.sim.market.advance(s.sim.clock.marketTime());
      expect(await rows(s, STOCK + q(10, '20270104', '0900', '1000'))).toEqual([]);
      const early = await rows(s, STOCK + q(10, '20270104', '0900', '1010'));
      expect(early.map((b) => b.inddTm).at(-1)).toBe('10001000');
      expect(early.length).toBeGreaterThan(0);
      expectDay(await rows(s, STOCK + q(600, '20270104')), await historyOf(s, '/v3/market/closed/kospi/005930/history', '20270104'));
    } finally {
      await s.stop();
    }
  });
});

describe('intraday during the session', () => {
  let s: Running;
  beforeAll(async () => {
    s = await startSim({ clock: 'kst', now: () => kstAt('2026-11-25', '10:30') });
  });
  afterAll(() => s.stop());

  it('serves the live bars for no date or today, and yesterday’s for yesterday', async () => {
    const live = await rows(s, STOCK + q(60, undefined));
    expect(live.length).toBeGreaterThan(0);
    expect(await rows(s, STOCK + q(60, '20261125'))).toEqual(live);
    const issue = s.sim.market.universe.byCode.get('005930')!;
    const replayed = s.sim.market.issueBars(issue, 60);
    expect(live[0]).toMatchObject({ inddClsprc: replayed.at(-1)!.close, inddAccTrdvol: replayed.at(-1)!.accVol });
    const yesterday = await rows(s, STOCK + q(60, '20261124'));
    expect(yesterday[0]!.inddTm).toBe('15310000');
    expect(yesterday).not.toEqual(live);
  });

  it('has no bars for a weekend, a holiday or a later day', async () => {
    expect(await rows(s, STOCK + q(60, undefined))).not.toEqual([]);
    // 2026-11-22 is a Sunday, 2026-10-09 (Hangul Day) a holiday.
    for (const date of ['20261122', '20261009', '20261126', '20261201']) {
      for (const path of [STOCK, INDEX, FUTURES]) expect(await rows(s, path + q(60, date)), `${path} ${date}`).toEqual([]);
    }
  });
});
