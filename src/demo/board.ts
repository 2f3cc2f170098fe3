import type { PriceRow } from '../client/index.js';
import { el, flash, setOneOf, setText } from './dom.js';
import { changePct, direction, fmtCompact, fmtInt, fmtPct, fmtTime, isLimit, secsOfTime } from './format.js';

/**
 * The live board: one row per symbol, fed by `price` rows. Cells update in
 * place once per animation frame; a changed price flashes; columns sort by
 * clicking their header. Prices are coloured by the Korean convention (up
 * red, down blue).
 */

/** A sortable column of the board. */
export type SortKey = 'name' | 'price' | 'change' | 'pct' | 'open' | 'high' | 'low' | 'volume' | 'value' | 'time';

/** Callbacks of the board. */
export interface BoardHandlers {
  /** A row was chosen (click or keyboard). */
  select(code: string): void;
  /** The remove button of a row was pressed. */
  remove(code: string): void;
}

interface Column {
  readonly key: SortKey;
  readonly label: string;
  /** Hidden on narrow screens. */
  readonly optional?: boolean;
  readonly numeric: boolean;
}

const COLUMNS: readonly Column[] = [
  { key: 'name', label: 'Name', numeric: false },
  { key: 'price', label: 'Last', numeric: true },
  { key: 'change', label: 'Change', numeric: true, optional: true },
  { key: 'pct', label: '%', numeric: true },
  { key: 'open', label: 'Open', numeric: true, optional: true },
  { key: 'high', label: 'High', numeric: true, optional: true },
  { key: 'low', label: 'Low', numeric: true, optional: true },
  { key: 'volume', label: 'Volume', numeric: true },
  { key: 'value', label: 'Value', numeric: true, optional: true },
  { key: 'time', label: 'Time', numeric: true, optional: true },
];

const DIRS = ['up', 'down', 'flat'] as const;
const FLASH: Readonly<Record<'up' | 'down', string>> = { up: 'rgba(240, 69, 90, 0.24)', down: 'rgba(59, 130, 246, 0.24)' };

/** The sort value of a row for a column (numbers, or the name); undefined sorts last. */
export function sortValue(key: SortKey, name: string, row: PriceRow | undefined): number | string | undefined {
  if (key === 'name') return name;
  if (row === undefined) return undefined;
  const v = (n: number | null | undefined) => (typeof n === 'number' ? n : undefined);
  switch (key) {
    case 'price':
      return v(row.trdPrc);
    case 'change':
      return v(row.cmpprevddPrc);
    case 'pct':
      return changePct(row.trdPrc, row.cmpprevddPrc);
    case 'open':
      return v(row.opnprc);
    case 'high':
      return v(row.hgprc);
    case 'low':
      return v(row.lwprc);
    case 'volume':
      return v(row.accTrdvol);
    case 'value':
      return v(row.accTrdval);
    case 'time':
      return secsOfTime(row.trdTm);
  }
}

/** Compares two sort values: missing values last, names in Korean collation. */
export function compareValues(a: number | string | undefined, b: number | string | undefined, dir: 1 | -1): number {
  if (a === undefined || b === undefined) return a === b ? 0 : a === undefined ? 1 : -1;
  if (typeof a === 'string' || typeof b === 'string') return String(a).localeCompare(String(b), 'ko') * dir;
  return (a - b) * dir;
}

class BoardRow {
  readonly tr: HTMLTableRowElement;
  readonly cells = new Map<SortKey, HTMLTableCellElement>();
  readonly nameEl: HTMLSpanElement;
  readonly pick: HTMLButtonElement;
  readonly removeBtn: HTMLButtonElement;
  row: PriceRow | undefined;
  shown: PriceRow | undefined;

  constructor(
    readonly code: string,
    public name: string,
  ) {
    this.nameEl = el('span', { class: 'sym-name' }, name);
    this.pick = el('button', { type: 'button', class: 'sym', 'aria-pressed': 'false' }, this.nameEl, el('span', { class: 'sym-code' }, code));
    this.removeBtn = el('button', { type: 'button', class: 'remove', 'aria-label': `Remove ${name} (${code}) from the board`, title: 'Remove' }, '×');
    this.tr = el('tr', { 'data-code': code });
    for (const c of COLUMNS) {
      const td = el('td', { class: `col-${c.key}${c.numeric ? ' num' : ''}${c.optional ? ' opt' : ''}` });
      this.cells.set(c.key, td);
      this.tr.append(td);
    }
    this.cells.get('name')!.append(this.pick);
    this.tr.append(el('td', { class: 'col-remove' }, this.removeBtn));
    this.paint();
  }

  /** Writes the row's current values into its cells; flashes the price when it moved. */
  paint(): void {
    const r = this.row;
    const cell = (k: SortKey) => this.cells.get(k)!;
    const dir = direction(r?.cmpprevddTpCd, r?.cmpprevddPrc);
    const arrow = r === undefined ? '' : r.cmpprevddTpCd === '1' ? '↑ ' : r.cmpprevddTpCd === '4' ? '↓ ' : dir === 'up' ? '▲ ' : dir === 'down' ? '▼ ' : '';
    setText(cell('price'), fmtInt(r?.trdPrc));
    setText(cell('change'), r?.cmpprevddPrc == null ? '–' : arrow + fmtInt(Math.abs(r.cmpprevddPrc)));
    setText(cell('pct'), fmtPct(changePct(r?.trdPrc, r?.cmpprevddPrc)));
    setText(cell('open'), fmtInt(r?.opnprc));
    setText(cell('high'), fmtInt(r?.hgprc));
    setText(cell('low'), fmtInt(r?.lwprc));
    setText(cell('volume'), fmtInt(r?.accTrdvol));
    setText(cell('value'), fmtCompact(r?.accTrdval));
    setText(cell('time'), fmtTime(r?.trdTm));
    for (const k of ['price', 'change', 'pct'] as const) setOneOf(cell(k), DIRS, dir);
    cell('price').classList.toggle('limit', isLimit(r?.cmpprevddTpCd));
    const before = this.shown?.trdPrc;
    const now = r?.trdPrc;
    if (typeof before === 'number' && typeof now === 'number' && before !== now) {
      flash(cell('price'), FLASH[now > before ? 'up' : 'down'], 700);
    }
    this.shown = r;
  }

  rename(name: string): void {
    this.name = name;
    setText(this.nameEl, name);
    this.removeBtn.setAttribute('aria-label', `Remove ${name} (${this.code}) from the board`);
  }
}

/** The board table. */
export class Board {
  private readonly rows = new Map<string, BoardRow>();
  private readonly dirty = new Set<string>();
  private readonly tbody: HTMLTableSectionElement;
  private readonly headers = new Map<SortKey, HTMLTableCellElement>();
  private sortKey: SortKey | undefined;
  private sortDir: 1 | -1 = -1;
  private selected: string | undefined;
  private frame = 0;

  /** A board in `table` (emptied); `handlers` hear selections and removals. */
  constructor(
    table: HTMLTableElement,
    private readonly handlers: BoardHandlers,
  ) {
    table.replaceChildren();
    const head = el('tr');
    for (const c of COLUMNS) {
      const btn = el('button', { type: 'button', class: 'sort' }, c.label);
      const th = el('th', { scope: 'col', class: `col-${c.key}${c.numeric ? ' num' : ''}${c.optional ? ' opt' : ''}`, 'aria-sort': 'none' }, btn);
      btn.addEventListener('click', () => this.sortBy(c.key));
      this.headers.set(c.key, th);
      head.append(th);
    }
    head.append(el('th', { scope: 'col', class: 'col-remove' }, el('span', { class: 'visually-hidden' }, 'Remove')));
    this.tbody = el('tbody');
    table.append(el('thead', {}, head), this.tbody);
    this.tbody.addEventListener('click', (ev) => this.onClick(ev));
  }

  /** Replaces every row (a market switch). */
  setRows(symbols: readonly { code: string; name: string }[]): void {
    this.rows.clear();
    this.dirty.clear();
    this.tbody.replaceChildren();
    for (const s of symbols) this.add(s.code, s.name);
  }

  /** Adds a row at the end (or in sort order); nothing when the code is shown already. */
  add(code: string, name: string): void {
    if (this.rows.has(code)) return;
    const row = new BoardRow(code, name);
    row.pick.setAttribute('aria-pressed', String(code === this.selected));
    row.tr.classList.toggle('selected', code === this.selected);
    this.rows.set(code, row);
    this.tbody.append(row.tr);
    this.reorder();
  }

  /** Removes a row. */
  remove(code: string): void {
    this.rows.get(code)?.tr.remove();
    this.rows.delete(code);
    this.dirty.delete(code);
  }

  /** Whether a code is on the board. */
  has(code: string): boolean {
    return this.rows.has(code);
  }

  /** Codes in display order. */
  codes(): string[] {
    return [...this.tbody.rows].map((tr) => tr.dataset.code ?? '');
  }

  /** Sets a row's display name. */
  rename(code: string, name: string): void {
    this.rows.get(code)?.rename(name);
  }

  /** Takes a new `price` row for a code; painted on the next animation frame. */
  update(code: string, row: PriceRow): void {
    const r = this.rows.get(code);
    if (r === undefined) return;
    r.row = row;
    this.dirty.add(code);
    if (this.frame === 0) this.frame = requestAnimationFrame(() => this.flush());
  }

  /** Marks a row as the selected one. */
  select(code: string | undefined): void {
    this.selected = code;
    for (const r of this.rows.values()) {
      r.tr.classList.toggle('selected', r.code === code);
      r.pick.setAttribute('aria-pressed', String(r.code === code));
    }
  }

  /** Sorts by a column; the same column again reverses the order. */
  sortBy(key: SortKey): void {
    if (this.sortKey === key) this.sortDir = this.sortDir === 1 ? -1 : 1;
    else {
      this.sortKey = key;
      this.sortDir = key === 'name' ? 1 : -1;
    }
    for (const [k, th] of this.headers) th.setAttribute('aria-sort', k !== key ? 'none' : this.sortDir === 1 ? 'ascending' : 'descending');
    this.reorder();
  }

  private flush(): void {
    this.frame = 0;
    for (const code of this.dirty) this.rows.get(code)?.paint();
    this.dirty.clear();
    this.reorder();
  }

  /** Moves rows into sort order, touching the DOM only when the order changed. */
  private reorder(): void {
    const key = this.sortKey;
    if (key === undefined) return;
    const sorted = [...this.rows.values()].sort((a, b) => compareValues(sortValue(key, a.name, a.row), sortValue(key, b.name, b.row), this.sortDir));
    const current = this.tbody.rows;
    if (sorted.every((r, i) => current[i] === r.tr)) return;
    this.tbody.append(...sorted.map((r) => r.tr));
  }

  private onClick(ev: MouseEvent): void {
    const target = ev.target as HTMLElement;
    const tr = target.closest('tr');
    const code = tr?.dataset.code;
    if (code === undefined) return;
    if (target.closest('button.remove')) this.handlers.remove(code);
    else this.handlers.select(code);
  }
}
