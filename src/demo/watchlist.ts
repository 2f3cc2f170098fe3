import { MARKETS, type Market } from '../client/index.js';

/**
 * The codes on the board per market, and the chosen market: starts from the
 * defaults and remembers additions and removals in `localStorage` (when the
 * browser allows it).
 */

/** What is stored. */
interface Saved {
  readonly market: Market;
  readonly codes: Readonly<Record<Market, readonly string[]>>;
}

const KEY = 'krx-bridge.demo.v1';
const CODE = /^[0-9A-Z]{6}$/;

/** The board's codes per market. */
export class Watchlist {
  private lists: Record<Market, string[]>;
  /** The market shown. */
  market: Market;

  /** Starts from what `storage` holds, else from `defaults` and `market`. */
  constructor(
    defaults: Readonly<Record<Market, readonly string[]>>,
    private readonly storage: Pick<Storage, 'getItem' | 'setItem'> | undefined,
    market: Market = 'kospi',
  ) {
    this.lists = { kospi: [...defaults.kospi], kosdaq: [...defaults.kosdaq] };
    this.market = market;
    const saved = this.read();
    if (saved !== undefined) {
      this.market = saved.market;
      for (const m of MARKETS) this.lists[m] = saved.codes[m].filter((c) => CODE.test(c));
    }
  }

  /** The codes of a market (default: the shown one), in the order added. */
  codes(market: Market = this.market): readonly string[] {
    return this.lists[market];
  }

  /** Adds a code to a market's list; false when it was there already. */
  add(market: Market, code: string): boolean {
    if (this.lists[market].includes(code)) return false;
    this.lists[market].push(code);
    this.save();
    return true;
  }

  /** Removes a code from a market's list. */
  remove(market: Market, code: string): void {
    this.lists[market] = this.lists[market].filter((c) => c !== code);
    this.save();
  }

  /** Switches the shown market. */
  show(market: Market): void {
    this.market = market;
    this.save();
  }

  private read(): Saved | undefined {
    try {
      const raw = this.storage?.getItem(KEY);
      if (!raw) return undefined;
      const v = JSON.parse(raw) as Partial<Saved>;
      const ok = (MARKETS as readonly unknown[]).includes(v.market) && MARKETS.every((m) => Array.isArray(v.codes?.[m]));
      return ok ? (v as Saved) : undefined;
    } catch {
      return undefined;
    }
  }

  private save(): void {
    try {
      this.storage?.setItem(KEY, JSON.stringify({ market: this.market, codes: this.lists } satisfies Saved));
    } catch {
      // Private browsing or a full quota: the board still works, it is just not remembered.
    }
  }
}
