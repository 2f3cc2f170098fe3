import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KrxCalendar } from '../../src/market/calendar.js';
import { Sessions, phaseOf } from '../../src/market/session.js';
import { SimClock } from '../../src/sim/clock.js';
import { ERROR_BODIES } from '../../src/upstream/wire.js';
import { kstAt, startSim, type Running } from './helpers.js';

/**
 * The clock with an injected wall time: session boundaries (the market's
 * sessions of src/market, late opens and operator closures included), the
 * three modes, and the provision times the `kst` clock enforces over HTTP.
 */

const WED = '2025-06-04';
const SAT = '2025-06-07';

describe('session phases (kst)', () => {
  it.each([
    ['08:29', 'closed'],
    ['08:30', 'pre'],
    ['09:00', 'regular'],
    ['15:19', 'regular'],
    ['15:20', 'closing_auction'],
    ['15:30', 'closed'],
    ['15:40', 'after_close'],
    ['16:00', 'single_price'],
    ['17:59', 'single_price'],
    ['18:00', 'closed'],
  ])('%s on a trading day is %s', (hhmm, phase) => {
    expect(new SimClock({ mode: 'kst', now: () => kstAt(WED, hhmm) }).phase()).toBe(phase);
  });

  it('is closed all weekend', () => {
    expect(new SimClock({ mode: 'kst', now: () => kstAt(SAT, '10:00') }).phase()).toBe('closed');
    expect(phaseOf(undefined, 36_000)).toBe('closed');
  });

  it('opens late on the exam day and the first trading day, like the bridge', () => {
    expect(new SimClock({ mode: 'kst', now: () => kstAt('2026-11-19', '09:30') }).phase()).toBe('pre');
    expect(new SimClock({ mode: 'kst', now: () => kstAt('2026-11-19', '16:25') }).phase()).toBe('closing_auction');
    expect(new SimClock({ mode: 'kst', now: () => kstAt('2027-01-04', '09:10') }).phase()).toBe('closed');
    expect(new SimClock({ mode: 'kst', now: () => kstAt('2027-01-04', '09:40') }).phase()).toBe('pre');
  });

  it('closes on the operator’s extra days it is given', () => {
    const sessions = new Sessions(new KrxCalendar(['20250604']));
    expect(new SimClock({ mode: 'kst', sessions, now: () => kstAt(WED, '10:00') }).phase()).toBe('closed');
    expect(new SimClock({ mode: 'kst', now: () => kstAt(WED, '10:00') }).phase()).toBe('regular');
  });
});

describe('clock modes', () => {
  it('open: the regular session at any hour, advancing with the wall clock and wrapping to the next trading day', () => {
    let now = kstAt(SAT, '23:00');
    const c = new SimClock({ mode: 'open', now: () => now });
    // Friday 2025-06-06 is a holiday (Memorial Day): the latest trading day is Thursday.
    expect(c.marketTime()).toEqual({ date: '20250605', secs: 9.5 * 3600 });
    expect(c.phase()).toBe('regular');
    now += 90_000;
    expect(c.marketTime().secs).toBe(9.5 * 3600 + 90);
    now += (5 * 3600 + 50 * 60) * 1000;
    expect(c.marketTime()).toEqual({ date: '20250609', secs: 9 * 3600 + 90 });
    expect(c.enforcesProvision).toBe(false);
  });

  it('fast: from 08:25 at `speed` market seconds per wall second', () => {
    let now = kstAt(WED, '13:00');
    const c = new SimClock({ mode: 'fast', speed: 60, now: () => now });
    expect(c.marketTime()).toEqual({ date: '20250604', secs: 8 * 3600 + 25 * 60 });
    now += 60_000;
    expect(c.marketTime()).toEqual({ date: '20250604', secs: 9 * 3600 + 25 * 60 });
    expect(c.phase()).toBe('regular');
  });
});

describe('provision times', () => {
  const wed = (hhmm: string) => ({ date: '20250604', secs: Number(hhmm.slice(0, 2)) * 3600 + Number(hhmm.slice(3)) * 60 });
  const clock = new SimClock({ mode: 'kst' });
  const outside = clock.outsideProvision.bind(clock);
  it('follows the entry kinds', () => {
    const strict = { type: 'realtime', strict: true } as const;
    expect(outside(strict, wed('08:29'))).toBe(true);
    expect(outside(strict, wed('08:30'))).toBe(false);
    expect(outside(strict, wed('17:59'))).toBe(false);
    expect(outside(strict, wed('18:00'))).toBe(true);
    expect(outside(strict, { date: '20250607', secs: 36_000 })).toBe(true);
    expect(outside({ type: 'realtime', strict: false }, wed('23:00'))).toBe(false);
    expect(outside({ type: 'batch', at: '06:30' }, wed('06:29'))).toBe(true);
    expect(outside({ type: 'batch', at: '06:30' }, wed('06:30'))).toBe(false);
    const after = { type: 'afterClose', at: '15:40' } as const;
    expect(outside(after, wed('08:00'))).toBe(false);
    expect(outside(after, wed('10:00'))).toBe(true);
    expect(outside(after, wed('15:40'))).toBe(false);
    expect(outside(after, { date: '20250607', secs: 36_000 })).toBe(false);
  });

  it('moves with the late sessions of the exam day', () => {
    const exam = (hhmm: string) => ({ date: '20261119', secs: Number(hhmm.slice(0, 2)) * 3600 + Number(hhmm.slice(3)) * 60 });
    const strict = { type: 'realtime', strict: true } as const;
    const after = { type: 'afterClose', at: '15:40' } as const;
    expect(outside(strict, exam('09:00'))).toBe(true);
    expect(outside(strict, exam('18:30'))).toBe(false);
    expect(outside(after, exam('16:00'))).toBe(true); // the market closes at 16:30 that day
    expect(outside(after, exam('16:40'))).toBe(false);
  });
});

describe('kst simulator over HTTP', () => {
  let now = kstAt(WED, '20:00');
  let s: Running;
  beforeAll(async () => {
    s = await startSim({ clock: 'kst', now: () => now });
  });
  afterAll(() => s.stop());

  const at = async (date: string, hhmm: string, path: string) => {
    now = kstAt(date, hhmm);
    return s.get(path);
  };

  it('refuses realtime per-issue prices outside 08:30–18:00 and on weekends', async () => {
    for (const [date, hhmm, status] of [
      [WED, '20:00', 400],
      [WED, '08:00', 400],
      [WED, '10:00', 200],
      [SAT, '10:00', 400],
    ] as const) {
      const r = await at(date, hhmm, '/v3/market/realtime/kospi/stocks/005930/price');
      expect(r.status, `${date} ${hhmm}`).toBe(status);
      if (status === 400) expect(r.json()).toEqual(ERROR_BODIES.notProvided);
    }
    expect((await at(WED, '20:00', '/v2/market/stocks/kosdaq/247540/orderbook')).status).toBe(400);
  });

  it('refuses closing data between 08:30 and its time, serves it after', async () => {
    expect((await at(WED, '10:00', '/v3/market/closed/kospi/005930/closeprice')).status).toBe(400);
    expect((await at(WED, '16:00', '/v3/market/closed/kospi/005930/closeprice')).status).toBe(200);
    expect((await at(WED, '07:00', '/v3/market/closed/kospi/005930/closeprice')).status).toBe(200);
    expect((await at(WED, '17:00', '/v3/market/closed/kospi/005930/shortsell?inqStrtDd=20250501&inqEndDd=20250530')).status).toBe(400);
    expect((await at(WED, '18:30', '/v3/market/closed/kospi/005930/shortsell?inqStrtDd=20250501&inqEndDd=20250530')).status).toBe(200);
  });

  it('refuses batch data before 06:30', async () => {
    expect((await at(WED, '06:00', '/v3/market/closed/kospi/005930/master')).status).toBe(400);
    expect((await at(WED, '07:00', '/v3/market/closed/kospi/005930/master')).status).toBe(200);
  });

  it('serves the 1-second snapshots during the sessions only: the day’s last state until 18:00, closing data after', async () => {
    const lists = '/v3/market/realtime/kospi/multiquote/stocks/lists';
    for (const [date, hhmm, status] of [
      [WED, '15:35', 200], // closed between the close and after-hours: still the day's last state
      [WED, '17:59', 200],
      [WED, '18:00', 400],
      [WED, '23:00', 400],
      [WED, '08:29', 400],
      [SAT, '12:00', 400],
    ] as const) {
      expect((await at(date, hhmm, lists)).status, `${date} ${hhmm}`).toBe(status);
    }
    expect((await at(WED, '23:00', '/v2/market/index/kospi/K1/index')).status).toBe(400);
    expect((await at(WED, '23:00', '/v2/market/index/kospi/K1/closeindex')).status).toBe(200);
    expect((await at(SAT, '12:00', '/v2/market/stocks/kospi/005930/closeprice')).status).toBe(200);
  });
});

describe('kst market follows the sessions', () => {
  it('does not trade outside the sessions and trades inside them', async () => {
    let now = kstAt(WED, '20:00');
    const s = await startSim({ clock: 'kst', now: () => now, tickMs: 1000 });
    try {
      const m = s.sim.market;
      expect(m.sessionDate).toBe('20250604');
      expect(m.closed).toBe(true);
      const before = m.live.map((l) => l.vol);
      s.sim.tick();
      expect(m.live.map((l) => l.vol)).toEqual(before);
      now = kstAt('2025-06-05', '10:00');
      s.sim.resume();
      m.advance(s.sim.clock.marketTime());
      expect(m.sessionDate).toBe('20250605');
      expect(m.phase()).toBe('regular');
      const vol = m.live.map((l) => l.vol);
      s.sim.tick();
      expect(m.live.some((l, i) => l.vol > vol[i]!)).toBe(true);
      const list = (await s.get('/v3/market/realtime/kospi/multiquote/stocks/lists')).json() as { trdDd: string; trdTm: string };
      expect(list.trdDd).toBe('20250605');
      expect(list.trdTm).toBe('100001');
    } finally {
      await s.stop();
    }
  });
});
