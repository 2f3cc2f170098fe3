import type { Provision } from '../upstream/catalogue.js';
import { fromKst, isTradingDay, nextTradingDay, secsOf, toKst, tradingDayOnOrBefore, type KstTime } from './calendar.js';
import { SESSION, phaseAt, type Phase } from './session.js';

/**
 * The simulator's clock. It maps the wall clock (injectable, for tests) to
 * the KST market time the market follows:
 * - `kst`: the real KST time; sessions and provision times as the exchange
 *   runs them.
 * - `open`: the regular session at any hour, so a demo always moves: market
 *   time starts at 09:30 and advances with the wall clock, wrapping from
 *   15:20 to 09:00 of the next trading day. Provision times are not enforced.
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
}

const OPEN_START = SESSION.open + 1800;
const OPEN_WINDOW = SESSION.closingAuction - SESSION.open;
const FAST_START = secsOf('0825');

/** Maps wall time to market time. */
export class SimClock {
  /** The mode. */
  readonly mode: ClockMode;
  /** Market seconds per wall second (`fast` mode). */
  readonly speed: number;
  private readonly nowFn: () => number;
  private readonly t0: number;
  private readonly anchorDate: string;

  /** A clock; the `open` and `fast` modes start counting now. */
  constructor(opts: ClockOptions = {}) {
    this.mode = opts.mode ?? 'open';
    this.speed = opts.speed ?? 60;
    this.nowFn = opts.now ?? Date.now;
    this.t0 = this.nowFn();
    this.anchorDate = tradingDayOnOrBefore(toKst(this.t0).date);
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
    const pos = OPEN_START - SESSION.open + elapsed / 1000;
    let date = this.anchorDate;
    for (let wraps = Math.floor(pos / OPEN_WINDOW); wraps > 0; wraps--) date = nextTradingDay(date);
    return { date, secs: SESSION.open + (pos % OPEN_WINDOW) };
  }

  /** Market time `ms` wall milliseconds after `t` (for manual ticks). */
  later(t: KstTime, ms: number): KstTime {
    const step = this.mode === 'fast' ? ms * this.speed : ms;
    if (this.mode !== 'open') return toKst(fromKst(t.date, t.secs) + step);
    const secs = t.secs + step / 1000;
    return secs < SESSION.closingAuction ? { date: t.date, secs } : { date: nextTradingDay(t.date), secs: SESSION.open + (secs - SESSION.closingAuction) };
  }

  /** The phase now. */
  phase(): Phase {
    const t = this.marketTime();
    return phaseAt(t.secs, isTradingDay(t.date));
  }

  /** True when the clock answers "not the provision time" (not in `open` mode). */
  get enforcesProvision(): boolean {
    return this.mode !== 'open';
  }
}

/**
 * True when an endpoint's data is not provided at KST time `t`:
 * realtime strict outside 08:30–18:00 on trading days; batch before its
 * time; after-close between 08:30 and its time on trading days.
 */
export function outsideProvision(p: Provision, t: KstTime): boolean {
  const trading = isTradingDay(t.date);
  if (p.type === 'realtime') return p.strict && !(trading && t.secs >= SESSION.preOpen && t.secs < SESSION.end);
  if (p.type === 'batch') return t.secs < secsOf(p.at);
  return trading && t.secs >= SESSION.preOpen && t.secs < secsOf(p.at);
}
