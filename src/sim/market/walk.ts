import { gauss, unit } from '../random.js';
import { floorToGrid, priceLimits, roundToGrid, tickUp, type Grid } from '../ticks.js';

/**
 * One issue's trading day as a pure step function: the same day parameters
 * and the same steps always give the same trades. That lets the market
 * replay an issue's day to build its intraday bars instead of storing them.
 */

/** 09:00 in seconds after midnight, when the fair price starts to move. */
const OPEN_SECS = 32_400;

/** Seconds of the continuous session (09:00–15:20), for volume rates. */
export const CONTINUOUS_SECONDS = 22_800;

/** What kind of market event a step is. */
export type StepKind = 'cont' | 'close' | 'atclose' | 'single';

/** One market step: every issue may trade once in it. */
export interface Step {
  /** Step number within the session day (0-based). */
  readonly k: number;
  /** KST seconds after midnight. */
  readonly secs: number;
  /** Seconds since the previous step of the same kind (the time it covers). */
  readonly dt: number;
  readonly kind: StepKind;
}

/** Fixed facts of one issue for one session day. */
export interface DayParams {
  readonly grid: Grid;
  /** Base price: the previous close. */
  readonly base: number;
  readonly upper: number;
  readonly lower: number;
  /** Log drift per second (large for the day's limit runners). */
  readonly drift: number;
  /** Log volatility per square-root second. */
  readonly sigmaSec: number;
  /** Trades per second. */
  readonly rate: number;
  /** Shares per second of continuous trading. */
  readonly volPerSec: number;
  readonly halted: boolean;
  /** Randomness key of the issue on this day. */
  readonly key: number;
}

/** Live state of one issue during a session day. */
export interface Live {
  /** Latent fair price the quotes follow. */
  fair: number;
  /** Seconds of the last fair-price update. */
  fairSecs: number;
  /** Best bid and ask (0 when that side is empty at a price limit). */
  bid: number;
  ask: number;
  /** Last trade price; the base price before the first trade. */
  last: number;
  /** Open, high, low of the regular session; 0 before the first trade. */
  open: number;
  high: number;
  low: number;
  /** Cumulative volume (shares) and value (KRW). */
  vol: number;
  val: number;
  /** Quantity and side (1 sell, 2 buy) of the last trade. */
  trdvol: number;
  side: number;
  /** Time of the last trade (`HHMMSSmm` seconds), 0 before the first. */
  trdSecs: number;
  trades: number;
  /** After-hours single-price high, low, last (0 before the first such trade). */
  ahtHigh: number;
  ahtLow: number;
  ahtLast: number;
}

/** Receives each trade of a replay. */
export type TradeSink = (secs: number, price: number, qty: number) => void;

/** The parameters of an issue for a day. */
export function dayParams(p: {
  grid: Grid;
  base: number;
  sigma: number;
  rate: number;
  dailyVol: number;
  halted: boolean;
  runner: number;
  key: number;
}): DayParams {
  const { upper, lower } = priceLimits(p.grid, p.base);
  // A limit runner drifts ~40% over the session, so it meets its limit around midday.
  const drift = p.runner === 0 ? 0 : (p.runner * 0.4) / CONTINUOUS_SECONDS;
  return {
    grid: p.grid,
    base: p.base,
    upper,
    lower,
    drift,
    sigmaSec: (p.sigma * 1.6) / Math.sqrt(CONTINUOUS_SECONDS),
    rate: p.rate,
    volPerSec: p.dailyVol / CONTINUOUS_SECONDS,
    halted: p.halted,
    key: p.key,
  };
}

/** The state of an issue at the start of its day, whose continuous trading opens at `openSecs` after midnight (default 09:00). */
export function initialLive(p: DayParams, openSecs = OPEN_SECS): Live {
  const live: Live = {
    fair: p.base,
    fairSecs: openSecs,
    bid: 0,
    ask: 0,
    last: p.base,
    open: 0,
    high: 0,
    low: 0,
    vol: 0,
    val: 0,
    trdvol: 0,
    side: 0,
    trdSecs: 0,
    trades: 0,
    ahtHigh: 0,
    ahtLow: 0,
    ahtLast: 0,
  };
  if (!p.halted) quote(p, live);
  return live;
}

function quote(p: DayParams, s: Live): void {
  if (s.fair >= p.upper) {
    s.bid = p.upper;
    s.ask = 0;
  } else if (s.fair <= p.lower) {
    s.bid = 0;
    s.ask = p.lower;
  } else {
    s.bid = Math.max(p.lower, floorToGrid(p.grid, s.fair));
    const up = tickUp(p.grid, s.bid);
    s.ask = up > p.upper ? 0 : up;
  }
}

function record(s: Live, price: number, qty: number, side: number, secs: number, sink?: TradeSink): void {
  if (s.trades === 0 || s.open === 0) {
    s.open = price;
    s.high = price;
    s.low = price;
  }
  s.high = Math.max(s.high, price);
  s.low = Math.min(s.low, price);
  s.last = price;
  s.vol += qty;
  s.val += price * qty;
  s.trdvol = qty;
  s.side = side;
  s.trdSecs = secs;
  s.trades++;
  sink?.(secs, price, qty);
}

function quantity(p: DayParams, step: Step, pTrade: number, scale: number): number {
  const mean = (p.volPerSec * step.dt * scale) / Math.max(pTrade, 1e-9);
  return Math.max(1, Math.round(mean * Math.exp(0.8 * gauss(p.key, step.k, 0x71) - 0.32)));
}

function continuous(p: DayParams, s: Live, step: Step, sink?: TradeSink): void {
  const pTrade = 1 - Math.exp(-p.rate * step.dt);
  // Quotes move when the issue trades; an untraded step leaves it as it was.
  if (unit(p.key, step.k, 0x72) >= pTrade) return;
  const elapsed = Math.max(step.dt, step.secs - s.fairSecs);
  s.fair *= Math.exp(p.drift * elapsed + p.sigmaSec * Math.sqrt(elapsed) * gauss(p.key, step.k, 0x70));
  s.fair = Math.min(p.upper * 1.03, Math.max(p.lower * 0.97, s.fair));
  s.fairSecs = step.secs;
  quote(p, s);
  const buy = unit(p.key, step.k, 0x73) < 0.5 + Math.sign(p.drift) * 0.3;
  const price = buy ? s.ask || s.bid : s.bid || s.ask;
  record(s, price, quantity(p, step, pTrade, step.kind === 'close' ? 0.4 : 1), buy ? 2 : 1, step.secs, sink);
}

function atClose(p: DayParams, s: Live, step: Step, sink?: TradeSink): void {
  if (s.trades === 0) return;
  const pTrade = 1 - Math.exp(-p.rate * 0.05 * step.dt);
  if (unit(p.key, step.k, 0x74) >= pTrade) return;
  const qty = quantity(p, step, pTrade, 0.02);
  s.vol += qty;
  s.val += s.last * qty;
  s.trdvol = qty;
  s.trdSecs = step.secs;
  s.trades++;
  sink?.(step.secs, s.last, qty);
}

function single(p: DayParams, s: Live, step: Step, sink?: TradeSink): void {
  if (s.trades === 0) return;
  const pTrade = 1 - Math.exp(-p.rate * 60);
  if (unit(p.key, step.k, 0x75) >= pTrade) return;
  const ref = s.ahtLast || s.last;
  const raw = ref * Math.exp(0.004 * gauss(p.key, step.k, 0x76));
  // After-hours single-price trades stay within ±10% of the close and the day's limits.
  const price = Math.min(p.upper, Math.max(p.lower, roundToGrid(p.grid, Math.min(s.last * 1.1, Math.max(s.last * 0.9, raw)))));
  const qty = quantity(p, step, pTrade, 0.01);
  s.ahtHigh = s.ahtHigh === 0 ? price : Math.max(s.ahtHigh, price);
  s.ahtLow = s.ahtLow === 0 ? price : Math.min(s.ahtLow, price);
  s.ahtLast = price;
  s.vol += qty;
  s.val += price * qty;
  s.trdvol = qty;
  s.trdSecs = step.secs;
  sink?.(step.secs, price, qty);
}

/** Applies one market step to an issue's live state (mutates `s`). */
export function applyStep(p: DayParams, s: Live, step: Step, sink?: TradeSink): void {
  if (p.halted) return;
  if (step.kind === 'cont' || step.kind === 'close') continuous(p, s, step, sink);
  else if (step.kind === 'atclose') atClose(p, s, step, sink);
  else single(p, s, step, sink);
}

/** `cmpprevddTpCd` of a price against the base: 1 limit-up, 2 up, 3 unchanged, 4 limit-down, 5 down. */
export function changeCode(p: { base: number; upper: number; lower: number }, price: number): string {
  if (price >= p.upper) return '1';
  if (price <= p.lower) return '4';
  if (price > p.base) return '2';
  if (price < p.base) return '5';
  return '3';
}
