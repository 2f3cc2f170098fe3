import type { Logger } from '../log.js';
import { MARKETS, type Market } from '../protocol/constants.js';
import type { SymbolDirectory } from '../state/symbols.js';
import type { OnDemandCache } from '../upstream/cache.js';
import { endpoint } from '../upstream/catalogue.js';
import type { Row } from '../upstream/normalise.js';

/** Options of `SymbolLoader`. */
export interface SymbolLoaderOptions {
  readonly symbols: SymbolDirectory;
  /**
   * The lookups the lists are fetched through: the bridge's own need, not a
   * client's, so outside the on-demand share; in a cluster shared, so one
   * call serves every process.
   */
  readonly cache: OnDemandCache;
  /** The API family of each market (`v2` or `v3`). */
  readonly families: Readonly<Record<Market, 'v2' | 'v3'>>;
  readonly logger: Logger;
  /** Clock, ms epoch. */
  readonly now: () => number;
  /** Longest wait before retrying a market whose list failed, ms; default a minute. */
  readonly retryMs?: number;
}

/** Wait between refreshes of loaded lists. */
const REFRESH_MS = 6 * 3600_000;

/**
 * Keeps the symbol list of every market loaded: at start, then a market
 * that failed is retried after 1 s, 2 s, 4 s… up to every minute (a slow
 * first answer is retried at once; before the 06:30 KST provision time it
 * is retried each minute), and loaded lists are refreshed every 6 hours.
 */
export class SymbolLoader {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private failures = 0;

  /** A loader; nothing runs until `start()`. */
  constructor(private readonly opts: SymbolLoaderOptions) {}

  /** Loads every market's list in the background, then keeps them fresh. */
  start(): void {
    void this.load(false);
  }

  /** Stops retrying and refreshing. */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  private async load(all: boolean): Promise<void> {
    const { symbols, logger } = this.opts;
    for (const market of MARKETS.filter((m) => all || !symbols.loaded(m))) {
      const id = this.opts.families[market] === 'v2' ? 'v2.stocks.lists' : 'v3.closed.lists';
      try {
        const n = symbols.load(market, await this.rows(id, market), this.opts.now());
        logger.info({ market, symbols: n }, 'symbol list loaded');
      } catch (err) {
        logger.warn({ market, code: (err as { code?: string }).code, err: (err as Error).message }, 'symbol list not loaded; retrying');
      }
    }
    if (this.stopped) return;
    const missing = MARKETS.some((m) => !symbols.loaded(m));
    this.failures = missing ? this.failures + 1 : 0;
    const retry = Math.min(this.opts.retryMs ?? 60_000, 1000 * 2 ** (this.failures - 1));
    this.timer = setTimeout(() => void this.load(!missing), missing ? retry : REFRESH_MS);
    this.timer.unref();
  }

  private async rows(id: string, market: Market): Promise<Row[]> {
    const r = await this.opts.cache.get(id, { marketcode: market });
    const key = endpoint(id).response.list?.key;
    const rows = key === undefined ? undefined : r.data[key];
    return Array.isArray(rows) ? (rows as Row[]) : [];
  }
}
