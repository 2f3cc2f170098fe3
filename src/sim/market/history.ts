import type { KrxCalendar } from '../../market/calendar.js';
import { dayNumber } from '../calendar.js';
import { gauss, unit } from '../random.js';

/**
 * Daily history as a pure function of (series, date): a level that moves
 * slowly around a reference price plus a bounded daily shock. Any day's bar
 * can be computed without computing the days before it, so the history of
 * every issue and index is always available and never stored; days the
 * simulator traded live override the pure bars.
 */

/** One daily (or aggregated) bar. */
export interface DayBar {
  /** `YYYYMMDD` of the (last) trading day of the bar. */
  readonly date: string;
  readonly open: number;
  readonly high: number;
  readonly low: number;
  readonly close: number;
  /** Close of the trading day before the bar. */
  readonly prevClose: number;
  readonly vol: number;
  readonly val: number;
}

/** What defines a series. */
export interface SeriesSpec {
  /** Randomness key (issue or index hash). */
  readonly key: number;
  /** Reference level the series oscillates around. */
  readonly ref: number;
  /** Daily volatility (fraction). */
  readonly sigma: number;
  /** Puts a level onto the series' price grid. */
  readonly round: (p: number) => number;
  /** Typical daily volume. */
  readonly dailyVol: number;
  /** Value per unit of volume; default the bar's average price. */
  readonly valPerVol?: number;
  /** The trading days of the series. */
  readonly calendar: KrxCalendar;
}

/** Bars the live market produced, by date, that replace the pure ones. */
export type Overrides = (date: string) => DayBar | undefined;

const NONE: Overrides = () => undefined;
const CYCLES: readonly (readonly [number, number])[] = [
  [911, 0.16],
  [233, 0.07],
  [57, 0.035],
];

function level(spec: SeriesSpec, day: number): number {
  let x = 0;
  CYCLES.forEach(([period, amp], j) => {
    const phase = unit(spec.key, 0x51, j) * 2 * Math.PI;
    x += amp * (spec.sigma / 0.025) * Math.sin((2 * Math.PI * day) / period + phase);
  });
  // Bounded shock: a daily move can never reach the ±30% limit.
  const shock = Math.max(-3, Math.min(3, gauss(spec.key, 0x52, day)));
  x += 0.7 * spec.sigma * shock;
  return spec.ref * Math.exp(x);
}

/** The close of a series on a trading day. */
export function closeOn(spec: SeriesSpec, date: string, overrides: Overrides = NONE): number {
  return overrides(date)?.close ?? Math.max(spec.round(level(spec, dayNumber(date))), spec.round(0));
}

/** The daily bar of a series on a trading day. */
export function dailyBar(spec: SeriesSpec, date: string, overrides: Overrides = NONE): DayBar {
  const o = overrides(date);
  if (o) return o;
  const day = dayNumber(date);
  const prevClose = closeOn(spec, spec.calendar.prevTradingDay(date), overrides);
  const close = closeOn(spec, date);
  const open = spec.round(prevClose * Math.exp(0.3 * spec.sigma * gauss(spec.key, 0x53, day)));
  const high = spec.round(Math.max(open, close) * Math.exp(Math.abs(0.4 * spec.sigma * gauss(spec.key, 0x54, day))));
  const low = spec.round(Math.min(open, close) * Math.exp(-Math.abs(0.4 * spec.sigma * gauss(spec.key, 0x55, day))));
  const vol = Math.max(1, Math.round(spec.dailyVol * Math.exp(0.45 * gauss(spec.key, 0x56, day) - 0.1)));
  return {
    date,
    open,
    high: Math.max(high, open, close),
    low: Math.min(low, open, close),
    close,
    prevClose,
    vol,
    val: Math.round(vol * (spec.valPerVol ?? (open + high + low + close) / 4)),
  };
}

/** History period: daily, weekly (Monday-based weeks) or monthly. */
export type Period = 'D' | 'W' | 'M';

function periodKey(date: string, period: Period): string {
  if (period === 'D') return date;
  if (period === 'M') return date.slice(0, 6);
  const day = dayNumber(date);
  // 1970-01-01 was a Thursday: day + 3 counts from a Monday.
  return String(Math.floor((day + 3) / 7));
}

/**
 * Bars of `period` over `[from, to]`, newest first, at most `limit`. A bar
 * is dated by the last trading day of its period inside the range.
 */
export function periodBars(spec: SeriesSpec, period: Period, from: string, to: string, limit: number, overrides: Overrides = NONE): DayBar[] {
  const groups: DayBar[][] = [];
  let key = '';
  for (let d = spec.calendar.onOrBefore(to); d >= from; d = spec.calendar.prevTradingDay(d)) {
    const k = periodKey(d, period);
    if (k !== key) {
      if (groups.length === limit) break;
      groups.push([]);
      key = k;
    }
    groups[groups.length - 1]!.push(dailyBar(spec, d, overrides));
  }
  return groups.map((days) => {
    const newest = days[0]!;
    const oldest = days[days.length - 1]!;
    let high = -Infinity;
    let low = Infinity;
    let vol = 0;
    let val = 0;
    for (const b of days) {
      high = Math.max(high, b.high);
      low = Math.min(low, b.low);
      vol += b.vol;
      val += b.val;
    }
    return { date: newest.date, open: oldest.open, high, low, close: newest.close, prevClose: oldest.prevClose, vol, val };
  });
}
