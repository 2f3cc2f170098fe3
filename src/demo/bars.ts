import type { IntradayRow } from '../client/index.js';
import { chartTime, secsOfTime } from './format.js';

/**
 * Intraday candles of the chart: built from the `intraday` resource (bars
 * newest first, each labelled by the END of its interval, `HHMMSSmm`) and
 * extended by live trades from the `price` channel. Pure state, no DOM, so
 * the rules are unit-tested in Node.
 */

/** One candle; `time` is chart seconds (KST wall time written as UTC) of the bar's START. */
export interface Candle {
  readonly time: number;
  readonly open: number;
  readonly high: number;
  readonly low: number;
  readonly close: number;
  /** Shares traded inside the bar. */
  readonly volume: number;
}

/** What a trade did to the candles. */
export type TradeEffect =
  | { readonly kind: 'update' | 'append'; readonly candle: Candle }
  /** The trade belongs to an earlier bar than the last one: a late row, ignored. */
  | { readonly kind: 'ignored' }
  /** The trade is far before the last bar: a new trading day began; reload the history. */
  | { readonly kind: 'reset' };

/** A trade far earlier than the last bar (by this much) means the day rolled over, s. */
const NEW_DAY_GAP_S = 3600;

/** Candles of intraday rows (any order; invalid rows skipped), oldest first, for day `date8` and bars of `intervalS`. */
export function candlesOf(rows: readonly IntradayRow[], date8: string, intervalS = 60): Candle[] {
  const byTime = new Map<number, Candle>();
  for (const r of rows) {
    const end = secsOfTime(r.inddTm);
    const c = r.inddClsprc;
    if (end === undefined || typeof c !== 'number') continue;
    const o = typeof r.inddOpnprc === 'number' ? r.inddOpnprc : c;
    const h = typeof r.inddHgprc === 'number' ? r.inddHgprc : Math.max(o, c);
    const l = typeof r.inddLwprc === 'number' ? r.inddLwprc : Math.min(o, c);
    const time = chartTime(date8, end - intervalS);
    byTime.set(time, { time, open: o, high: h, low: l, close: c, volume: typeof r.inddTrdvol === 'number' ? r.inddTrdvol : 0 });
  }
  return [...byTime.values()].sort((a, b) => a.time - b.time);
}

/** The candles of one symbol's day, extended by its trades. */
export class CandleBook {
  private list: Candle[] = [];
  /** Cumulative day volume before the last candle began (its volume is the growth since). */
  private accBefore: number | undefined;
  /** The last cumulative day volume seen. */
  private accLast: number | undefined;

  /** Bars of `intervalS` seconds on day `date8`. */
  constructor(
    readonly date8: string,
    readonly intervalS = 60,
  ) {}

  /** Replaces the candles with the intraday history (its rows in any order). */
  load(rows: readonly IntradayRow[]): readonly Candle[] {
    this.list = candlesOf(rows, this.date8, this.intervalS);
    const newest = rows.reduce<IntradayRow | undefined>(
      (a, r) => (a === undefined || (secsOfTime(r.inddTm) ?? 0) > (secsOfTime(a.inddTm) ?? 0) ? r : a),
      undefined,
    );
    const acc = newest?.inddAccTrdvol;
    const vol = newest?.inddTrdvol;
    this.accLast = typeof acc === 'number' ? acc : undefined;
    this.accBefore = typeof acc === 'number' && typeof vol === 'number' ? acc - vol : undefined;
    return this.list;
  }

  /** Whether a trade at `trdTm` is far before the last candle: another day's candles are loaded (`trade` says `reset`). */
  newDay(trdTm: string | null | undefined): boolean {
    const secs = secsOfTime(trdTm);
    const last = this.list[this.list.length - 1];
    if (secs === undefined || secs === 0 || last === undefined) return false;
    return this.barOf(secs) < last.time - NEW_DAY_GAP_S;
  }

  /** Chart time of the start of the bar a trade at `secs` (KST seconds of the day) falls in. */
  private barOf(secs: number): number {
    return chartTime(this.date8, secs - (secs % this.intervalS));
  }

  /** The candles, oldest first. */
  candles(): readonly Candle[] {
    return this.list;
  }

  /**
   * Applies a trade: `price` at KRX time `trdTm` (`HHMMSSmm`) with the day's
   * cumulative volume `accVol` so far. Updates the last candle, starts a new
   * one, or tells that the trade is late or that the day rolled over.
   */
  trade(price: number, trdTm: string | null | undefined, accVol?: number | null): TradeEffect {
    const secs = secsOfTime(trdTm);
    // 00:00:00 is no trade: the time of a row before the day's first trade (the pre-market's expected prices).
    if (secs === undefined || secs === 0 || !Number.isFinite(price)) return { kind: 'ignored' };
    const time = this.barOf(secs);
    const last = this.list[this.list.length - 1];
    const acc = typeof accVol === 'number' ? accVol : undefined;
    if (last !== undefined && time < last.time) return time < last.time - NEW_DAY_GAP_S ? { kind: 'reset' } : { kind: 'ignored' };
    if (last !== undefined && time === last.time) {
      const volume = acc !== undefined && this.accBefore !== undefined ? Math.max(last.volume, acc - this.accBefore) : last.volume;
      const candle = { ...last, high: Math.max(last.high, price), low: Math.min(last.low, price), close: price, volume };
      this.list[this.list.length - 1] = candle;
      if (acc !== undefined) this.accLast = acc;
      return { kind: 'update', candle };
    }
    this.accBefore = this.accLast;
    const volume = acc !== undefined && this.accBefore !== undefined ? Math.max(0, acc - this.accBefore) : 0;
    const candle = { time, open: price, high: price, low: price, close: price, volume };
    this.list.push(candle);
    if (acc !== undefined) this.accLast = acc;
    return { kind: 'append', candle };
  }
}
