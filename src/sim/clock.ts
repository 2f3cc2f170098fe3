import { KrxCalendar } from '../market/calendar.js';
import { providedAt } from '../market/provision.js';
import { Sessions, phaseOf, type DayHours, type Phase } from '../market/session.js';
import type { Provision } from '../market/provision.js';
import { fromKst, secsOf, toKst, type KstTime } from './calendar.js';

/**
 * The simulator's clock. It maps the wall clock (injectable, for tests) to
 * the KST market time the market follows, on the KRX sessions of src/market
 * (the calendar, the late opens), the same model the bridge polls by:
 * - `kst`: the real KST time; sessions and provision times as the exchange
 *   runs them.
 * - `open`: the regular session at any hour, so a demo always moves: market
 *   time starts half an hour after the open and advances with the wall
 *   clock, wrapping from the closing auction to the open of the next
 *   trading day. Provision times are not enforced.
 * - `fast`: an accelerated trading day from 08:25 KST of the latest trading
 *   day, `speed` market seconds per wall second.
 */

/** Clock mode. */
export type ClockMode = 'open' | 'kst' | 'fast';

/** Options of `SimClock`. */
export interface ClockOptions {
  /** Mode; default `open`. */
  readonly mode?: ClockMode;
  /** Wall clock in epoch milliseconds; default `Date.now`. */
  readonly now?: () => number;
  /** Market seconds per wall second in `fast` mode; default 60. */
  readonly speed?: number;
  /** The KRX sessions (calendar, late opens); default the KRX calendar without operator closures. */
  readonly sessions?: Sessions;
}

/** Seconds after the open at which the `open` clock starts. */
const OPEN_OFFSET = 1800;
const FAST_START = secsOf('0825');

/** Maps wall time to market time. */
export class SimClock {
  /** The mode. */
  readonly mode: ClockMode;
  /** Market seconds per wall second (`fast` mode). */
  readonly speed: number;
  /** The sessions the market trades by. */
  readonly sessions: Sessions;
  private readonly nowFn: () => number;
  private readonly t0: number;
  private readonly anchorDate: string;
  /** `open` mode: the trading day reached so far and how many seconds of the run its window starts at. */
  private openDay: { date: string; from: number };

  /** A clock; the `open` and `fast` modes start counting now. */
  constructor(opts: ClockOptions = {}) {
    this.mode = opts.mode ?? 'open';
    this.speed = opts.speed ?? 60;
    this.nowFn = opts.now ?? Date.now;
    this.sessions = opts.sessions ?? new Sessions(new KrxCalendar());
    this.t0 = this.nowFn();
    this.anchorDate = this.sessions.calendar.onOrBefore(toKst(this.t0).date);
    this.openDay = { date: this.anchorDate, from: -OPEN_OFFSET };
  }

  /** Wall time, epoch milliseconds. */
  wallNow(): number {
    return this.nowFn();
  }

  /** The KST market time now. */
  marketTime(): KstTime {
    const elapsed = Math.max(0, this.nowFn() - this.t0);
    if (this.mode === 'kst') return toKst(this.nowFn());
    if (this.mode === 'fast') return toKst(fromKst(this.anchorDate, FAST_START) + elapsed * this.speed);
    return this.openAt(elapsed / 1000);
  }

  /** Market time `ms` wall milliseconds after `t` (for manual ticks). */
  later(t: KstTime, ms: number): KstTime {
    const step = this.mode === 'fast' ? ms * this.speed : ms;
    if (this.mode !== 'open') return toKst(fromKst(t.date, t.secs) + step);
    const h = this.hoursOf(t.date);
    const secs = t.secs + step / 1000;
    if (secs < h.closingAuction) return { date: t.date, secs };
    const next = this.sessions.calendar.nextTradingDay(t.date);
    return { date: next, secs: this.hoursOf(next).open + (secs - h.closingAuction) };
  }

  /** The phase now (the market's phase names, src/market). */
  phase(): Phase {
    const t = this.marketTime();
    return phaseOf(this.sessions.hours(t.date), t.secs);
  }

  /** True when the clock answers "not the provision time" (not in `open` mode). */
  get enforcesProvision(): boolean {
    return this.mode !== 'open';
  }

  /** True when data of `p` is not provided at market time `t` (the upstream answers 400). */
  outsideProvision(p: Provision, t: KstTime): boolean {
    return !providedAt(p, t.date, t.secs, this.sessions);
  }

  /** `open` mode: the market time `run` wall seconds after the start, walking the trading days' continuous sessions. */
  private openAt(run: number): KstTime {
    // Days already walked are remembered: the clock is read every tick of a long run.
    for (;;) {
      const { date, from } = this.openDay;
      const h = this.hoursOf(date);
      const window = h.closingAuction - h.open;
      if (run < from + window) return { date, secs: h.open + Math.max(0, run - from) };
      this.openDay = { date: this.sessions.calendar.nextTradingDay(date), from: from + window };
    }
  }

  private hoursOf(date: string): DayHours {
    // Only trading days reach here; a calendar gap of over 60 days would not trade at all.
    return this.sessions.hours(date) ?? this.sessions.hours(this.sessions.calendar.onOrBefore(date))!;
  }
}
