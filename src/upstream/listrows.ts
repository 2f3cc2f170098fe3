import { FIELD_ALIASES, type FieldTable, type FieldType } from './fields.js';
import { coerceValue, type Row, type Scalar } from './normalise.js';
import { canonicalInteger, plainAsciiString, type FieldScan } from './scan.js';

/**
 * The fields of list rows as `ListReader` compares them: how a row's keys,
 * as written, map to the normalised row's fields (`FieldLayout`), and what
 * a value's bytes are worth (`fieldValue`, `tokenIsJson`).
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
