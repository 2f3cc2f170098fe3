import { kstDate, kstSecondOfDay, nextKstTime } from './calendar.js';
import { REGULAR_HOURS, kstMoment, type Sessions } from './session.js';

/**
 * When the upstream provides an endpoint's data (times are KST), read on
 * the KRX calendar and sessions by src/market/provision.ts (the poller and
 * the simulator share that reading).
 * - `realtime`: refreshed continuously (list snapshots once a second). With
 *   `strict`, the upstream answers 400 "not the provision time" outside the
 *   trading day's sessions (08:30–18:00; later on a late-open day).
 * - `batch`: a new day's data appears at `at` (06:30); 400 before it.
 * - `afterClose`: the previous day's data until `at`; the current day's after
 *   it. 400 between the pre-market (08:30) and `at` on trading days.
 */
export type Provision = { type: 'realtime'; strict: boolean } | { type: 'batch'; at: string } | { type: 'afterClose'; at: string };

/**
 * When the upstream provides an endpoint's data, on the KRX calendar and
 * sessions: the one reading of the provider's provision times that the
 * poller (which endpoint answers a closed market at this hour) and the
 * simulator (when it answers 400 "not the provision time") share. Pure.
 * See docs/UPSTREAM.md and docs/OPERATIONS.md §11.
 *
 * - `realtime`, not strict: at any hour.
 * - `realtime`, strict: during the trading day's sessions only, from the
 *   pre-market to the end of after-hours trading (08:30–18:00; an hour
 *   later on a late-open day); never on a day the market is closed.
 * - `batch`: from its time (06:30) every day.
 * - `afterClose`: the previous trading day's data until the pre-market of a
 *   trading day, none from the pre-market until its time (15:40 for a
 *   closing price; an hour later on the exam day, when the close is), the
 *   day's own after it; the last trading day's all day when the market is
 *   closed.
 */

/** Seconds after KST midnight of `HH:MM`. */
function secsOf(hhmm: string): number {
  return Number(hhmm.slice(0, 2)) * 3600 + Number(hhmm.slice(3, 5)) * 60;
}

/** Whether the upstream provides data of `p` on the KST `date` (`YYYYMMDD`) at `secs` after midnight. */
export function providedAt(p: Provision, date: string, secs: number, sessions: Sessions): boolean {
  if (p.type === 'batch') return secs >= secsOf(p.at);
  const h = sessions.hours(date);
  if (p.type === 'realtime') return !p.strict || (h !== undefined && secs >= h.pre && secs < h.end);
  if (h === undefined || secs < h.pre) return true;
  // A late close (the exam day) moves the closing data with it.
  return secs >= secsOf(p.at) + (h.close - REGULAR_HOURS.close);
}

/** Whether the upstream provides data of `p` at `ms` (epoch). */
export function provided(p: Provision, ms: number, sessions: Sessions): boolean {
  return providedAt(p, kstDate(ms), kstSecondOfDay(ms), sessions);
}

/**
 * The next moment after `ms` at which the upstream publishes new data of a
 * `batch` or `afterClose` provision: its time (06:30, 15:40) on the next
 * trading day that has not reached it yet, a late close moving a closing
 * time with it. Without `sessions`, the next time the KST clock reads it.
 */
export function nextPublication(p: Exclude<Provision, { type: 'realtime' }>, ms: number, sessions?: Sessions): number {
  if (sessions === undefined) return nextKstTime(p.at, ms);
  const at = (date: string): number | undefined => {
    const h = sessions.hours(date);
    if (h === undefined) return undefined;
    return kstMoment(date, secsOf(p.at) + (p.type === 'afterClose' ? h.close - REGULAR_HOURS.close : 0));
  };
  const today = at(kstDate(ms));
  if (today !== undefined && today > ms) return today;
  const next = sessions.calendar.nextTradingDay(kstDate(ms));
  return at(next) ?? nextKstTime(p.at, ms);
}
