import { hasShape, rowShape, type RowShape } from '../protocol/crc32.js';
import type { Row } from '../upstream/normalise.js';
import { pointer, same } from '../protocol/patch.js';
import { jsonScalar } from './frames.js';

/**
 * Row layouts: the keys a feed's rows have, in order, with everything the
 * store derives from them once instead of per row: the canonical key order
 * of the checksum, each field's JSON Pointer and its `replace` op prefix.
 * Two rows of one layout diff by a field-by-field compare.
 */

/** A row shape with the fragments of its `replace` operations. */
export interface RowLayout extends RowShape {
  /** JSON Pointer of each key (enumeration order). */
  readonly paths: readonly string[];
  /** Per key: the serialised op up to its value, `{"op":"replace","path":"/key","value":`. */
  readonly replaceHeads: readonly string[];
  /** Scratch of changed key indices for `diffLaid` (one diff at a time). */
  readonly changed: Int32Array;
}

/** The layout of a row (allocates; `Layouts` caches them). */
export function rowLayout(row: Readonly<Row>): RowLayout {
  const shape = rowShape(row);
  const paths = shape.keys.map(pointer);
  const replaceHeads = paths.map((p) => '{"op":"replace","path":' + JSON.stringify(p) + ',"value":');
  return { ...shape, paths, replaceHeads, changed: new Int32Array(shape.keys.length) };
}

/** Most layouts kept per feed; a feed's rows have one or two. */
const MAX_LAYOUTS = 8;

/** The layouts seen in one feed's rows, most recent first. */
export class Layouts {
  private readonly list: RowLayout[] = [];

  /** The layout of `row`, reused when one of the same keys is known. */
  of(row: Readonly<Row>): RowLayout {
    const list = this.list;
    for (let i = 0; i < list.length; i++) if (hasShape(row, list[i]!)) return list[i]!;
    const l = rowLayout(row);
    if (list.length >= MAX_LAYOUTS) list.pop();
    list.unshift(l);
    return l;
  }
}

/**
 * Compares `next` with `prev`, a row of `layout`, field by field: writes
 * the indices of the changed keys to `layout.changed` and returns how many
 * there are, or -1 when `next` does not have `layout` (then use diffRows).
 */
export function diffLaid(prev: Readonly<Row>, next: Readonly<Row>, layout: RowLayout): number {
  const keys = layout.keys;
  const changed = layout.changed;
  let i = 0;
  let n = 0;
  for (const k in next) {
    if (k !== keys[i]) return -1;
    const v = next[k];
    const p = prev[k];
    if (v !== p && !same(p, v)) changed[n++] = i;
    i++;
  }
  return i === keys.length ? n : -1;
}

/**
 * The JSON of those operations without the brackets (`{…},{…}`), as
 * `JSON.stringify` writes them; undefined when a value is not a scalar.
 */
export function laidOpsJson(next: Readonly<Row>, layout: RowLayout, n: number): string | undefined {
  let out = '';
  for (let j = 0; j < n; j++) {
    const i = layout.changed[j]!;
    const v = jsonScalar(next[layout.keys[i]!]);
    if (v === undefined) return undefined;
    out += (j > 0 ? ',' : '') + layout.replaceHeads[i]! + v + '}';
  }
  return out;
}
