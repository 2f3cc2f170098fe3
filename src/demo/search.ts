import { el } from './dom.js';

/**
 * The symbol search box: a combobox over the bridge's `/symbols` search.
 * Typing searches (debounced), the matches show in a list; arrows move,
 * Enter or a click picks, Escape closes. Follows the WAI-ARIA combobox
 * pattern (list autocomplete).
 */

/** A search match, as `/symbols` answers. */
export interface SymbolMatch {
  readonly market: string;
  readonly code: string;
  readonly name: string;
  readonly abbr: string;
}

/**
 * Orders matches by how well they fit the query: the exact code, then codes
 * starting with it, then names starting with it, then the rest; shorter
 * names first within each group (`에코` finds 에코프로 before 한국에코솔루션).
 * Keeps at most `limit`.
 */
export function rankMatches(query: string, matches: readonly SymbolMatch[], limit = 8): SymbolMatch[] {
  const q = query.trim().toLowerCase();
  const score = (m: SymbolMatch): number => {
    const code = m.code.toLowerCase();
    const name = (m.abbr || m.name).toLowerCase();
    if (code === q) return 0;
    if (code.startsWith(q)) return 1;
    if (name === q) return 2;
    if (name.startsWith(q)) return 3;
    return 4;
  };
  return matches
    .map((m, i) => ({ m, i, s: score(m), n: (m.abbr || m.name).length }))
    .sort((a, b) => a.s - b.s || a.n - b.n || a.i - b.i)
    .slice(0, limit)
    .map((x) => x.m);
}

/** Finds symbols matching a query. */
export type SymbolFinder = (query: string) => Promise<readonly SymbolMatch[]>;

/** Options of `SymbolSearch`. */
export interface SearchOptions {
  /** The text input (gets the combobox role). */
  readonly input: HTMLInputElement;
  /** The list element for the matches (gets the listbox role). */
  readonly list: HTMLElement;
  readonly find: SymbolFinder;
  /** A match was picked. */
  readonly pick: (match: SymbolMatch) => void;
  /** Delay after the last keystroke before searching, ms; default 150. */
  readonly debounceMs?: number;
}

/** The search combobox. */
export class SymbolSearch {
  private matches: readonly SymbolMatch[] = [];
  private active = -1;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private pending: Promise<void> | undefined;
  private asked = '';

  /** Wires the input and the list. */
  constructor(private readonly opts: SearchOptions) {
    const { input, list } = opts;
    input.setAttribute('role', 'combobox');
    input.setAttribute('aria-autocomplete', 'list');
    input.setAttribute('aria-expanded', 'false');
    input.setAttribute('aria-controls', list.id);
    input.autocomplete = 'off';
    input.spellcheck = false;
    list.setAttribute('role', 'listbox');
    list.hidden = true;
    input.addEventListener('input', () => this.schedule());
    input.addEventListener('keydown', (ev) => void this.onKey(ev));
    input.addEventListener('blur', () => setTimeout(() => this.close(), 150));
    input.addEventListener('focus', () => {
      if (this.matches.length > 0 && input.value.trim() !== '') this.open();
    });
    list.addEventListener('mousedown', (ev) => ev.preventDefault());
    list.addEventListener('click', (ev) => {
      const li = (ev.target as HTMLElement).closest('li');
      const i = li ? Number(li.dataset.index) : -1;
      const m = this.matches[i];
      if (m !== undefined) this.choose(m);
    });
  }

  /** Clears the box (e.g. after a market switch). */
  reset(): void {
    this.opts.input.value = '';
    this.matches = [];
    this.asked = '';
    this.close();
  }

  private schedule(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.search(), this.opts.debounceMs ?? 150);
  }

  private search(): Promise<void> {
    this.timer = undefined;
    const q = this.opts.input.value.trim();
    if (q === '') {
      this.matches = [];
      this.close();
      return Promise.resolve();
    }
    this.asked = q;
    const p = this.opts.find(q).then(
      (found) => {
        if (this.opts.input.value.trim() !== q) return;
        this.matches = found;
        this.active = found.length > 0 ? 0 : -1;
        this.renderList();
      },
      () => {
        this.matches = [];
        this.renderList('Search failed; is the bridge running?');
      },
    );
    this.pending = p;
    return p;
  }

  private async onKey(ev: KeyboardEvent): Promise<void> {
    const n = this.matches.length;
    switch (ev.key) {
      case 'ArrowDown':
      case 'ArrowUp':
        ev.preventDefault();
        if (n === 0) return;
        if (this.opts.list.hidden) this.open();
        this.active = (this.active + (ev.key === 'ArrowDown' ? 1 : -1) + n) % n;
        this.renderList();
        return;
      case 'Escape':
        if (!this.opts.list.hidden) ev.preventDefault();
        this.close();
        return;
      case 'Enter': {
        ev.preventDefault();
        // Enter right after typing must not act on the previous query's matches.
        if (this.timer !== undefined || this.asked !== this.opts.input.value.trim()) {
          if (this.timer !== undefined) clearTimeout(this.timer);
          await this.search();
        } else await this.pending;
        const typed = this.opts.input.value.trim().toUpperCase();
        const m = this.matches.find((x) => x.code === typed) ?? this.matches[Math.max(0, this.active)];
        if (m !== undefined) this.choose(m);
        return;
      }
    }
  }

  private choose(m: SymbolMatch): void {
    this.reset();
    this.opts.pick(m);
  }

  private open(): void {
    this.opts.list.hidden = false;
    this.opts.input.setAttribute('aria-expanded', 'true');
  }

  private close(): void {
    this.opts.list.hidden = true;
    this.opts.input.setAttribute('aria-expanded', 'false');
    this.opts.input.removeAttribute('aria-activedescendant');
  }

  private renderList(message?: string): void {
    const { list, input } = this.opts;
    if (message !== undefined || this.matches.length === 0) {
      list.replaceChildren(el('li', { class: 'empty', role: 'option', 'aria-disabled': 'true' }, message ?? 'No matching symbol'));
      this.open();
      input.removeAttribute('aria-activedescendant');
      return;
    }
    list.replaceChildren(
      ...this.matches.map((m, i) =>
        el(
          'li',
          {
            id: `${list.id}-${i}`,
            role: 'option',
            'data-index': i,
            'data-code': m.code,
            'aria-selected': String(i === this.active),
            class: i === this.active ? 'active' : undefined,
          },
          el('span', { class: 'm-name' }, m.abbr || m.name),
          el('span', { class: 'm-code' }, m.code),
          el('span', { class: 'm-market' }, m.market.toUpperCase()),
        ),
      ),
    );
    this.open();
    input.setAttribute('aria-activedescendant', `${list.id}-${this.active}`);
    list.querySelector('li.active')?.scrollIntoView({ block: 'nearest' });
  }
}
