import type { DayHours } from '../../market/session.js';
import { dayNumber } from '../calendar.js';
import { gauss, unit } from '../random.js';
import { BarSeries, type Bar } from './bars.js';
import type { DayBar } from './history.js';

/**
 * Intraday bars of a past trading day, synthesised from its daily bar: a
 * price path that starts at the open, reaches the high and the low (which
 * one first is a hash of the series and the date), ends at the close and
 * never leaves [low, high]; volumes follow a U-shaped profile and add up to
 * the daily volume and value. A pure function of (daily bar, hours, key):
 * the same day always gives the same bars, and nothing is stored.
 */

/** How a series' levels sit on its price grid. */
export interface PriceGrid {
  /** The nearest grid level to `p`. */
  round(p: number): number;
  /** The grid level just above grid level `p`. */
  up(p: number): number;
  /** The grid level just below grid level `p`. */
  down(p: number): number;
}

/** Options of `dayPathBars`. */
export interface DayPathOptions {
  /** Randomness key of the series (issue, index or contract hash). */
  readonly key: number;
  readonly grid: PriceGrid;
  /** True when the level prints without trades (an index): steps with no volume still make bars. */
  readonly idle?: boolean;
}

/** Seconds between two points of the path. */
const PATH_STEP = 5;
/** Share of the day's volume traded in the closing auction. */
const CLOSING_SHARE = 0.06;
/** Deviation of the path from its straight legs, as a fraction of the day's range over the whole session. */
const WANDER = 0.5;

/** One point of the path: a trade (or an index print) at `secs`. */
interface Point {
  readonly secs: number;
  price: number;
  qty: number;
  val: number;
}

/**
 * Times of the path's points on a day of `hours`: every `PATH_STEP` seconds
 * of continuous trading (from the open, before the closing auction), then
 * the closing auction at the close.
 */
function pointTimes(hours: DayHours): number[] {
  const out: number[] = [];
  for (let t = hours.open; t < hours.closingAuction; t += PATH_STEP) out.push(t);
  out.push(hours.close);
  return out;
}

/** A waypoint: the path is at `price` at point `at`. */
interface Waypoint {
  readonly at: number;
  readonly price: number;
}

/**
 * Where the path reaches its extremes, `first` before `second`: an extreme
 * that is the open is first, at point 0; one that is the close is second,
 * at the last point; otherwise a hash of key and day orders them and
 * places them in between.
 */
function extremes(day: DayBar, n: number, key: number, d: number): { first: Waypoint; second: Waypoint } {
  const { open, high, low, close } = day;
  const highFirst = open === high ? true : open === low ? false : close === high ? false : close === low ? true : unit(key, d, 0xa1) < 0.5;
  const [p1, p2] = highFirst ? [high, low] : [low, high];
  const inner = n - 2;
  const pick = (salt: number) => 1 + Math.floor(unit(key, d, salt) * inner);
  let at1 = p1 === open ? 0 : pick(0xa2);
  let at2 = p2 === close ? n - 1 : pick(0xa3);
  if (at1 !== 0 && at2 !== n - 1) {
    if (at1 === at2) at2 = at1 < n - 2 ? at1 + 1 : at1 - 1;
    if (at2 < at1) [at1, at2] = [at2, at1];
  }
  return { first: { at: at1, price: p1 }, second: { at: at2, price: p2 } };
}

/** Prices of the path: Brownian bridges between the waypoints, on the grid, inside [low, high]. */
function prices(day: DayBar, n: number, o: DayPathOptions, d: number, first: Waypoint, second: Waypoint): number[] {
  const legs: Waypoint[] = [{ at: 0, price: day.open }, first, second, { at: n - 1, price: day.close }];
  const sigma = (WANDER * (day.high - day.low)) / Math.sqrt(n);
  const out = new Array<number>(n);
  out[0] = day.open;
  for (let l = 1; l < legs.length; l++) {
    const a = legs[l - 1]!;
    const b = legs[l]!;
    const len = b.at - a.at;
    if (len <= 0) continue;
    const walk = new Array<number>(len + 1);
    walk[0] = 0;
    for (let j = 1; j <= len; j++) walk[j] = walk[j - 1]! + gauss(o.key, d, a.at + j, 0xa4);
    for (let j = 1; j <= len; j++) {
      const f = j / len;
      const raw = a.price + (b.price - a.price) * f + sigma * (walk[j]! - f * walk[len]!);
      out[a.at + j] = Math.min(day.high, Math.max(day.low, o.grid.round(raw)));
    }
  }
  // The second extreme is not touched before its waypoint, so the first one is reached first.
  if (day.high > day.low) {
    const inward = second.price === day.low ? o.grid.up : o.grid.down;
    for (let i = 0; i < second.at; i++) if (out[i] === second.price) out[i] = inward(second.price);
  }
  return out;
}

/** Relative trading intensity at `u` (0 the open, 1 the closing auction): heavy at the open, light at midday, rising into the close. */
function profile(u: number): number {
  return 0.6 + 2.4 * Math.exp(-u / 0.05) + 0.9 * Math.exp(-(1 - u) / 0.07);
}

/** Splits `total` into integers proportional to `weights` (cumulative rounding: they add up to `total` exactly). */
export function apportion(total: number, weights: readonly number[]): number[] {
  const sum = weights.reduce((a, w) => a + w, 0);
  const out = new Array<number>(weights.length).fill(0);
  if (sum <= 0) {
    if (out.length > 0) out[out.length - 1] = total;
    return out;
  }
  let acc = 0;
  let done = 0;
  weights.forEach((w, i) => {
    acc += w;
    const upTo = Math.round((total * acc) / sum);
    out[i] = upTo - done;
    done = upTo;
  });
  return out;
}

/** Quantities per point: the daily volume along the profile, one share at least at each waypoint when there are enough. */
function quantities(day: DayBar, n: number, key: number, d: number, waypoints: ReadonlySet<number>): number[] {
  const weights = new Array<number>(n);
  let cont = 0;
  for (let i = 0; i < n - 1; i++) {
    weights[i] = profile(i / (n - 1)) * Math.exp(0.7 * gauss(key, d, i, 0xa5) - 0.245);
    cont += weights[i]!;
  }
  weights[n - 1] = (cont * CLOSING_SHARE) / (1 - CLOSING_SHARE);
  const reserve = day.vol >= waypoints.size ? 1 : 0;
  const qty = apportion(day.vol - reserve * waypoints.size, weights);
  for (const i of waypoints) qty[i]! += reserve;
  return qty;
}

/**
 * The bars of `cycle` seconds of a past day whose daily bar is `day` and
 * whose sessions are `hours`, oldest first, labelled by the end of their
 * interval like live bars. Points run every `PATH_STEP` seconds from the
 * open to the closing auction, then the close; no bars before the open.
 * Empty when the day had no trades (a halt) and the series is not `idle`.
 */
export function dayPathBars(day: DayBar, hours: DayHours, cycle: number, o: DayPathOptions): readonly Bar[] {
  if (day.vol <= 0 && !o.idle) return [];
  const d = dayNumber(day.date);
  const times = pointTimes(hours);
  const n = times.length;
  const { first, second } = extremes(day, n, o.key, d);
  const price = prices(day, n, o, d, first, second);
  const waypoints = new Set([0, first.at, second.at, n - 1]);
  const qty = quantities(day, n, o.key, d, waypoints);
  const points: Point[] = [];
  times.forEach((secs, i) => {
    if (qty[i]! > 0 || o.idle || waypoints.has(i)) points.push({ secs, price: price[i]!, qty: qty[i]!, val: 0 });
  });
  const vals = apportion(
    day.val,
    points.map((p) => p.price * p.qty),
  );
  points.forEach((p, i) => (p.val = vals[i]!));
  const series = new BarSeries(cycle);
  let accVol = 0;
  let accVal = 0;
  for (const p of points) {
    accVol += p.qty;
    accVal += p.val;
    series.add(p.secs, p.price, p.qty, p.val, accVol, accVal);
  }
  return series.bars();
}
