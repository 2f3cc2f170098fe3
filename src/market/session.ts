import { kstDate, kstSecondOfDay, type KrxCalendar } from './calendar.js';

/**
 * The KRX trading day's sessions (KST) and the phase of the market at any
 * moment, on the KRX calendar: weekends, holidays and the year-end closure
 * have none; the first trading day of the year opens an hour late; on the
 * college entrance exam day every session starts and ends an hour late.
 * One model for the poller, the on-demand cache, the pacer and the
 * simulator. See docs/OPERATIONS.md §Calendar.
 */

/** The market's phase. `closed` covers nights, closed days, and 15:30–15:40 between the close and after-hours. */
export type Phase = 'closed' | 'pre' | 'regular' | 'closing_auction' | 'after_close' | 'single_price';

/** Session boundaries of one trading day, seconds after KST midnight. */
export interface DayHours {
  /** Pre-market (orders, the opening auction) starts. */
  readonly pre: number;
  /** Continuous trading starts. */
  readonly open: number;
  /** The closing auction starts. */
  readonly closingAuction: number;
  /** The regular session ends. */
  readonly close: number;
  /** After-hours trading at the closing price starts. */
  readonly afterClose: number;
  /** After-hours single-price trading starts. */
  readonly single: number;
  /** The day's sessions end. */
  readonly end: number;
}

const H = 3600;
const M = 60;

/** The usual day. */
export const REGULAR_HOURS: DayHours = {
  pre: 8 * H + 30 * M,
  open: 9 * H,
  closingAuction: 15 * H + 20 * M,
  close: 15 * H + 30 * M,
  afterClose: 15 * H + 40 * M,
  single: 16 * H,
  end: 18 * H,
};

const shift = (h: DayHours, s: number, keys: readonly (keyof DayHours)[]): DayHours => {
  const out = { ...h };
  for (const k of keys) out[k] += s;
  return out;
};

/** The first trading day of a year: pre-market and the open an hour late, the close as usual. */
export const NEW_YEAR_HOURS: DayHours = shift(REGULAR_HOURS, H, ['pre', 'open']);
/** The college entrance exam day: every session an hour late. */
export const EXAM_DAY_HOURS: DayHours = shift(REGULAR_HOURS, H, ['pre', 'open', 'closingAuction', 'close', 'afterClose', 'single', 'end']);

/**
 * The college entrance exam (수능) days, as the ministry announced them
 * (the exchange then opens an hour late). The date of a coming year is
 * announced the year before; an operator adds it with `MARKET_EXAM_DAYS`.
 */
export const EXAM_DAYS: readonly string[] = ['20231116', '20241114', '20251113', '20261119'];

/** The session hours of `date`, or undefined when the market is closed that day. */
export function hoursOn(calendar: KrxCalendar, date: string, examDays: ReadonlySet<string> = DEFAULT_EXAM_DAYS): DayHours | undefined {
  if (!calendar.isTradingDay(date)) return undefined;
  if (examDays.has(date)) return EXAM_DAY_HOURS;
  if (calendar.isFirstOfYear(date)) return NEW_YEAR_HOURS;
  return REGULAR_HOURS;
}

const DEFAULT_EXAM_DAYS: ReadonlySet<string> = new Set(EXAM_DAYS);

/** The phase at `secs` after midnight of a day with `hours` (undefined: a closed day). */
export function phaseOf(hours: DayHours | undefined, secs: number): Phase {
  if (hours === undefined || secs < hours.pre || secs >= hours.end) return 'closed';
  if (secs < hours.open) return 'pre';
  if (secs < hours.closingAuction) return 'regular';
  if (secs < hours.close) return 'closing_auction';
  if (secs < hours.afterClose) return 'closed';
  if (secs < hours.single) return 'after_close';
  return 'single_price';
}

/** Epoch ms of `secs` after KST midnight of `date`. */
export function kstMoment(date: string, secs: number): number {
  return Date.UTC(Number(date.slice(0, 4)), Number(date.slice(4, 6)) - 1, Number(date.slice(6, 8))) - 9 * H * 1000 + secs * 1000;
}

/** The KRX session schedule on a calendar. */
export class Sessions {
  private readonly exam: ReadonlySet<string>;

  /** Sessions of `calendar`, with the exam days `examDays` (default EXAM_DAYS). */
  constructor(
    readonly calendar: KrxCalendar,
    examDays: Iterable<string> = EXAM_DAYS,
  ) {
    this.exam = new Set(examDays);
  }

  /** The hours of `date`, or undefined when the market is closed. */
  hours(date: string): DayHours | undefined {
    return hoursOn(this.calendar, date, this.exam);
  }

  /** The phase at `ms` (epoch). */
  phase(ms: number): Phase {
    return phaseOf(this.hours(kstDate(ms)), kstSecondOfDay(ms));
  }

  /**
   * When the next regular session opens (ms epoch; `ms` itself if it opens
   * then): continuous trading at 09:00 KST, or 10:00 on the first trading
   * day of the year and the exam day. What a closed market's `opensAt` says.
   */
  opensAt(ms: number): number {
    const date = kstDate(ms);
    const h = this.hours(date);
    if (h !== undefined && kstSecondOfDay(ms) < h.open) return kstMoment(date, h.open);
    const next = this.calendar.nextTradingDay(date);
    return kstMoment(next, this.hours(next)!.open);
  }

  /**
   * The next moment (at or after `ms`) the market leaves `closed`: the
   * pre-market (08:30, an hour later on a late-open day), or after-hours
   * trading at 15:40 when `ms` falls between the close and it. A closed feed
   * looks again then; it is earlier than `opensAt`.
   */
  resumesAt(ms: number): number {
    const date = kstDate(ms);
    const secs = kstSecondOfDay(ms);
    const h = this.hours(date);
    if (h !== undefined) {
      if (secs < h.pre) return kstMoment(date, h.pre);
      if (secs >= h.close && secs < h.afterClose) return kstMoment(date, h.afterClose);
    }
    const next = this.calendar.nextTradingDay(date);
    return kstMoment(next, this.hours(next)!.pre);
  }

  /**
   * When the market last went to `closed` (ms epoch), if it is closed at
   * `ms`: the trading day's end (18:00, an hour later on the exam day), the
   * close (15:30) before after-hours, or, before the pre-market and on closed
   * days, the end of the last trading day. A row seen before it is not the
   * close it is the last state of.
   */
  lastClose(ms: number): number | undefined {
    if (this.phase(ms) !== 'closed') return undefined;
    const date = kstDate(ms);
    const secs = kstSecondOfDay(ms);
    const h = this.hours(date);
    if (h !== undefined && secs >= h.end) return kstMoment(date, h.end);
    if (h !== undefined && secs >= h.close && secs < h.afterClose) return kstMoment(date, h.close);
    const prev = this.calendar.prevTradingDay(date);
    return kstMoment(prev, this.hours(prev)!.end);
  }

  /**
   * How long the market is not `closed` between `from` and `to` (ms epoch),
   * ms: the time a feed polls in that span (pre-market to the close, then
   * after-hours to the day's end, on each trading day).
   */
  openMs(from: number, to: number): number {
    let total = 0;
    let date = kstDate(from);
    // KST keeps no summer time: a day is 24 h. A budget day spans two calendar days; the cap only stops a runaway.
    for (let day = kstMoment(date, 0), i = 0; day < to && i < 400; i++) {
      const h = this.hours(date);
      if (h !== undefined) {
        for (const [a, b] of [
          [h.pre, h.close],
          [h.afterClose, h.end],
        ] as const) {
          const start = Math.max(from, kstMoment(date, a));
          const end = Math.min(to, kstMoment(date, b));
          if (end > start) total += end - start;
        }
      }
      day += 86_400_000;
      date = kstDate(day);
    }
    return total;
  }

  /** When the trading day's sessions end (ms epoch) if `ms` falls within them, else undefined. */
  dayEnd(ms: number): number | undefined {
    const date = kstDate(ms);
    const h = this.hours(date);
    if (h === undefined) return undefined;
    const secs = kstSecondOfDay(ms);
    return secs >= h.pre && secs < h.end ? kstMoment(date, h.end) : undefined;
  }
}
