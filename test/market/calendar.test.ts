import { describe, expect, it } from 'vitest';
import { KrxCalendar, coveredYear, kstDate, operatorHolidays, parseHolidayList, yearEndClosure } from '../../src/market/calendar.js';
import { lastSessionDate, withDefaultDates } from '../../src/gateway/dates.js';

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
