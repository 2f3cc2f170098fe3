import { addDays, kstDate, kstSecondOfDay, type KrxCalendar } from '../market/calendar.js';
import { hoursOn, type Sessions } from '../market/session.js';
import type { Resource } from '../protocol/constants.js';

/**
 * Default dates of the lookups that take a date range or a day, when the
 * client leaves them out (docs/PROTOCOL.md §get): "the last 20 days" and
 * "today's bars" need no dates. Pure functions of the clock and the KRX
 * calendar.
 */

/** What the defaults need: the calendar and the time. */
export interface LookupDates {
  readonly calendar: KrxCalendar;
  /** The sessions' hours on it (the late opens); default those of `calendar` with the known exam days. */
  readonly sessions?: Sessions;
  /** Clock, ms epoch. */
  now(): number;
  /**
   * The market is treated as open at any hour (`MARKET_CLOCK=always`, the
   * built-in simulator's default): its session is the upstream's current
   * one, whatever the date, so `intraday` asks for no date.
   */
  readonly alwaysOpen?: boolean;
}

/** Bars or rows a dated lookup returns when the client gives no `count` and no `from`. */
export const DEFAULT_COUNT = 20;

/**
 * The session the "today" of a lookup means: today once the market opened
 * on a trading day (09:00 KST, 10:00 on a late-open day), else the last
 * trading day.
 */
export function lastSessionDate(d: LookupDates): string {
  const now = d.now();
  const today = kstDate(now);
  const hours = d.sessions?.hours(today) ?? hoursOn(d.calendar, today);
  if (hours !== undefined && kstSecondOfDay(now) >= hours.open) return today;
  return d.calendar.prevTradingDay(today);
}

/** Enough calendar days before `to` to hold `count` bars of `period`, with a margin for a bar the upstream has not closed yet. */
function rangeStart(d: LookupDates, period: unknown, to: string, count: number): string {
  if (period === 'W') return addDays(to, -7 * (count + 2));
  if (period === 'M') return addDays(to, -31 * (count + 2));
  return d.calendar.tradingDaysBack(to, count + 5)[0]!;
}

/**
 * The friendly parameters of `resource` with their dates filled in:
 * - `history`, `foreignhistory`: `to` today, `count` 20, `from` far enough
 *   back for `count` bars (the upstream returns the newest `count`);
 * - `shortsell`: `to` today, `from` `count` (20) business days back (the
 *   upstream takes no count; `count` only places `from`);
 * - `intraday`: `date` today, or the last session while the market is closed;
 *   none on an always-open clock (the upstream's current session).
 * Returns an error text when `from` is after `to`.
 */
export function withDefaultDates(resource: Resource, p: Record<string, unknown>, d: LookupDates): Record<string, unknown> | string {
  const today = kstDate(d.now());
  const out = { ...p };
  if (resource === 'history' || resource === 'foreignhistory') {
    out.to ??= today;
    if (out.from === undefined) {
      out.count ??= DEFAULT_COUNT;
      out.from = rangeStart(d, out.period, out.to as string, out.count as number);
    }
  } else if (resource === 'shortsell') {
    out.to ??= today;
    if (out.from === undefined) out.from = d.calendar.tradingDaysBack(out.to as string, (out.count as number | undefined) ?? DEFAULT_COUNT)[0];
  } else if (resource === 'intraday' && out.date === undefined && d.alwaysOpen !== true) out.date = lastSessionDate(d);
  if (typeof out.from === 'string' && typeof out.to === 'string' && out.from > out.to) {
    return `from (${out.from}) is after to (${out.to})`;
  }
  return out;
}
