import type { KrxCalendar } from '../market/calendar.js';

export { addDays, weekday } from '../market/calendar.js';

/**
 * Dates and KST wall times for the simulator. Pure functions over `YYYYMMDD`
 * strings; no time zone library: KST is UTC+9 all year. Which days trade is
 * the one KRX calendar of src/market, handed in by whoever holds it (the
 * simulator's market).
 */

/** Milliseconds KST is ahead of UTC. */
export const KST_OFFSET_MS = 9 * 3600_000;

/** A moment in KST: the date and the seconds since local midnight. */
export interface KstTime {
  /** `YYYYMMDD`. */
  readonly date: string;
  /** Seconds since 00:00 KST (fractional). */
  readonly secs: number;
}

/** Fixed-date public holidays of other countries (MMDD), for the holiday service; Korea's come from the KRX calendar. */
export const NATION_HOLIDAYS: Readonly<Record<string, readonly string[]>> = {
  US: ['0101', '0619', '0704', '1225'],
  DE: ['0101', '0501', '1003', '1224', '1225', '1226', '1231'],
  GB: ['0101', '1225', '1226'],
  JP: ['0101', '0102', '0103', '0211', '0223', '0429', '0503', '0504', '0505', '1103', '1123', '1231'],
  CN: ['0101', '0501', '0502', '0503', '1001', '1002', '1003', '1004', '1005'],
  TW: ['0101', '0228', '0404', '0405', '1010'],
  VN: ['0101', '0430', '0501', '0902'],
  IN: ['0126', '0815', '1002', '1225'],
  SG: ['0101', '0501', '0809', '1225'],
  AU: ['0101', '0126', '0425', '1225', '1226'],
  EU: ['0101', '0501', '1224', '1225', '1226', '1231'],
};

/** The KST date and time of an epoch millisecond value. */
export function toKst(epochMs: number): KstTime {
  const d = new Date(epochMs + KST_OFFSET_MS);
  const date = `${d.getUTCFullYear()}${pad2(d.getUTCMonth() + 1)}${pad2(d.getUTCDate())}`;
  const secs = d.getUTCHours() * 3600 + d.getUTCMinutes() * 60 + d.getUTCSeconds() + d.getUTCMilliseconds() / 1000;
  return { date, secs };
}

/** Epoch milliseconds of a KST date at `secs` seconds after midnight. */
export function fromKst(date: string, secs: number): number {
  return dateToUtcMs(date) - KST_OFFSET_MS + Math.round(secs * 1000);
}

function pad2(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

/** Epoch milliseconds of 00:00 UTC on a `YYYYMMDD` date. */
export function dateToUtcMs(date: string): number {
  return Date.UTC(Number(date.slice(0, 4)), Number(date.slice(4, 6)) - 1, Number(date.slice(6, 8)));
}

/** Days since 1970-01-01 of a `YYYYMMDD` date. */
export function dayNumber(date: string): number {
  return Math.round(dateToUtcMs(date) / 86_400_000);
}

/** The `YYYYMMDD` date of a day number. */
export function dateOfDay(day: number): string {
  const d = new Date(day * 86_400_000);
  return `${d.getUTCFullYear()}${pad2(d.getUTCMonth() + 1)}${pad2(d.getUTCDate())}`;
}

/** True on a holiday of the given country: for Korea, a weekday the exchange is closed on `calendar` (public holiday, year-end closure, an operator's closure). */
export function isHoliday(calendar: KrxCalendar, date: string, nation = 'KR'): boolean {
  if (nation === 'KR') {
    const c = calendar.closure(date);
    return c !== undefined && c !== 'weekend';
  }
  return (NATION_HOLIDAYS[nation] ?? []).includes(date.slice(4));
}

/** True when `date` is a real `YYYYMMDD` date (not 20250230). */
export function isDate(date: string): boolean {
  return /^\d{8}$/.test(date) && dateOfDay(dayNumber(date)) === date;
}

/** Seconds after midnight of `HH:MM`, `HHMM` or `HHMMSS`. */
export function secsOf(hhmm: string): number {
  const s = hhmm.replace(/:/g, '');
  return Number(s.slice(0, 2)) * 3600 + Number(s.slice(2, 4)) * 60 + (s.length >= 6 ? Number(s.slice(4, 6)) : 0);
}

/** `HHMMSSmm` as a number (no leading zero), the provider's time format. */
export function timeNumber(secs: number): number {
  const cs = Math.floor(Math.round(secs * 1000) / 10);
  const h = Math.floor(cs / 360_000);
  const m = Math.floor((cs % 360_000) / 6000);
  const s = Math.floor((cs % 6000) / 100);
  return ((h * 100 + m) * 100 + s) * 100 + (cs % 100);
}

/** `HHMMSS` with leading zero, as the multi-quote list snapshots send it. */
export function timeHHMMSS(secs: number): string {
  const t = Math.floor(secs);
  return `${pad2(Math.floor(t / 3600))}${pad2(Math.floor((t % 3600) / 60))}${pad2(t % 60)}`;
}

/** Trading days of `calendar` in `[from, to]`, newest first, at most `limit`. */
export function tradingDaysBack(calendar: KrxCalendar, to: string, limit: number, from = '19000101'): string[] {
  const out: string[] = [];
  let d = calendar.onOrBefore(to);
  while (out.length < limit && d >= from) {
    out.push(d);
    d = calendar.prevTradingDay(d);
  }
  return out;
}
