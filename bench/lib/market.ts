import type { Row } from '../../src/upstream/normalise.js';

/**
 * The synthetic market every benchmark peer is fed: seeded symbols with
 * prices on the KRX tick grid, a step that changes a fixed share of them,
 * the `seq` each topic has reached, and the upstream list body of a
 * snapshot. Deterministic for a seed, so every peer gets the same stream.
 */

/** The channel and market every benchmark topic belongs to. */
export const FEED = { channel: 'quote', market: 'kospi' } as const;

/** Topic of a code on the benchmark feed. */
export function topicOf(code: string): string {
  return `${FEED.channel}.${FEED.market}.${code}`;
}

/** A seeded PRNG (mulberry32): uniform floats in [0, 1). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** KRX tick size of a stock price, KRW. */
export function tickSize(price: number): number {
  if (price < 2_000) return 1;
  if (price < 5_000) return 5;
  if (price < 20_000) return 10;
  if (price < 50_000) return 50;
  if (price < 200_000) return 100;
  if (price < 500_000) return 500;
  return 1_000;
}

/** `count` distinct 6-digit short codes in ascending order, like a listing. */
export function shortCodes(count: number, seed: number): string[] {
  const r = rng(seed);
  const stride = Math.max(2, Math.floor(900_000 / count));
  const out: string[] = [];
  let n = 20;
  for (let i = 0; i < count; i++) {
    out.push(String(n).padStart(6, '0'));
    n += 1 + Math.floor(r() * (stride - 1));
  }
  return out;
}

/** Topics of the synthetic market of `symbols` symbols and `seed`, by symbol index. */
export function marketTopics(symbols: number, seed: number): string[] {
  return shortCodes(symbols, seed ^ 0x5eed).map(topicOf);
}

/** One symbol's change in a step. */
export interface Change {
  /** Symbol index. */
  readonly index: number;
  /** Seq of the topic after this change. */
  readonly seq: number;
  readonly prev: Row;
  readonly row: Row;
}

/** Fields of a quote row that a step changes, in row order. */
export const QUOTE_FIELDS = ['trdPrc', 'accTrdvol', 'accTrdval', 'mktcap'] as const;

/** Options of `SyntheticMarket`. */
export interface MarketOptions {
  readonly symbols: number;
  readonly seed: number;
  /** Share of symbols that change per step; default 0.3. */
  readonly changeRatio?: number;
}

/**
 * A market of quote rows (`isuSrtCd, trdPrc, accTrdvol, accTrdval,
 * mktcap`). Every row starts at seq 1; each step changes exactly
 * `round(symbols × changeRatio)` distinct symbols, each change raising
 * the volume, so every change is a real difference and seq rises by one.
 */
export class SyntheticMarket {
  /** Short codes, by symbol index. */
  readonly codes: readonly string[];
  /** Topics, by symbol index. */
  readonly topics: readonly string[];
  /** Latest rows, by symbol index. */
  readonly rows: Row[];
  /** Latest seq per symbol. */
  readonly seqs: Int32Array;
  private readonly shares: Float64Array;
  private readonly perm: Int32Array;
  private readonly perStep: number;
  private readonly random: () => number;

  /** A market at seq 1 everywhere. */
  constructor(opts: MarketOptions) {
    const n = opts.symbols;
    this.random = rng(opts.seed);
    this.topics = marketTopics(n, opts.seed);
    this.codes = this.topics.map((t) => t.slice(t.lastIndexOf('.') + 1));
    this.perStep = Math.round(n * (opts.changeRatio ?? 0.3));
    this.seqs = new Int32Array(n).fill(1);
    this.shares = new Float64Array(n);
    this.perm = new Int32Array(n);
    this.rows = [];
    for (let i = 0; i < n; i++) {
      this.perm[i] = i;
      const raw = Math.exp(Math.log(500) + this.random() * Math.log(1000));
      const price = Math.max(1, Math.round(raw / tickSize(raw)) * tickSize(raw));
      this.shares[i] = Math.round(1e6 + this.random() * 5e8);
      const vol = Math.floor(this.random() * 1e6);
      this.rows.push(quoteRow(this.codes[i]!, price, vol, vol * price, price * this.shares[i]!));
    }
  }

  /** Number of symbols. */
  get size(): number {
    return this.rows.length;
  }

  /** Symbols changed per step. */
  get changesPerStep(): number {
    return this.perStep;
  }

  /** Changes the next share of symbols; returns the changes (new row objects). */
  step(): Change[] {
    const n = this.rows.length;
    const out: Change[] = new Array(this.perStep);
    for (let k = 0; k < this.perStep; k++) {
      // Partial Fisher–Yates: k distinct symbols without a set.
      const j = k + Math.floor(this.random() * (n - k));
      const i = this.perm[j]!;
      this.perm[j] = this.perm[k]!;
      this.perm[k] = i;
      const prev = this.rows[i]!;
      const p0 = prev.trdPrc as number;
      const t = tickSize(p0);
      const price = Math.max(t, p0 + t * (Math.floor(this.random() * 7) - 3));
      const dv = 1 + Math.floor(this.random() * 1_000);
      const row = quoteRow(this.codes[i]!, price, (prev.accTrdvol as number) + dv, (prev.accTrdval as number) + dv * price, price * this.shares[i]!);
      this.rows[i] = row;
      const seq = ++this.seqs[i]!;
      out[k] = { index: i, seq, prev, row };
    }
    return out;
  }
}

function quoteRow(code: string, price: number, vol: number, val: number, cap: number): Row {
  return { isuSrtCd: code, trdPrc: price, accTrdvol: vol, accTrdval: val, mktcap: cap };
}

/** RFC 6902 `replace` operations of the quote fields that differ between two rows. */
export function changedOps(prev: Row, row: Row): { op: 'replace'; path: string; value: unknown }[] {
  const ops: { op: 'replace'; path: string; value: unknown }[] = [];
  for (const f of QUOTE_FIELDS) if (prev[f] !== row[f]) ops.push({ op: 'replace', path: '/' + f, value: row[f] });
  return ops;
}

/**
 * The upstream `multiquote/…/lists` body of the market as it stands, as
 * the provider sends it: bare envelope, `trdDd`/`trdTm` strings, rows
 * under `isuLists` with numbers, and a `" -"` placeholder for the market
 * cap of every 200th symbol (as suspended issues show).
 */
export function listBody(m: SyntheticMarket, trdDd: string, trdTm: string): string {
  const rows = new Array<unknown>(m.rows.length);
  for (let i = 0; i < m.rows.length; i++) {
    const r = m.rows[i]!;
    rows[i] = i % 200 === 199 ? { ...r, mktcap: ' -' } : r;
  }
  return JSON.stringify({ trdDd, trdTm, isuLists: rows });
}

/** Current high-resolution wall time, ms since the epoch (sub-ms precision). */
export function wallMs(): number {
  return performance.timeOrigin + performance.now();
}
