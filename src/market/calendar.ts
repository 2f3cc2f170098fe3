import { readFileSync } from 'node:fs';
import * as gazette from '@hyunbinseo/holidays-kr/all';

/**
 * The KRX trading calendar: which days the exchange trades. Pure functions
 * of `YYYYMMDD` dates (KST), over three sources:
 * - Korean public holidays, including substitute and election days, from
 *   `@hyunbinseo/holidays-kr` (it follows the official gazette; each of its
 *   releases adds the next year);
 * - the exchange's own closure: the last business day of December;
 * - the operator's list (`MARKET_HOLIDAYS`), for closures announced at
 *   short notice.
 * For a year the library does not cover yet, only weekends, the year-end
 * closure and the operator's list apply, and `coveredYear` says so (the
 * bridge warns once). See docs/OPERATIONS.md §Calendar.
 */

type Preset = Readonly<Record<string, readonly string[]>>;

/** Public holidays by year (`YYYY` → `YYYY-MM-DD` → names), as the library publishes them. */
const PRESETS: ReadonlyMap<string, Preset> = new Map(
  Object.entries(gazette as unknown as Record<string, Preset>)
    .filter(([k]) => /^y\d{4}$/.test(k))
    .map(([k, v]) => [k.slice(1), v]),
);

/** Why the exchange does not trade on a day, or undefined when it trades. */
export type Closure = 'weekend' | 'holiday' | 'year-end' | 'operator';

/** The years the holiday library covers. */
export function coveredYears(): string[] {
  return [...PRESETS.keys()].sort();
}

/** Whether the holiday library covers `year` (`YYYY`). */
export function coveredYear(year: string): boolean {
  return PRESETS.has(year);
}

/** The public-holiday names of a date, or undefined (none, or a year the library does not cover). */
export function holidayNames(date: string): readonly string[] | undefined {
  return PRESETS.get(date.slice(0, 4))?.[`${date.slice(0, 4)}-${date.slice(4, 6)}-${date.slice(6, 8)}`];
}

/** Epoch ms of 00:00 UTC of a `YYYYMMDD` date. */
function utcMs(date: string): number {
  return Date.UTC(Number(date.slice(0, 4)), Number(date.slice(4, 6)) - 1, Number(date.slice(6, 8)));
}

/** The `YYYYMMDD` date `n` days after `date` (negative: before). */
export function addDays(date: string, n: number): string {
  const d = new Date(utcMs(date) + n * 86_400_000);
  return `${d.getUTCFullYear()}${String(d.getUTCMonth() + 1).padStart(2, '0')}${String(d.getUTCDate()).padStart(2, '0')}`;
}

/** Day of the week of a date, 0 = Sunday. */
export function weekday(date: string): number {
  return new Date(utcMs(date)).getUTCDay();
}

/** Whether a date is a business day of the country: no weekend, no public holiday. */
function businessDay(date: string): boolean {
  const w = weekday(date);
  return w !== 0 && w !== 6 && holidayNames(date) === undefined;
}

/** The year-end closure of `year`: its last business day of December (KRX closes the market on it). */
export function yearEndClosure(year: string): string {
  let d = `${year}1231`;
  while (!businessDay(d)) d = addDays(d, -1);
  return d;
}

/** The KRX calendar with the operator's extra closures. */
export class KrxCalendar {
  private readonly operator: ReadonlySet<string>;
  private readonly warned = new Set<string>();

  /**
   * A calendar closing the market on `holidays` (`YYYYMMDD`) as well;
   * `onUncovered` is told, once per year, of a year the holiday library
   * does not cover (only weekends, the year-end closure and `holidays` apply).
   */
  constructor(
    holidays: Iterable<string> = [],
    private readonly onUncovered?: (year: string) => void,
  ) {
    this.operator = new Set(holidays);
  }

  /** Why the market is closed on `date`, or undefined when it trades. */
  closure(date: string): Closure | undefined {
    const year = date.slice(0, 4);
    if (this.onUncovered !== undefined && !PRESETS.has(year) && !this.warned.has(year)) {
      this.warned.add(year);
      this.onUncovered(year);
    }
    const w = weekday(date);
    if (w === 0 || w === 6) return 'weekend';
    if (this.operator.has(date)) return 'operator';
    if (holidayNames(date) !== undefined) return 'holiday';
    if (date.slice(4) >= '1224' && date === yearEndClosure(date.slice(0, 4))) return 'year-end';
    return undefined;
  }

  /** Whether the market trades on `date`. */
  isTradingDay(date: string): boolean {
    return this.closure(date) === undefined;
  }

  /** The first trading day strictly after `date`. */
  nextTradingDay(date: string): string {
    let d = addDays(date, 1);
    for (let i = 0; i < 60 && !this.isTradingDay(d); i++) d = addDays(d, 1);
    return d;
  }

  /** The last trading day strictly before `date`. */
  prevTradingDay(date: string): string {
    let d = addDays(date, -1);
    for (let i = 0; i < 60 && !this.isTradingDay(d); i++) d = addDays(d, -1);
    return d;
  }

  /** `date` when the market trades on it, else the trading day before it. */
  onOrBefore(date: string): string {
    return this.isTradingDay(date) ? date : this.prevTradingDay(date);
  }

  /** The `n` trading days up to and including `date` (or the last one before it), oldest first. */
  tradingDaysBack(date: string, n: number): string[] {
    const out: string[] = [];
    let d = this.onOrBefore(date);
    while (out.length < n) {
      out.push(d);
      d = this.prevTradingDay(d);
    }
    return out.reverse();
  }

  /** Whether `date` is the first trading day of its year (the market opens an hour late). */
  isFirstOfYear(date: string): boolean {
    return this.isTradingDay(date) && this.prevTradingDay(date).slice(0, 4) !== date.slice(0, 4);
  }
}

const KST_OFFSET_MS = 9 * 3600_000;

/** The KST date (`YYYYMMDD`) of a moment (ms epoch). */
export function kstDate(ms: number): string {
  const d = new Date(ms + KST_OFFSET_MS);
  return `${d.getUTCFullYear()}${String(d.getUTCMonth() + 1).padStart(2, '0')}${String(d.getUTCDate()).padStart(2, '0')}`;
}

/** Seconds since KST midnight of a moment (ms epoch). */
export function kstSecondOfDay(ms: number): number {
  return Math.floor(((ms + KST_OFFSET_MS) % 86_400_000) / 1000);
}

/** Parses `MARKET_HOLIDAYS`-style text: `YYYYMMDD` or `YYYY-MM-DD` dates separated by commas, spaces or lines (`#` comments). */
export function parseHolidayList(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    for (const token of line.replace(/#.*/, '').split(/[\s,]+/)) {
      if (!token) continue;
      const d = token.replace(/-/g, '');
      if (!/^(19|20)\d{2}(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])$/.test(d)) throw new Error(`not a date YYYYMMDD: ${JSON.stringify(token.slice(0, 20))}`);
      out.push(d);
    }
  }
  return out;
}

/**
 * The operator's extra closures from the `MARKET_HOLIDAYS` setting: dates
 * inline, or `@path` for a file of them. Throws (a configuration error at
 * start-up) on a date it cannot read.
 */
export function operatorHolidays(setting: string | undefined): string[] {
  if (setting === undefined || setting.trim() === '') return [];
  const text = setting.startsWith('@') ? readFileSync(setting.slice(1), 'utf8') : setting;
  return parseHolidayList(text);
}

/** The next moment (ms epoch, strictly after `now`) at which the KST clock reads `hhmm` (`HH:MM`). */
export function nextKstTime(hhmm: string, now: number): number {
  const [h, m] = hhmm.split(':').map(Number);
  const kstNow = now + KST_OFFSET_MS;
  const midnight = Math.floor(kstNow / 86_400_000) * 86_400_000;
  let t = midnight + ((h ?? 0) * 3600 + (m ?? 0) * 60) * 1000;
  if (t <= kstNow) t += 86_400_000;
  return t - KST_OFFSET_MS;
}
