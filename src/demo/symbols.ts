import type { Market } from '../client/index.js';
import { rankMatches, type SymbolMatch } from './search.js';

/**
 * Symbol names for the demo page, from the bridge's `/symbols` search (it
 * reads the bridge's own symbol directory, so it costs no upstream call).
 * Names are cached per market and code.
 */

/** Default rows of the board per market: large caps (and the KODEX 200 ETF). */
export const DEFAULT_CODES: Readonly<Record<Market, readonly string[]>> = {
  kospi: ['005930', '000660', '373220', '207940', '005380', '000270', '035420', '068270', '105560', '069500'],
  kosdaq: ['247540', '086520', '028300', '263750', '293490'],
};

/** Matches asked of the bridge per search (its maximum), ranked here. */
const CANDIDATES = 100;

/** A fetch function (the browser's, or a stub in tests). */
export type Fetch = (url: string) => Promise<{ ok: boolean; status: number; json(): Promise<unknown> }>;

/** Client of `/symbols`. */
export class SymbolNames {
  private readonly names = new Map<string, string>();

  /** `base` is the bridge's HTTP origin (default: the page's). */
  constructor(
    private readonly fetchFn: Fetch,
    private readonly base = '',
  ) {}

  /**
   * Symbols of `market` whose name or code contains `query`, best fits
   * first (see `rankMatches`), at most `limit`. Asks the bridge for more
   * than that, since it answers in listing order.
   */
  async search(market: Market, query: string, limit = 8): Promise<SymbolMatch[]> {
    const url = `${this.base}/symbols?market=${market}&q=${encodeURIComponent(query)}&limit=${CANDIDATES}`;
    const res = await this.fetchFn(url);
    if (!res.ok) throw new Error(`symbol search answered ${res.status}`);
    const body = (await res.json()) as { symbols?: SymbolMatch[] };
    const found = body.symbols ?? [];
    for (const s of found) this.remember(s);
    return rankMatches(query, found, limit);
  }

  /** The cached display name of a code, if known. */
  cached(market: Market, code: string): string | undefined {
    return this.names.get(`${market}.${code}`);
  }

  /** The display name of a code (its short Korean name); undefined when the bridge does not know it (yet). */
  async name(market: Market, code: string): Promise<string | undefined> {
    const hit = this.cached(market, code);
    if (hit !== undefined) return hit;
    const found = await this.search(market, code, 20);
    return found.find((s) => s.code === code) ? this.cached(market, code) : undefined;
  }

  /** Caches a match's name. */
  remember(s: SymbolMatch): void {
    this.names.set(`${s.market}.${s.code}`, s.abbr || s.name);
  }
}
