import type { Logger } from '../log.js';
import type { SymbolDirectory } from './symbols.js';

/**
 * English names for the symbol search: the upstream's symbol lists carry
 * Korean names only, its English name (`isuEngNm`) comes with each issue's
 * master data. This fills them in the background, one master lookup at a
 * time (`perSecond`), codes people subscribe to first, then every listed
 * code, spending at most `perDay` upstream calls a budget day. Each call
 * goes through the bridge's on-demand share like any lookup, and a master
 * a client looked up (cached) costs nothing. See docs/OPERATIONS.md §8.5.
 */

/** What the filler needs. */
export interface EnglishNamesOptions {
  readonly symbols: SymbolDirectory;
  /** The English name of an issue from its master data (undefined when it has none); rejects when the lookup fails. */
  readonly lookup: (market: string, code: string) => Promise<string | undefined>;
  /** Codes clients subscribe to now, by market: looked up first. */
  readonly wanted: () => Iterable<readonly [string, string]>;
  /** Markets whose names are filled. */
  readonly markets: readonly string[];
  /** Most lookups a budget day; default 2,000. */
  readonly perDay?: number;
  /** Lookups a second; default 2. */
  readonly perSecond?: number;
  readonly logger: Logger;
  /** The end of the current budget day (ms epoch) at `now`. */
  readonly dayEnd: (now: number) => number;
  readonly now?: () => number;
}

/** The background filler of English names. */
export class EnglishNames {
  private timer: NodeJS.Timeout | undefined;
  private spent = 0;
  private dayEnd = 0;
  private readonly tried = new Set<string>();
  private readonly now: () => number;
  private busy = false;

  /** A stopped filler. */
  constructor(private readonly opts: EnglishNamesOptions) {
    this.now = opts.now ?? Date.now;
  }

  /** Lookups made this budget day. */
  get used(): number {
    return this.spent;
  }

  /** Starts filling. */
  start(): void {
    const t = setInterval(() => void this.step(), 1000 / (this.opts.perSecond ?? 2));
    t.unref();
    this.timer = t;
  }

  /** Stops filling. */
  stop(): void {
    clearInterval(this.timer);
  }

  /** One lookup, if one is due and affordable. */
  async step(): Promise<void> {
    if (this.busy) return;
    const now = this.now();
    if (now >= this.dayEnd) {
      this.dayEnd = this.opts.dayEnd(now);
      this.spent = 0;
      this.tried.clear();
    }
    if (this.spent >= (this.opts.perDay ?? 2000)) return;
    const next = this.next();
    if (next === undefined) return;
    const [market, code] = next;
    this.tried.add(`${market}:${code}`);
    this.busy = true;
    this.spent++;
    try {
      const name = await this.opts.lookup(market, code);
      if (name) this.opts.symbols.setEnglish(market, code, name);
    } catch (err) {
      this.opts.logger.debug({ market, code, err: (err as Error).message }, 'english name not looked up');
    } finally {
      this.busy = false;
    }
  }

  private next(): readonly [string, string] | undefined {
    const s = this.opts.symbols;
    const open = (m: string, c: string) => s.get(m, c) !== undefined && !s.hasEnglish(m, c) && !this.tried.has(`${m}:${c}`);
    for (const [m, c] of this.opts.wanted()) if (open(m, c)) return [m, c];
    for (const m of this.opts.markets) {
      for (const info of s.list(m)) if (open(m, info.code)) return [m, info.code];
    }
    return undefined;
  }
}
