import type { BookRow } from '../client/index.js';
import { el, setOneOf, setText } from './dom.js';
import { fmtInt, type Direction } from './format.js';

/**
 * The 10-level order-book ladder of the selected symbol, fed by `book`
 * rows: asks above (level 10 at the top, the best ask next to the spread),
 * bids below, quantity bars scaled to the largest level, and totals.
 */

/** One price level: price (KRW) and resting quantity (shares); null when the level is empty. */
export interface Level {
  readonly price: number | null;
  readonly qty: number | null;
}

/** The ladder of a book row. */
export interface Ladder {
  /** Ask levels 1…10 (index 0 is the best ask). */
  readonly asks: readonly Level[];
  /** Bid levels 1…10 (index 0 is the best bid). */
  readonly bids: readonly Level[];
  /** The largest quantity on either side (bars scale to it); 0 when the book is empty. */
  readonly maxQty: number;
  /** Total resting quantity of each side, shares. */
  readonly askTotal: number | null;
  readonly bidTotal: number | null;
}

/** Number of levels a side. */
export const LEVELS = 10;

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** The ladder of a `book` row (a pure transform of its `askStepNBstordPrc/Rqty` … fields). */
export function ladder(row: BookRow): Ladder {
  const side = (s: 'ask' | 'bid'): Level[] =>
    Array.from({ length: LEVELS }, (_, i) => ({
      price: num(row[`${s}Step${i + 1}BstordPrc` as keyof BookRow]),
      qty: num(row[`${s}Step${i + 1}BstordRqty` as keyof BookRow]),
    }));
  const asks = side('ask');
  const bids = side('bid');
  const maxQty = Math.max(0, ...[...asks, ...bids].map((l) => l.qty ?? 0));
  return { asks, bids, maxQty, askTotal: num(row.askordTotRqty), bidTotal: num(row.bidordTotRqty) };
}

/** The direction of a price against the previous close (for its colour). */
export function priceDirection(price: number | null, prevClose: number | undefined): Direction {
  if (price === null || prevClose === undefined) return 'flat';
  return price > prevClose ? 'up' : price < prevClose ? 'down' : 'flat';
}

interface LevelRow {
  readonly tr: HTMLDivElement;
  readonly qty: HTMLSpanElement;
  readonly bar: HTMLSpanElement;
  readonly price: HTMLSpanElement;
}

const DIRS = ['up', 'down', 'flat'] as const;

/** The order-book panel. */
export class OrderBook {
  private readonly asks: LevelRow[] = [];
  private readonly bids: LevelRow[] = [];
  private readonly askTotal: HTMLSpanElement;
  private readonly bidTotal: HTMLSpanElement;
  private readonly imbalance: HTMLSpanElement;
  /** Why the ladder is empty, when the bridge said (a closed feed with no data to show). */
  private readonly why: HTMLParagraphElement;

  /** A ladder in `container` (emptied). */
  constructor(private readonly container: HTMLElement) {
    container.replaceChildren();
    const ladderEl = el('div', { class: 'ladder', role: 'table', 'aria-label': 'Order book, 10 levels a side' });
    ladderEl.append(
      el(
        'div',
        { class: 'lv head', role: 'row' },
        el('span', { role: 'columnheader', class: 'q' }, 'Ask qty'),
        el('span', { role: 'columnheader', class: 'p' }, 'Price'),
        el('span', { role: 'columnheader', class: 'q' }, 'Bid qty'),
      ),
    );
    for (let i = LEVELS - 1; i >= 0; i--) this.asks[i] = this.levelRow(ladderEl, 'ask', i + 1);
    for (let i = 0; i < LEVELS; i++) this.bids[i] = this.levelRow(ladderEl, 'bid', i + 1);
    this.askTotal = el('span', { class: 'q ask-total' }, '–');
    this.bidTotal = el('span', { class: 'q bid-total' }, '–');
    this.imbalance = el('span', { class: 'p' }, 'Total');
    ladderEl.append(el('div', { class: 'lv totals', role: 'row' }, this.askTotal, this.imbalance, this.bidTotal));
    this.why = el('p', { class: 'book-why', role: 'status' });
    this.why.hidden = true;
    container.append(ladderEl, this.why);
  }

  /** Says why the ladder is empty (`undefined`: says nothing); a row shown says it no more. */
  explain(reason: string | undefined): void {
    setText(this.why, reason ?? '');
    this.why.hidden = reason === undefined || this.container.dataset.levels !== '0';
  }

  /** Clears the ladder (a new symbol is loading). */
  clear(): void {
    const empty: Level = { price: null, qty: null };
    for (const r of [...this.asks, ...this.bids]) this.paintLevel(r, empty, 0, undefined, undefined);
    setText(this.askTotal, '–');
    setText(this.bidTotal, '–');
    this.container.dataset.levels = '0';
  }

  /**
   * Shows a book row. `last` (the last trade price) marks its level;
   * `prevClose` colours prices up (red) or down (blue).
   */
  render(row: BookRow, last?: number, prevClose?: number): void {
    const l = ladder(row);
    l.asks.forEach((lv, i) => this.paintLevel(this.asks[i]!, lv, l.maxQty, last, prevClose));
    l.bids.forEach((lv, i) => this.paintLevel(this.bids[i]!, lv, l.maxQty, last, prevClose));
    setText(this.askTotal, fmtInt(l.askTotal));
    setText(this.bidTotal, fmtInt(l.bidTotal));
    const a = l.askTotal ?? 0;
    const b = l.bidTotal ?? 0;
    setText(this.imbalance, a + b > 0 ? `Bid ${Math.round((b / (a + b)) * 100)}%` : 'Total');
    const filled = [...l.asks, ...l.bids].filter((lv) => lv.price !== null).length;
    this.container.dataset.levels = String(filled);
    if (filled > 0) this.why.hidden = true;
  }

  private levelRow(parent: HTMLElement, side: 'ask' | 'bid', level: number): LevelRow {
    const bar = el('span', { class: 'bar', 'aria-hidden': 'true' });
    const qty = el('span', { class: 'qv' }, '');
    const price = el('span', { class: 'p', role: 'cell' }, '');
    const qCell = el('span', { class: 'q', role: 'cell' }, bar, qty);
    const blank = el('span', { class: 'q', role: 'cell' });
    const tr = el('div', { class: `lv ${side}-row`, role: 'row', 'data-level': level }, ...(side === 'ask' ? [qCell, price, blank] : [blank, price, qCell]));
    parent.append(tr);
    return { tr, qty, bar, price };
  }

  private paintLevel(r: LevelRow, lv: Level, maxQty: number, last: number | undefined, prevClose: number | undefined): void {
    setText(r.price, lv.price === null ? '' : fmtInt(lv.price));
    setText(r.qty, lv.qty === null ? '' : fmtInt(lv.qty));
    const share = maxQty > 0 && lv.qty !== null ? Math.min(1, lv.qty / maxQty) : 0;
    r.bar.style.transform = `scaleX(${share.toFixed(4)})`;
    setOneOf(r.price, DIRS, priceDirection(lv.price, prevClose));
    r.tr.classList.toggle('last', lv.price !== null && lv.price === last);
  }
}
