import { FIELD_ALIASES, type FieldTable, type FieldType } from './fields.js';
import { coerceValue, type Row, type Scalar } from './normalise.js';
import { canonicalInteger, plainAsciiString, type FieldScan } from './scan.js';

/**
 * What `ListReader` remembers of the rows of one list body: where each row
 * and each of its values lies in the body's bytes, the row it became, and
 * how its keys map to the normalised row's fields. Internal to the reader
 * and the store's use of a `ListDelta`.
 */

/**
 * The keys of a row as they are written in the body, in order, and what
 * the normaliser makes of each: the row's field name (after aliases) and
 * its declared type. Two rows whose key bytes are the same share one.
 */
export interface FieldLayout {
  /** The keys as written. */
  readonly keys: readonly string[];
  /** The normalised row's field names, in the row's own key order. */
  readonly names: readonly string[];
  /** Declared type of each field (undefined: an unknown field, kept as it came). */
  readonly types: readonly (FieldType | undefined)[];
  /** Index of the row key (e.g. `isuSrtCd`) among the fields; -1 when absent. */
  readonly keyIndex: number;
  /** Makes a row of these fields: `values[f]`, or the base row's value where it is `KEEP`. */
  readonly make: (base: Row, values: readonly unknown[]) => Row;
}

/** In `FieldLayout.make`'s values: take the base row's value. */
export const KEEP = Symbol('keep');

/** Most fields a layout has; a row with more is read whole every time it changes. */
const MAX_FIELDS = 64;

/**
 * `FieldLayout.make` for rows of these field names: an object literal of
 * the names, in order, so every row made has one hidden class and is made
 * in one step (a spread and keyed stores cost five times as much per row).
 * The names come from upstream bodies: each is written as a JSON string
 * literal, which is a JavaScript string literal; `layoutOf` refuses
 * `__proto__`. Where code cannot be made from strings, a spread.
 */
function rowMaker(names: readonly string[]): FieldLayout['make'] {
  const props = names.map((n, f) => `${JSON.stringify(n)}: v[${f}] === K ? b[${JSON.stringify(n)}] : v[${f}]`);
  try {
    return new Function('K', `return (b, v) => ({ ${props.join(', ')} });`)(KEEP) as FieldLayout['make'];
  } catch {
    return (b, v) => {
      const row = { ...b };
      for (let f = 0; f < names.length; f++) if (v[f] !== KEEP) row[names[f]!] = v[f] as Scalar;
      return row;
    };
  }
}

/** A layout's fields, or undefined when the keys need more than a field-by-field compare (escapes, duplicates, `__proto__`, integer-like keys). */
function layoutOf(keys: readonly string[], row: Row, table: FieldTable, rowKey: string | undefined): FieldLayout | undefined {
  const own = Object.keys(row);
  if (own.length !== keys.length || keys.length > MAX_FIELDS) return undefined;
  const names: string[] = [];
  const types: (FieldType | undefined)[] = [];
  for (let f = 0; f < keys.length; f++) {
    const k = keys[f]!;
    let name = k;
    if (table[k] === undefined) {
      const alias = FIELD_ALIASES[k];
      // As normaliseRow: an alias is renamed unless the row also carries the canonical name.
      if (alias !== undefined && !keys.includes(alias)) name = alias;
    }
    if (name !== own[f] || name === '__proto__') return undefined;
    names.push(name);
    types.push(table[name]);
  }
  return { keys, names, types, keyIndex: rowKey === undefined ? -1 : names.indexOf(rowKey), make: rowMaker(names) };
}

/** Whether the key token `[s, e)` (quotes included) spells `key`. */
function spells(b: Uint8Array, s: number, e: number, key: string): boolean {
  if (e - s - 2 !== key.length) return false;
  for (let k = 0; k < key.length; k++) if (b[s + 1 + k] !== key.charCodeAt(k)) return false;
  return true;
}

/** Layouts seen by one reader, most recent first (a list's rows have one or two). */
export class FieldLayouts {
  private readonly list: FieldLayout[] = [];

  /** The layout of a row just scanned (`scan`) and normalised (`row`), or undefined when it has none. */
  of(b: Buffer, scan: FieldScan, row: Row, table: FieldTable, rowKey: string | undefined): FieldLayout | undefined {
    const n = scan.count;
    const sp = scan.spans;
    for (const l of this.list) {
      if (l.keys.length !== n) continue;
      let f = 0;
      while (f < n && spells(b, sp[4 * f]!, sp[4 * f + 1]!, l.keys[f]!)) f++;
      if (f === n) return sameOrder(l, row) ? l : undefined;
    }
    const keys: string[] = [];
    for (let f = 0; f < n; f++) {
      const ks = sp[4 * f]!;
      const ke = sp[4 * f + 1]!;
      if (!plainAsciiString(b, ks, ke)) return undefined;
      keys.push(b.toString('latin1', ks + 1, ke - 1));
    }
    const l = layoutOf(keys, row, table, rowKey);
    if (l === undefined) return undefined;
    if (this.list.length >= 8) this.list.pop();
    this.list.unshift(l);
    return l;
  }
}

function sameOrder(l: FieldLayout, row: Row): boolean {
  let f = 0;
  for (const k in row) if (k !== l.names[f++]) return false;
  return f === l.names.length;
}

/** Returned by `fieldValue` for a value the normaliser would refuse. */
export const UNUSABLE = Symbol('unusable');

/** A scalar token's value as `JSON.parse` reads it, normalised to `type`; `UNUSABLE` when it cannot be (the row is then read whole). */
export function fieldValue(b: Buffer, s: number, e: number, type: FieldType | undefined): Scalar | boolean | typeof UNUSABLE {
  const c = b[s];
  let raw: unknown;
  if (c === 0x22) {
    if (plainAsciiString(b, s, e)) raw = b.toString('latin1', s + 1, e - 1);
    else {
      try {
        raw = JSON.parse(b.toString('utf8', s, e));
      } catch {
        return UNUSABLE;
      }
    }
  } else if (c === 0x74) raw = true;
  else if (c === 0x66) raw = false;
  else if (c === 0x6e) raw = null;
  else {
    const v = canonicalInteger(b, s, e);
    raw = v === v ? v : Number(b.toString('latin1', s, e));
  }
  if (type === undefined) return raw as Scalar | boolean;
  const v = coerceValue(type, raw);
  return v === undefined ? UNUSABLE : v;
}

/** Whether the token `[s, e)` is, byte for byte, the JSON that `JSON.stringify(v)` writes (so a checksum or a frame can take the bytes). */
export function tokenIsJson(b: Uint8Array, s: number, e: number, v: unknown): boolean {
  const c = b[s];
  if (typeof v === 'number') return c !== 0x22 && canonicalInteger(b, s, e) === v && !Object.is(v, -0);
  if (typeof v === 'string') {
    if (c !== 0x22 || e - s - 2 !== v.length || !plainAsciiString(b, s, e)) return false;
    for (let k = 0; k < v.length; k++) if (b[s + 1 + k] !== v.charCodeAt(k)) return false;
    return true;
  }
  if (v === null) return c === 0x6e;
  if (v === true) return c === 0x74;
  if (v === false) return c === 0x66;
  return false;
}

function grown(a: Int32Array<ArrayBuffer>, need: number): Int32Array<ArrayBuffer> {
  if (need <= a.length) return a;
  const out = new Int32Array(Math.max(need, a.length * 2));
  out.set(a);
  return out;
}

const EMPTY = Buffer.alloc(0);

/**
 * One read of a list body, by list position: each row's byte range, its
 * normalised row (or why it was dropped) and its field layout, and for a
 * row with a layout, three slots per field in `fields` from `fieldAt`:
 * where the value starts and ends relative to the row's first byte, and 1
 * when those bytes are the value's JSON (`tokenIsJson`). For rows
 * compared field by field with the previous read: the row they were
 * compared with and the fields whose values changed.
 */
export class Generation {
  bytes: Buffer = EMPTY;
  view: DataView<ArrayBufferLike> = new DataView(EMPTY.buffer, 0, 0);
  /** Rows (list positions) read. */
  count = 0;
  start = new Int32Array(64);
  end = new Int32Array(64);
  /** The normalised row, or why the row was dropped. */
  readonly rows: (Row | string)[] = [];
  /** Per row: 1 when it was dropped (`rows` holds the reason). */
  dropped = new Uint8Array(64);
  readonly layouts: (FieldLayout | undefined)[] = [];
  /** First slot in `fields` of each row with a layout. */
  fieldAt = new Int32Array(64);
  /** Per field: value start, value end (relative to the row's start), 1 when those bytes are its JSON. */
  fields = new Int32Array(1024);
  /** Entries of `fields` in use. */
  used = 0;
  /** Per row: the previous read's row it was compared with field by field (meaningful when `changedCount` > 0). */
  readonly bases: (Row | undefined)[] = [];
  /** Per row: first entry in `changed`, and how many. */
  changedAt = new Int32Array(64);
  changedCount = new Int32Array(64);
  /** Field indices of changed values, row after row. */
  changed = new Int32Array(256);
  /** Entries of `changed` in use. */
  changes = 0;

  /** Starts a new read of `bytes`. */
  reset(bytes: Buffer): void {
    this.bytes = bytes;
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
    this.count = 0;
    this.used = 0;
    this.changes = 0;
  }

  /** Reserves the slots of `n` fields; returns the first entry. */
  slots(n: number): number {
    const at = this.used;
    this.used += 3 * n;
    if (this.used > this.fields.length) this.fields = grown(this.fields, this.used);
    return at;
  }

  /** Records a changed field of the row being read. */
  change(f: number): void {
    if (this.changes >= this.changed.length) this.changed = grown(this.changed, this.changes + 1);
    this.changed[this.changes++] = f;
  }

  /** Records the next row; returns its position. */
  add(start: number, end: number, row: Row | string, layout: FieldLayout | undefined, fieldAt: number): number {
    const q = this.count++;
    if (q >= this.start.length) {
      this.start = grown(this.start, q + 1);
      this.end = grown(this.end, q + 1);
      this.fieldAt = grown(this.fieldAt, q + 1);
      this.changedAt = grown(this.changedAt, q + 1);
      this.changedCount = grown(this.changedCount, q + 1);
      const d = new Uint8Array(this.start.length);
      d.set(this.dropped);
      this.dropped = d;
    }
    this.start[q] = start;
    this.dropped[q] = typeof row === 'string' ? 1 : 0;
    this.end[q] = end;
    this.rows[q] = row;
    this.layouts[q] = layout;
    this.fieldAt[q] = fieldAt;
    this.changedCount[q] = 0;
    return q;
  }

  /** Drops references past the rows read (a shorter list than the last). */
  trim(): void {
    for (const a of [this.rows, this.layouts, this.bases]) a.length = this.count;
  }
}
