import type { Row } from '../../src/upstream/normalise.js';

/** A seeded random source (mulberry32) in [0, 1). */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A toy market of quote rows: each step moves some prices by a tick, adds to
 * volume, and now and then adds or removes an extra field (so patches carry
 * add and remove operations too).
 */
export class QuoteMarket {
  readonly rows = new Map<string, Row>();
  private readonly random: () => number;

  constructor(codes: readonly string[], seed = 1) {
    this.random = seeded(seed);
    for (const [i, code] of codes.entries()) {
      this.rows.set(code, { isuSrtCd: code, trdPrc: 10_000 + i * 100, accTrdvol: 0, accTrdval: 0, mktcap: 1e12 + i });
    }
  }

  /** Moves about `share` of the rows; returns every row (as a list endpoint would). */
  step(share = 0.3): Row[] {
    for (const [code, row] of this.rows) {
      if (this.random() >= share) continue;
      const next: Row = { ...row };
      const price = (row.trdPrc as number) + (this.random() < 0.5 ? -10 : 10);
      const vol = Math.floor(this.random() * 1000) + 1;
      next.trdPrc = price;
      next.accTrdvol = (row.accTrdvol as number) + vol;
      next.accTrdval = (row.accTrdval as number) + vol * price;
      const r = this.random();
      if (r < 0.05) next.note = 'VI';
      else if (r < 0.1) delete next.note;
      if (this.random() < 0.02) next.mktcap = null;
      this.rows.set(code, next);
    }
    return [...this.rows.values()];
  }
}

/** Resolves when `cond()` holds; rejects after `timeoutMs` with `what`. */
export async function waitFor(cond: () => boolean, what = 'condition', timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

/** Waits `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Codes 000010, 000020, … */
export function codes(n: number): string[] {
  return Array.from({ length: n }, (_, i) => String((i + 1) * 10).padStart(6, '0'));
}
