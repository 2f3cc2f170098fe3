import type { Row } from '../upstream/normalise.js';

/**
 * The symbol directory: every listed issue per market, from the upstream's
 * symbol lists. The gateway validates codes against it; the demo page
 * searches it by name or code.
 */

/** One listed issue. */
export interface SymbolInfo {
  /** Market code (`kospi`, `kosdaq`, `konex`). */
  readonly market: string;
  /** Short code, e.g. `005930`. */
  readonly code: string;
  /** Standard (ISIN) code, e.g. `KR7005930003`. */
  readonly stdCode: string;
  /** Korean name. */
  readonly name: string;
  /** Korean abbreviated name. */
  readonly abbr: string;
}

/** Symbols by market, replaced wholesale when a market's list is (re)loaded. */
export class SymbolDirectory {
  private readonly markets = new Map<string, Map<string, SymbolInfo>>();
  private readonly loadedAt = new Map<string, number>();

  /** Replaces a market's symbols with the rows of its symbol list. Rows without a code are skipped. */
  load(market: string, rows: readonly Row[], now = Date.now()): number {
    const m = new Map<string, SymbolInfo>();
    for (const r of rows) {
      const code = r.isuSrtCd;
      if (typeof code !== 'string' || !code) continue;
      m.set(code, {
        market,
        code,
        stdCode: typeof r.isuCd === 'string' ? r.isuCd : '',
        name: typeof r.isuKorNm === 'string' ? r.isuKorNm : code,
        abbr: typeof r.isuKorAbbrv === 'string' ? r.isuKorAbbrv : typeof r.isuKorNm === 'string' ? r.isuKorNm : code,
      });
    }
    this.markets.set(market, m);
    this.loadedAt.set(market, now);
    return m.size;
  }

  /** Whether a market's list has been loaded. */
  loaded(market: string): boolean {
    return this.markets.has(market);
  }

  /** When a market's list was loaded (ms epoch), or undefined. */
  loadedTime(market: string): number | undefined {
    return this.loadedAt.get(market);
  }

  /**
   * Whether `code` is listed on `market`. Before the market's list is
   * loaded, every syntactically valid code is accepted (the upstream is
   * then the judge).
   */
  has(market: string, code: string): boolean {
    const m = this.markets.get(market);
    return m ? m.has(code) : true;
  }

  /** The issue with this code, if listed. */
  get(market: string, code: string): SymbolInfo | undefined {
    return this.markets.get(market)?.get(code);
  }

  /** Every issue of a market. */
  list(market: string): SymbolInfo[] {
    return [...(this.markets.get(market)?.values() ?? [])];
  }

  /** Issues whose code, standard code or name contains `query` (case-insensitive), at most `limit`. */
  search(query: string, limit = 20, market?: string): SymbolInfo[] {
    const q = query.trim().toLowerCase();
    if (!q) return [];
    const out: SymbolInfo[] = [];
    for (const [mk, m] of this.markets) {
      if (market && mk !== market) continue;
      for (const s of m.values()) {
        if (
          s.code.toLowerCase().includes(q) ||
          s.stdCode.toLowerCase().includes(q) ||
          s.name.toLowerCase().includes(q) ||
          s.abbr.toLowerCase().includes(q)
        ) {
          out.push(s);
          if (out.length >= limit) return out;
        }
      }
    }
    return out;
  }

  /** Number of issues across markets. */
  get size(): number {
    let n = 0;
    for (const m of this.markets.values()) n += m.size;
    return n;
  }
}
