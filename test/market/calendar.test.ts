import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { KrxCalendar, coveredYear, kstDate, operatorHolidays, parseHolidayList, yearEndClosure } from '../../src/market/calendar.js';
import { lastSessionDate, withDefaultDates } from '../../src/lookups/dates.js';
import { Sessions } from '../../src/market/session.js';
import { nextPublication, provided } from '../../src/market/provision.js';
import { ttlFor } from '../../src/upstream/cache.js';
import { endpoint } from '../../src/upstream/catalogue.js';

const cal = new KrxCalendar();
const at = (iso: string) => Date.parse(iso);

describe('KrxCalendar', () => {
  it.each([
    ['20261124', undefined, 'a Tuesday'],
    ['20261128', 'weekend', 'a Saturday'],
    ['20261225', 'holiday', 'Christmas'],
    ['20260925', 'holiday', 'Chuseok'],
    ['20261005', 'holiday', 'the substitute for National Foundation Day (Oct 3 was a Saturday)'],
    ['20260603', 'holiday', 'the local elections'],
    ['20261231', 'year-end', 'the year-end closure'],
    ['20261230', undefined, 'the last trading day of 2026'],
    ['20270101', 'holiday', "New Year's Day"],
    ['20270104', undefined, 'the first trading day of 2027'],
  ] as [string, string | undefined, string][])('%s: %s (%s)', (date, closure) => {
    expect(cal.closure(date)).toBe(closure);
  });

  it('closes the last business day of December, whichever weekday it is', () => {
    expect(yearEndClosure('2026')).toBe('20261231');
    expect(yearEndClosure('2028')).toBe('20281229'); // Dec 31 2028 is a Sunday, Dec 30 a Saturday
  });

  it('knows the first trading day of a year (the late open)', () => {
    expect(cal.isFirstOfYear('20260102')).toBe(true);
    expect(cal.isFirstOfYear('20260105')).toBe(false);
  });

  it('walks trading days over weekends and holidays', () => {
    expect(cal.nextTradingDay('20261230')).toBe('20270104');
    expect(cal.prevTradingDay('20270104')).toBe('20261230');
    expect(cal.tradingDaysBack('20261005', 3)).toEqual(['20260930', '20261001', '20261002']);
  });

  it('takes the operator’s closures, inline or from a file', () => {
    const c = new KrxCalendar(parseHolidayList('20261126, 2026-11-27 # announced late'));
    expect(c.closure('20261126')).toBe('operator');
    expect(c.closure('20261127')).toBe('operator');
    expect(() => operatorHolidays('2026-13-01')).toThrow(/not a date/);
    expect(operatorHolidays(undefined)).toEqual([]);
  });

  it('reads MARKET_HOLIDAYS=@file: dates one or more a line, comments and blank lines', () => {
    const dir = mkdtempSync(join(tmpdir(), 'krx-holidays-'));
    const file = join(dir, 'closures.txt');
    writeFileSync(file, '# closures announced late\n2026-11-26\n\n20261127, 20261201 # a system failure\n');
    expect(operatorHolidays(`@${file}`)).toEqual(['20261126', '20261127', '20261201']);
    const c = new KrxCalendar(operatorHolidays(`@${file}`));
    expect(c.closure('20261201')).toBe('operator');
    expect(c.nextTradingDay('20261125')).toBe('20261130');
    expect(loadConfig({ MARKET_HOLIDAYS: `@${file}` }, []).MARKET_HOLIDAYS).toBe(`@${file}`);
    // A bad line, or a file that is not there, stops the start with the setting's name.
    writeFileSync(join(dir, 'bad.txt'), '20261126\n2026-11-31x\n');
    expect(() => loadConfig({ MARKET_HOLIDAYS: `@${join(dir, 'bad.txt')}` }, [])).toThrow(ConfigError);
    expect(() => loadConfig({ MARKET_HOLIDAYS: `@${join(dir, 'missing.txt')}` }, [])).toThrow(/MARKET_HOLIDAYS/);
  });

  it('warns once per year the library does not cover', () => {
    const years: string[] = [];
    const c = new KrxCalendar([], (y) => years.push(y));
    c.closure('20310101');
    c.closure('20310102');
    c.closure('20261124');
    expect(years).toEqual(['2031']);
  });

  it('says which years the holiday library covers, and falls back to weekends beyond them', () => {
    expect(coveredYear('2026')).toBe(true);
    expect(coveredYear('2031')).toBe(false);
    expect(cal.closure('20310101')).toBeUndefined(); // not known without the library: a Wednesday
    expect(cal.closure('20310104')).toBe('weekend');
  });
});

describe('default dates of lookups', () => {
  const dates = (iso: string) => ({ calendar: cal, now: () => at(iso) });

  it('today once the market opened, else the last session', () => {
    expect(lastSessionDate(dates('2026-11-24T03:00:00Z'))).toBe('20261124'); // Tue 12:00 KST
    expect(lastSessionDate(dates('2026-11-23T23:00:00Z'))).toBe('20261123'); // Tue 08:00 KST: Monday's
    expect(lastSessionDate(dates('2026-11-28T03:00:00Z'))).toBe('20261127'); // Saturday: Friday's
    expect(lastSessionDate(dates('2026-12-25T03:00:00Z'))).toBe('20261224'); // Christmas
    // Late opens (10:00): the first trading day of 2027 and the exam day.
    expect(lastSessionDate(dates('2027-01-04T00:45:00Z'))).toBe('20261230'); // 09:45 KST: not open yet
    expect(lastSessionDate(dates('2027-01-04T01:00:00Z'))).toBe('20270104'); // 10:00 KST
    expect(lastSessionDate(dates('2026-11-19T00:45:00Z'))).toBe('20261118'); // exam day, 09:45 KST
    expect(lastSessionDate(dates('2026-11-19T01:00:00Z'))).toBe('20261119');
    // An exam day an operator added (MARKET_EXAM_DAYS) is read from the sessions given.
    const sessions = new Sessions(cal, ['20261124']);
    expect(lastSessionDate({ ...dates('2026-11-24T00:30:00Z'), sessions })).toBe('20261123');
    expect(lastSessionDate(dates('2026-11-24T00:30:00Z'))).toBe('20261124');
  });

  it('intraday: the last session on the KRX clock; no date on an always-open clock (the current session of the upstream)', () => {
    expect(withDefaultDates('intraday', { interval: 60 }, dates('2026-11-23T23:00:00Z'))).toEqual({ interval: 60, date: '20261123' }); // Tue 08:00 KST
    expect(withDefaultDates('intraday', { interval: 60 }, dates('2026-11-24T03:00:00Z'))).toEqual({ interval: 60, date: '20261124' });
    // The simulator's open clock trades at any hour, a day its own: at 08:00 KST it is not yesterday's session.
    expect(withDefaultDates('intraday', { interval: 60 }, { ...dates('2026-11-23T23:00:00Z'), alwaysOpen: true })).toEqual({ interval: 60 });
    expect(withDefaultDates('intraday', { interval: 60, date: '20261120' }, { ...dates('2026-11-23T23:00:00Z'), alwaysOpen: true })).toEqual({
      interval: 60,
      date: '20261120',
    });
  });

  it('history: to today, 20 bars, from far enough back on the calendar', () => {
    const d = withDefaultDates('history', { period: 'D' }, dates('2026-11-24T03:00:00Z'));
    expect(d).toMatchObject({ to: '20261124', count: 20 });
    expect(cal.tradingDaysBack('20261124', 25)[0]).toBe((d as { from: string }).from);
    expect(withDefaultDates('history', { period: 'D', count: 3 }, dates('2026-11-24T03:00:00Z'))).toMatchObject({ count: 3, from: '20261113' });
  });

  it('shortsell: to today, from count (20) business days back, and no count sent upstream', () => {
    const d = withDefaultDates('shortsell', {}, dates('2026-11-24T03:00:00Z')) as { from: string; to: string };
    expect(d.to).toBe('20261124');
    expect(d.from).toBe(cal.tradingDaysBack('20261124', 20)[0]);
    expect(withDefaultDates('shortsell', { count: 3 }, dates('2026-11-24T03:00:00Z'))).toMatchObject({ from: '20261120', to: '20261124' });
    expect(withDefaultDates('foreignhistory', {}, dates('2026-11-24T03:00:00Z'))).toMatchObject({ to: '20261124', count: 20 });
  });

  it('refuses from after to', () => {
    expect(withDefaultDates('shortsell', { from: '20261125', to: '20261120' }, dates('2026-11-24T03:00:00Z'))).toMatch(/after/);
  });

  it('kstDate is the Korean date', () => {
    expect(kstDate(at('2026-11-24T15:30:00Z'))).toBe('20261125');
  });
});

describe('sessions: when the market opens, and when a closed feed looks again', () => {
  const sessions = new Sessions(cal);
  // Each: the moment (KST), the phase, `opensAt` (the next regular open), `resumesAt` (the next pre-market or after-hours).
  it.each([
    ['2026-11-28T12:00', 'closed', '2026-11-30T09:00', '2026-11-30T08:30'], // a Saturday
    ['2026-11-24T20:00', 'closed', '2026-11-25T09:00', '2026-11-25T08:30'],
    ['2026-11-24T08:29', 'closed', '2026-11-24T09:00', '2026-11-24T08:30'],
    ['2026-11-24T08:30', 'pre', '2026-11-24T09:00', '2026-11-25T08:30'],
    ['2026-11-24T15:35', 'closed', '2026-11-25T09:00', '2026-11-24T15:40'],
    ['2026-12-31T10:00', 'closed', '2027-01-04T10:00', '2027-01-04T09:30'], // the year-end closure; the New Year late open
    ['2026-11-19T09:10', 'closed', '2026-11-19T10:00', '2026-11-19T09:30'], // the exam day
    ['2026-11-19T16:35', 'closed', '2026-11-20T09:00', '2026-11-19T16:40'],
  ])('%s KST: %s, opens %s, looks again at %s', (t, phase, opens, resumes) => {
    const ms = at(`${t}:00+09:00`);
    expect(sessions.phase(ms)).toBe(phase);
    expect(sessions.opensAt(ms)).toBe(at(`${opens}:00+09:00`));
    expect(sessions.resumesAt(ms)).toBe(at(`${resumes}:00+09:00`));
  });
});

describe('provision on the sessions', () => {
  const sessions = new Sessions(cal);
  const lists = endpoint('v2.multiquote.lists').provision;
  const close = endpoint('v2.stocks.closeprice').provision;
  // Each: the moment (KST), whether the 1-second list answers, whether the closing price does.
  it.each([
    ['2026-11-24T10:00', true, false],
    ['2026-11-24T15:35', true, false], // after the close, before the closing data
    ['2026-11-24T16:00', true, true],
    ['2026-11-24T18:00', false, true],
    ['2026-11-24T08:29', false, true], // the day before's close
    ['2026-11-28T12:00', false, true], // a Saturday
    ['2027-01-04T09:10', false, true], // the first trading day, before its late pre-market
    ['2026-11-19T16:00', true, false], // the exam day closes at 16:30
  ])('%s KST: snapshot %s, closing data %s', (t, snapshot, closing) => {
    const ms = at(`${t}:00+09:00`);
    expect(provided(lists, ms, sessions)).toBe(snapshot);
    expect(provided(close, ms, sessions)).toBe(closing);
  });
});

describe('when closing data is next published (the on-demand cache keeps it until then)', () => {
  const sessions = new Sessions(cal);
  const close = { type: 'afterClose', at: '15:40' } as const;
  const batch = { type: 'batch', at: '06:30' } as const;
  const kst = (t: string) => at(`${t}:00+09:00`);
  it.each([
    ['2026-11-27T16:00', close, '2026-11-30T15:40'], // Friday's close stands over the weekend
    ['2026-11-24T10:00', close, '2026-11-24T15:40'],
    ['2026-11-19T16:00', close, '2026-11-19T16:40'], // the exam day closes an hour late
    ['2026-12-30T16:00', close, '2027-01-04T15:40'], // the year-end closure and New Year's Day
    ['2026-11-28T07:00', batch, '2026-11-30T06:30'],
    ['2026-11-24T05:00', batch, '2026-11-24T06:30'],
  ] as const)('%s KST: %o next at %s', (t, p, next) => {
    expect(nextPublication(p, kst(t), sessions)).toBe(kst(next));
  });

  it('sets the cache’s TTL of closing data on the calendar', () => {
    const fri = kst('2026-11-27T16:00');
    const week = 7 * 86_400_000;
    expect(ttlFor(endpoint('v2.stocks.closeprice'), fri, 1000, week, sessions)).toBe(kst('2026-11-30T15:40') - fri);
    expect(ttlFor(endpoint('v2.stocks.closeprice'), fri, 1000, week)).toBe(kst('2026-11-28T15:40') - fri); // without it: the clock's next 15:40
    expect(ttlFor(endpoint('v2.stocks.closeprice'), fri, 1000, 6 * 3600_000, sessions)).toBe(6 * 3600_000);
  });
});
