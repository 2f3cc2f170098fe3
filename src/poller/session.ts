/**
 * The KRX session clock in KST (UTC+9, no daylight saving). Pure functions of
 * a millisecond timestamp. Holidays other than weekends are not known here;
 * on such days the upstream's own answers (400 "not provided", no changes)
 * keep the poller slow.
 */

/** Trading session at a moment. */
export type Session = 'closed' | 'pre' | 'regular' | 'closing_auction' | 'after_close' | 'single_price';

const KST_OFFSET_MS = 9 * 3600_000;
const DAY_MS = 86_400_000;

/** KST calendar parts of a moment. */
export interface KstParts {
  /** `YYYYMMDD`. */
  readonly date: string;
  /** Seconds since KST midnight. */
  readonly secondOfDay: number;
  /** 0 Sunday … 6 Saturday. */
  readonly weekday: number;
}

/** KST date, time of day and weekday of `now` (ms epoch). */
export function kstParts(now: number): KstParts {
  const d = new Date(now + KST_OFFSET_MS);
  const date = `${d.getUTCFullYear()}${String(d.getUTCMonth() + 1).padStart(2, '0')}${String(d.getUTCDate()).padStart(2, '0')}`;
  const secondOfDay = d.getUTCHours() * 3600 + d.getUTCMinutes() * 60 + d.getUTCSeconds();
  return { date, secondOfDay, weekday: d.getUTCDay() };
}

/** Seconds since midnight of an `HH:MM` time. */
export function hhmmToSeconds(hhmm: string): number {
  const [h, m] = hhmm.split(':').map(Number);
  return (h ?? 0) * 3600 + (m ?? 0) * 60;
}

const PRE = hhmmToSeconds('08:30');
const OPEN = hhmmToSeconds('09:00');
const CLOSING = hhmmToSeconds('15:20');
const CLOSE = hhmmToSeconds('15:30');
const AFTER = hhmmToSeconds('15:40');
const SINGLE = hhmmToSeconds('16:00');
const END = hhmmToSeconds('18:00');

/** Whether `now` falls on a weekday (KST). */
export function isTradingDay(now: number): boolean {
  const w = kstParts(now).weekday;
  return w >= 1 && w <= 5;
}

/** The session at `now`. 15:30–15:40 (between the close and after-hours) counts as closed. */
export function sessionAt(now: number): Session {
  const p = kstParts(now);
  if (p.weekday === 0 || p.weekday === 6) return 'closed';
  const s = p.secondOfDay;
  if (s < PRE) return 'closed';
  if (s < OPEN) return 'pre';
  if (s < CLOSING) return 'regular';
  if (s < CLOSE) return 'closing_auction';
  if (s < AFTER) return 'closed';
  if (s < SINGLE) return 'after_close';
  if (s < END) return 'single_price';
  return 'closed';
}

/** The next moment (ms epoch, strictly after `now`) at which the KST clock reads `hhmm`. */
export function nextKstTime(hhmm: string, now: number): number {
  const kstNow = now + KST_OFFSET_MS;
  const midnight = Math.floor(kstNow / DAY_MS) * DAY_MS;
  let t = midnight + hhmmToSeconds(hhmm) * 1000;
  if (t <= kstNow) t += DAY_MS;
  return t - KST_OFFSET_MS;
}

/** The end of today's sessions (18:00 KST) if still ahead, else undefined. */
export function sessionEnd(now: number): number | undefined {
  const p = kstParts(now);
  if (p.weekday === 0 || p.weekday === 6 || p.secondOfDay >= END) return undefined;
  return now + (END - p.secondOfDay) * 1000 - (now % 1000);
}

/**
 * The bridge's view of the market clock: `kst` follows the real schedule;
 * `always` treats the market as open at every hour (for the simulator's
 * `open` clock and for tests).
 */
export interface MarketClock {
  /** Current time, ms epoch. */
  now(): number;
  /** Session now. */
  session(): Session;
  /** When the current trading window (the sessions of today) ends, ms epoch; undefined when closed. */
  windowEnd(): number | undefined;
}

/** A market clock following KST sessions, or always open. */
export function marketClock(mode: 'kst' | 'always', now: () => number = Date.now): MarketClock {
  if (mode === 'always') {
    return { now, session: () => 'regular', windowEnd: () => undefined };
  }
  return {
    now,
    session: () => sessionAt(now()),
    windowEnd: () => (sessionAt(now()) === 'closed' ? undefined : sessionEnd(now())),
  };
}
