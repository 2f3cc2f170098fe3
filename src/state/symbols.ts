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
  /** English name, once known (the symbol lists have none; it comes from the master data). */
  readonly engName?: string;
}

/** Symbols by market, replaced wholesale when a market's list is (re)loaded. */
export class SymbolDirectory {
  private readonly markets = new Map<string, Map<string, SymbolInfo>>();
  private readonly loadedAt = new Map<string, number>();
  /** Markets whose list is an earlier day's, kept on disk: its names are shown, but it does not judge which codes are listed. */
  private readonly provisional = new Set<string>();
  /** English names by `market:code`, kept across list reloads. */
  private readonly english = new Map<string, string>();

  /**
   * Replaces a market's symbols with the rows of its symbol list. Rows
   * without a code are skipped. `provisional`: an earlier list, kept from
   * before a restart, until the day's is loaded: its names are used, but a
   * code it lacks is not taken for unlisted (`has`).
   */
  load(market: string, rows: readonly Row[], now = Date.now(), provisional = false): number {
    const m = new Map<string, SymbolInfo>();
    for (const r of rows) {
      const code = r.isuSrtCd;
      if (typeof code !== 'string' || !code) continue;
      const eng = this.english.get(`${market}:${code}`);
      m.set(code, {
        market,
        code,
        stdCode: typeof r.isuCd === 'string' ? r.isuCd : '',
        name: typeof r.isuKorNm === 'string' ? r.isuKorNm : code,
        abbr: typeof r.isuKorAbbrv === 'string' ? r.isuKorAbbrv : typeof r.isuKorNm === 'string' ? r.isuKorNm : code,
        ...(eng ? { engName: eng } : {}),
      });
    }
    this.markets.set(market, m);
    this.loadedAt.set(market, now);
    if (provisional) this.provisional.add(market);
    else this.provisional.delete(market);
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
   * loaded, or while it is an earlier day's (`provisional`), every
   * syntactically valid code is accepted (the upstream is then the judge).
   */
  has(market: string, code: string): boolean {
    const m = this.markets.get(market);
    return m === undefined || this.provisional.has(market) || m.has(code);
  }

  /** The issue with this code, if listed. */
  get(market: string, code: string): SymbolInfo | undefined {
    return this.markets.get(market)?.get(code);
  }

  /** Every issue of a market. */
  list(market: string): SymbolInfo[] {
    return [...(this.markets.get(market)?.values() ?? [])];
  }

  /** Records an issue's English name (from its master data). */
  setEnglish(market: string, code: string, name: string): void {
    const n = name.trim();
    if (!n) return;
    this.english.set(`${market}:${code}`, n);
    const m = this.markets.get(market);
    const s = m?.get(code);
    if (m && s) m.set(code, { ...s, engName: n });
  }

  /** Whether an issue's English name is known. */
  hasEnglish(market: string, code: string): boolean {
    return this.english.has(`${market}:${code}`);
  }

  /**
   * Issues whose code, standard code, Korean or English name contains
   * `query` (case-insensitive; spaces ignored), at most `limit`, from the
   * `offset`-th match on. An empty query lists the market (or every market)
   * in list order, for browsing.
   */
  search(query: string, limit = 20, market?: string, offset = 0): SymbolInfo[] {
    const q = fold(query);
    const out: SymbolInfo[] = [];
    let skip = offset;
    for (const [mk, m] of this.markets) {
      if (market && mk !== market) continue;
      for (const s of m.values()) {
        if (
          q &&
          !(
            fold(s.code).includes(q) ||
            fold(s.stdCode).includes(q) ||
            fold(s.name).includes(q) ||
            fold(s.abbr).includes(q) ||
            (s.engName !== undefined && fold(s.engName).includes(q))
          )
        )
          continue;
        if (skip > 0) {
          skip--;
          continue;
        }
        out.push(s);
        if (out.length >= limit) return out;
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

/** Text as searched: lower case, without spaces (`Samsung Elec` finds `SAMSUNG ELECTRONICS`). */
function fold(s: string): string {
  return s.toLowerCase().replace(/\s+/g, '');
}
