import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
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
  /**
   * Where each market's last list is kept (`DATA_DIR/state`; none with
   * `STATE=off`): a start before the day's lists are provided (06:30 KST)
   * shows the names of the last one meanwhile.
   */
  readonly dir?: string;
}

/** The fields of a list's rows that are kept on disk (what `SymbolDirectory.load` reads). */
const KEPT = ['isuSrtCd', 'isuCd', 'isuKorNm', 'isuKorAbbrv'] as const;

/** The file of a market's last list in `dir`. */
function listFile(dir: string, market: Market): string {
  return join(dir, `symbols-${market}.json`);
}

/** Wait between refreshes of loaded lists. */
const REFRESH_MS = 6 * 3600_000;

/**
 * Keeps the symbol list of every market loaded: at start, then a market
 * that failed is retried after 1 s, 2 s, 4 s… up to every minute (a slow
 * first answer is retried at once; before the 06:30 KST provision time it
 * is retried each minute), and loaded lists are refreshed every 6 hours.
 * Each list loaded is kept on disk (`dir`), and a start reads the last
 * ones kept: a restart at night shows names before the day's lists come.
 */
export class SymbolLoader {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private failures = 0;
  /** Markets whose list was loaded from the upstream by this process (a list kept on disk is not). */
  private readonly fetched = new Set<Market>();

  /** A loader; nothing runs until `start()`. */
  constructor(private readonly opts: SymbolLoaderOptions) {}

  /** Loads every market's list in the background, then keeps them fresh; the lists kept on disk serve until then. */
  start(): void {
    this.restore();
    void this.load(false);
  }

  /** The lists kept on disk, as provisional ones (their names shown, no code refused for their lack). */
  private restore(): void {
    const dir = this.opts.dir;
    if (dir === undefined) return;
    for (const market of MARKETS) {
      let kept: { at?: unknown; rows?: unknown };
      try {
        kept = JSON.parse(readFileSync(listFile(dir, market), 'utf8')) as { at?: unknown; rows?: unknown };
      } catch {
        // None kept (a first start), or unreadable: the upstream's list comes as without one.
        continue;
      }
      if (typeof kept.at !== 'number' || !Array.isArray(kept.rows)) continue;
      const n = this.opts.symbols.load(market, kept.rows as Row[], kept.at, true);
      this.opts.logger.info({ market, symbols: n, at: new Date(kept.at).toISOString() }, 'symbol list restored until the day’s is loaded');
    }
  }

  /** Keeps a market's list for the next start (written whole, then renamed); a failure is logged and changes nothing else. */
  private keep(market: Market, rows: readonly Row[]): void {
    const dir = this.opts.dir;
    if (dir === undefined) return;
    const slim = rows.map((r) => Object.fromEntries(KEPT.filter((k) => r[k] !== undefined).map((k) => [k, r[k]])));
    const file = listFile(dir, market);
    try {
      mkdirSync(dir, { recursive: true });
      writeFileSync(`${file}.tmp`, JSON.stringify({ at: this.opts.now(), rows: slim }));
      renameSync(`${file}.tmp`, file);
    } catch (err) {
      this.opts.logger.warn({ market, err: (err as Error).message }, 'symbol list not kept on disk');
    }
  }

  /** Stops retrying and refreshing. */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  private async load(all: boolean): Promise<void> {
    const { symbols, logger } = this.opts;
    for (const market of MARKETS.filter((m) => all || !this.fetched.has(m))) {
      const id = this.opts.families[market] === 'v2' ? 'v2.stocks.lists' : 'v3.closed.lists';
      try {
        const rows = await this.rows(id, market);
        const n = symbols.load(market, rows, this.opts.now());
        this.fetched.add(market);
        logger.info({ market, symbols: n }, 'symbol list loaded');
        if (n > 0) this.keep(market, rows);
      } catch (err) {
        logger.warn({ market, code: (err as { code?: string }).code, err: (err as Error).message }, 'symbol list not loaded; retrying');
      }
    }
    if (this.stopped) return;
    const missing = MARKETS.some((m) => !this.fetched.has(m));
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
