/**
 * Small DOM helpers of the demo page: element creation without a framework,
 * lookups that fail loudly, and a one-shot background flash.
 */

type Attrs = Readonly<Record<string, string | number | boolean | undefined>>;

/**
 * Creates an element with attributes (`class`, `aria-*`, `data-*`, …; `false`
 * and `undefined` leave one out) and children (strings become text nodes).
 */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: (Node | string)[]): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    node.setAttribute(k, v === true ? '' : String(v));
  }
  node.append(...children);
  return node;
}

/** The element with this id; throws when the page lacks it (a build mistake, not a runtime condition). */
export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const node = document.getElementById(id);
  if (node === null) throw new Error(`demo page: no element #${id}`);
  return node as T;
}

/** Sets an element's text only when it differs (saves style recalculation on every tick). */
export function setText(node: Element, text: string): void {
  if (node.textContent !== text) node.textContent = text;
}

/** Sets the one class of a group (`up`/`down`/`flat`) on an element, removing the others. */
export function setOneOf(node: Element, group: readonly string[], value: string): void {
  for (const c of group) node.classList.toggle(c, c === value);
}

const reducedMotion = typeof matchMedia === 'function' ? matchMedia('(prefers-reduced-motion: reduce)') : undefined;

/** Flashes an element's background in `color`, fading out over `ms` (skipped when the user prefers reduced motion). */
export function flash(node: HTMLElement, color: string, ms = 900): void {
  if (reducedMotion?.matches || typeof node.animate !== 'function') return;
  node.animate([{ backgroundColor: color }, { backgroundColor: 'transparent' }], { duration: ms, easing: 'ease-out' });
}
