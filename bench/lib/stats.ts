/**
 * Statistics of the benchmark: percentiles and medians of samples, a
 * log-bucketed latency histogram, and the per-topic `seq` continuity
 * counter every load client runs. Pure or self-contained; no I/O.
 */

/**
 * The `p`-th percentile (0–100) of ascending `sorted` samples by linear
 * interpolation between closest ranks; NaN for no samples.
 */
export function percentile(sorted: readonly number[], p: number): number {
  const n = sorted.length;
  if (n === 0) return NaN;
  if (p <= 0) return sorted[0]!;
  if (p >= 100) return sorted[n - 1]!;
  const rank = (p / 100) * (n - 1);
  const lo = Math.floor(rank);
  const frac = rank - lo;
  const a = sorted[lo]!;
  return frac === 0 ? a : a + (sorted[lo + 1]! - a) * frac;
}

/** The median of samples in any order (NaN for none); NaN samples are ignored. */
export function median(values: readonly number[]): number {
  const s = values.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
  return percentile(s, 50);
}

/** Lowest latency the histogram resolves, ms; smaller values land in its first bucket. */
const MIN_MS = 0.001;
/** Growth factor between buckets: 1% relative resolution. */
const GROWTH = 1.01;
const LOG_GROWTH = Math.log(GROWTH);
/** Buckets from 1 µs to a little over 1,000 s. */
const BUCKETS = Math.ceil(Math.log(1e6 / MIN_MS) / LOG_GROWTH) + 1;

/**
 * A latency histogram in ms with buckets 1% apart (1 µs to 1,000 s), so
 * recording costs one logarithm and no allocation. Percentiles are exact
 * to within 1%; min and max are exact. Negative samples (clock skew
 * between processes) count in the first bucket and in `negative`.
 */
export class LatencyHistogram {
  private readonly counts = new Float64Array(BUCKETS);
  /** Samples recorded (sum of weights). */
  count = 0;
  /** Samples below zero. */
  negative = 0;
  /** Smallest sample, ms. */
  min = Infinity;
  /** Largest sample, ms. */
  max = -Infinity;
  /** Sum of samples, ms (for the mean). */
  sum = 0;

  /** Records `weight` samples of `ms`. */
  record(ms: number, weight = 1): void {
    if (!(weight > 0) || Number.isNaN(ms)) return;
    if (ms < 0) this.negative += weight;
    const i = ms <= MIN_MS ? 0 : Math.min(BUCKETS - 1, Math.ceil(Math.log(ms / MIN_MS) / LOG_GROWTH));
    this.counts[i]! += weight;
    this.count += weight;
    this.sum += ms * weight;
    if (ms < this.min) this.min = ms;
    if (ms > this.max) this.max = ms;
  }

  /**
   * The `p`-th percentile (0–100), ms: the upper bound of the bucket that
   * holds that rank, clamped to [min, max]. NaN when empty.
   */
  percentile(p: number): number {
    if (this.count === 0) return NaN;
    const target = Math.max(1, Math.ceil((Math.min(100, Math.max(0, p)) / 100) * this.count));
    let seen = 0;
    for (let i = 0; i < BUCKETS; i++) {
      seen += this.counts[i]!;
      if (seen >= target) {
        const upper = MIN_MS * Math.pow(GROWTH, i);
        return Math.min(this.max, Math.max(this.min, upper));
      }
    }
    return this.max;
  }

  /** Mean sample, ms (NaN when empty). */
  get mean(): number {
    return this.count === 0 ? NaN : this.sum / this.count;
  }

  /** Forgets every sample. */
  reset(): void {
    this.counts.fill(0);
    this.count = 0;
    this.negative = 0;
    this.min = Infinity;
    this.max = -Infinity;
    this.sum = 0;
  }
}

/** Totals of a continuity check. */
export interface ContinuityTotals {
  /** Updates that followed their topic's previous seq by exactly one. */
  inOrder: number;
  /** Updates that arrived after a gap (their seq skipped some). */
  gaps: number;
  /** Seqs skipped: for a jump from 5 to 9, three (6, 7, 8). */
  lost: number;
  /** Updates whose seq was not above the topic's previous one (duplicate or reordered). */
  outOfOrder: number;
  /** Updates for a slot the client never subscribed to. */
  unexpected: number;
}

/** Zeroed continuity totals. */
export function emptyTotals(): ContinuityTotals {
  return { inOrder: 0, gaps: 0, lost: 0, outOfOrder: 0, unexpected: 0 };
}

/**
 * `seq` continuity of one client's topics, by slot (a small integer per
 * topic): every patch must carry its topic's previous seq plus one. A
 * snapshot (or any baseline) resets the expectation without counting. One
 * `Int32Array`, no allocation per update.
 */
export class SeqTracker {
  private readonly last: Int32Array;
  /** Running totals; shared objects may be passed in to sum many clients. */
  readonly totals: ContinuityTotals;

  /** A tracker of `slots` topics, none subscribed yet. */
  constructor(slots: number, totals?: ContinuityTotals) {
    this.last = new Int32Array(slots).fill(-1);
    this.totals = totals ?? emptyTotals();
  }

  /** Marks a slot subscribed, with the seq the client holds now (0 when none yet). */
  baseline(slot: number, seq: number): void {
    this.last[slot] = seq;
  }

  /**
   * A snapshot of a slot at `seq`: it replaces local state, so it sets the
   * baseline; a snapshot older than what the client holds counts as out of order.
   */
  snapshot(slot: number, seq: number): void {
    const prev = this.last[slot];
    if (prev === undefined) {
      this.totals.unexpected++;
      return;
    }
    if (prev > seq) this.totals.outOfOrder++;
    else this.last[slot] = seq;
  }

  /** A patch of a slot at `seq`: counted in order, after a gap, or out of order. */
  update(slot: number, seq: number): void {
    const prev = this.last[slot];
    if (prev === undefined || prev < 0) {
      this.totals.unexpected++;
      return;
    }
    if (seq === prev + 1) this.totals.inOrder++;
    else if (seq > prev + 1) {
      this.totals.gaps++;
      this.totals.lost += seq - prev - 1;
    } else {
      this.totals.outOfOrder++;
      return;
    }
    this.last[slot] = seq;
  }

  /** The last seq seen for a slot (-1 when not subscribed). */
  lastSeq(slot: number): number {
    return this.last[slot] ?? -1;
  }

  /**
   * Updates published but never received at the end of a run: for every
   * subscribed slot, how far its last seen seq trails `finalSeq(slot)`.
   */
  tailLoss(finalSeq: (slot: number) => number): number {
    let missing = 0;
    for (let i = 0; i < this.last.length; i++) {
      const l = this.last[i]!;
      if (l < 0) continue;
      const f = finalSeq(i);
      if (f > l) missing += f - l;
    }
    return missing;
  }
}

/** Latency percentiles of a window, ms. */
export interface LatencySummary {
  readonly count: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly p999: number;
  readonly max: number;
  readonly mean: number;
  readonly negative: number;
}

/** The percentiles of a histogram (NaN when empty). */
export function summarise(h: LatencyHistogram): LatencySummary {
  return {
    count: h.count,
    p50: h.percentile(50),
    p90: h.percentile(90),
    p99: h.percentile(99),
    p999: h.percentile(99.9),
    max: h.count ? h.max : NaN,
    mean: h.mean,
    negative: h.negative,
  };
}
