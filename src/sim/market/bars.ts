/**
 * Intraday bars (10 s, 1 min, 10 min). A bar is labelled by the end of its
 * interval, as the provider labels them (the 09:00–09:10 bar is `9100000`).
 */

/** One intraday bar. */
export interface Bar {
  /** End of the interval, KST seconds after midnight. */
  readonly end: number;
  open: number;
  high: number;
  low: number;
  close: number;
  /** Volume and value inside the interval. */
  vol: number;
  val: number;
  /** Cumulative volume and value at the last update inside the interval. */
  accVol: number;
  accVal: number;
}

/** Bar lengths the provider offers, in seconds. */
export const CYCLES = [10, 60, 600] as const;

/** A bar length in seconds. */
export type Cycle = (typeof CYCLES)[number];

/** Bars of one length, oldest first, at most `cap` kept. */
export class BarSeries {
  private readonly list: Bar[] = [];

  /** A series of `cycle`-second bars keeping the newest `cap`. */
  constructor(
    readonly cycle: number,
    private readonly cap = Infinity,
  ) {}

  /** Adds one update (a trade, or an index value with its volume change). */
  add(secs: number, price: number, vol: number, val: number, accVol: number, accVal: number): void {
    const end = (Math.floor(secs / this.cycle) + 1) * this.cycle;
    const last = this.list[this.list.length - 1];
    if (last && last.end === end) {
      last.high = Math.max(last.high, price);
      last.low = Math.min(last.low, price);
      last.close = price;
      last.vol += vol;
      last.val += val;
      last.accVol = accVol;
      last.accVal = accVal;
      return;
    }
    this.list.push({ end, open: price, high: price, low: price, close: price, vol, val, accVol, accVal });
    if (this.list.length > this.cap) this.list.shift();
  }

  /** The bars, oldest first. */
  bars(): readonly Bar[] {
    return this.list;
  }
}

/** Bars of all three lengths, fed live (indexes, derivatives). */
export class LiveBars {
  private readonly series = new Map<number, BarSeries>([
    [10, new BarSeries(10, 360)],
    [60, new BarSeries(60, 400)],
    [600, new BarSeries(600, 100)],
  ]);

  /** Adds one update to every length. */
  add(secs: number, price: number, vol: number, val: number, accVol: number, accVal: number): void {
    for (const s of this.series.values()) s.add(secs, price, vol, val, accVol, accVal);
  }

  /** The bars of one length, oldest first. */
  bars(cycle: number): readonly Bar[] {
    return this.series.get(cycle)?.bars() ?? [];
  }
}

/** Bars whose end lies in `[from, to]` seconds, newest first, at most `limit`. */
export function selectBars(bars: readonly Bar[], from: number, to: number, limit = 100): Bar[] {
  const out: Bar[] = [];
  for (let i = bars.length - 1; i >= 0 && out.length < limit; i--) {
    const b = bars[i]!;
    if (b.end >= from && b.end <= to) out.push(b);
  }
  return out;
}
