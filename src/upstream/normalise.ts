import { FIELD_ALIASES, type FieldTable, type FieldType } from './fields.js';
import type { Envelope, ResponseSpec } from './catalogue.js';
import type { Row, Scalar } from '../protocol/row.js';

/**
 * Lenient, normalising parsing of upstream bodies. Pure functions.
 *
 * Values arrive with their declared type or the other one; they leave with
 * the declared type (see `FieldType`). Placeholders become `null`. Known
 * aliases are renamed, unknown fields are kept as they are. A list row that
 * cannot be used is dropped and reported; the rest of the list survives.
 */

/** A normalised field value, and a normalised flat row: defined in src/protocol (the SDK holds the same rows). */
export type { Row, Scalar } from '../protocol/row.js';

/** Why a row was dropped or a top-level field was nulled. */
export interface RowIssue {
  /** Row index in the upstream list, or -1 for a top-level field. */
  readonly index: number;
  /** Field concerned, if one. */
  readonly field?: string;
  /** What was wrong. */
  readonly reason: string;
}

/** A normalised response body. */
export interface Normalised {
  /** The body without its envelope: top-level fields, and the list under its spec key. */
  readonly data: Record<string, unknown>;
  /** The usable rows of the list (the same array as `data[list.key]`); empty without a list. */
  readonly rows: Row[];
  /** Rows dropped as unusable. */
  readonly dropped: number;
  /** Up to `MAX_ISSUES` descriptions of dropped rows and nulled fields. */
  readonly issues: readonly RowIssue[];
}

/** Result of normalising a body: the value, or why the whole body is unusable. */
export type NormaliseResult = { ok: true; value: Normalised } | { ok: false; reason: string };

/** Most issues kept per body; the rest are only counted. */
export const MAX_ISSUES = 20;

const INVALID = Symbol('invalid');
type Coerced = Scalar | typeof INVALID;

const PAD: Record<string, number> = { s1: 1, s2: 2, s3: 3, s4: 4, s6: 6, s8: 8, s12: 12 };
const DIGITS = /^\d+$/;
const BOARD_SUFFIX = /\*\d+$/;
// Plain decimal text only: Number() alone would also take "0x1A", "0b1" and "Infinity".
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

function isPlaceholder(s: string): boolean {
  const t = s.trim();
  return t === '' || t === '-';
}

function numberFromText(v: string): Coerced {
  const t = v.trim();
  if (t === '' || t === '-') return null;
  const plain = t.includes(',') ? t.replace(/,/g, '') : t;
  return DECIMAL.test(plain) ? Number(plain) : INVALID;
}

function shortCode(s: string): string {
  const star = s.lastIndexOf('*');
  return (star >= 0 && BOARD_SUFFIX.test(s) ? s.slice(0, star) : s).trim();
}

/**
 * One value coerced to its declared type: the value, `null` for a
 * placeholder, or `INVALID` when it cannot be used as that type.
 */
export function coerce(type: FieldType, v: unknown): Coerced {
  if (v === null || v === undefined) return null;
  if (type === 'n') {
    if (typeof v === 'number') return Number.isFinite(v) ? v : INVALID;
    if (typeof v === 'string') return numberFromText(v);
    return INVALID;
  }
  let s: string;
  if (typeof v === 'string') {
    if (isPlaceholder(v)) return null;
    s = v;
  } else if (typeof v === 'number') {
    if (!Number.isFinite(v)) return INVALID;
    s = String(v);
  } else return INVALID;
  if (type === 's') return s;
  if (type === 'c') return shortCode(s);
  const width = PAD[type]!;
  if (s.length < width && DIGITS.test(s)) return s.padStart(width, '0');
  return s;
}

/** `coerce` for callers outside this module: `undefined` stands for invalid. */
export function coerceValue(type: FieldType, v: unknown): Scalar | undefined {
  const c = coerce(type, v);
  return c === INVALID ? undefined : c;
}

/**
 * One flat row normalised against a field table. Returns the row, or a
 * reason string when a declared field holds an unusable value, the row key
 * is missing, or a required field is absent.
 */
export function normaliseRow(raw: unknown, table: FieldTable, rowKey?: string, required?: readonly string[]): Row | string {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return 'row is not an object';
  const src = raw as Record<string, unknown>;
  // Most rows arrive as declared: keep the parsed object instead of copying it.
  if (isNormal(src, table)) return present(src as Row, rowKey, required) ?? (src as Row);
  const out: Row = {};
  for (const k in src) {
    let name = k;
    let type = table[k];
    if (type === undefined) {
      const alias = FIELD_ALIASES[k];
      if (alias !== undefined && !(alias in src)) {
        name = alias;
        type = table[alias];
      }
    }
    const v = src[k];
    if (type === undefined) {
      out[name] = v as Scalar;
      continue;
    }
    // Fast path for the common case (a finite number where one is declared).
    if (type === 'n' && typeof v === 'number' && Number.isFinite(v)) {
      out[name] = v;
      continue;
    }
    const c = coerce(type, v);
    if (c === INVALID) return `${name}: ${describe(v)} is not a valid ${type === 'n' ? 'number' : 'string'}`;
    out[name] = c;
  }
  return present(out, rowKey, required) ?? out;
}

/** Why a normalised row lacks its key or a required field; undefined when it has them. */
function present(row: Row, rowKey: string | undefined, required: readonly string[] | undefined): string | undefined {
  if (rowKey !== undefined && (row[rowKey] === undefined || row[rowKey] === null)) return `missing ${rowKey}`;
  if (required) {
    for (const f of required) if (row[f] === undefined) return `missing ${f}`;
  }
  return undefined;
}

/** The keys of the last row seen against a field table, and each key's declared type (`alias` when it has one). */
interface KeyTypes {
  readonly keys: readonly string[];
  readonly types: readonly (FieldType | 'alias' | undefined)[];
}

// Rows of one list share their keys: their types are looked up once per table, not per field.
const keyTypes = new WeakMap<FieldTable, KeyTypes>();

function typesOf(src: Record<string, unknown>, table: FieldTable): KeyTypes {
  const known = keyTypes.get(table);
  if (known !== undefined) {
    let i = 0;
    let same = true;
    for (const k in src) {
      if (k !== known.keys[i++]) {
        same = false;
        break;
      }
    }
    if (same && i === known.keys.length) return known;
  }
  const keys = Object.keys(src);
  const types = keys.map((k) => table[k] ?? (FIELD_ALIASES[k] !== undefined ? 'alias' : undefined));
  const made = { keys, types };
  keyTypes.set(table, made);
  return made;
}

/**
 * Whether a raw row is already what `normaliseRow` would make of it: no
 * aliased field, and every declared field null or already of its type
 * (a finite number, a string that is no placeholder, a short code without
 * board suffix or padding to add).
 */
function isNormal(src: Record<string, unknown>, table: FieldTable): boolean {
  const { keys, types } = typesOf(src, table);
  for (let i = 0; i < keys.length; i++) {
    const type = types[i];
    if (type === undefined) continue;
    if (type === 'alias') return false;
    const v = src[keys[i]!];
    if (v === null) continue;
    if (type === 'n') {
      if (typeof v !== 'number' || !Number.isFinite(v)) return false;
      continue;
    }
    if (typeof v !== 'string' || isPlaceholder(v)) return false;
    if (type === 'c') {
      if (shortCode(v) !== v) return false;
    } else if (type !== 's' && v.length < PAD[type]! && DIGITS.test(v)) return false;
  }
  return true;
}

function describe(v: unknown): string {
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 40 ? `${s.slice(0, 37)}...` : s;
}

/**
 * The body without its envelope. A `{ jsonrpc, result: {…} }` body is
 * unwrapped whatever the entry declares (payloads are not always what the
 * documents say); anything that is not a JSON object is `undefined`.
 */
export function unwrap(body: unknown): { body: Record<string, unknown>; envelope: Envelope } | undefined {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const o = body as Record<string, unknown>;
  const r = o.result;
  if (r !== null && typeof r === 'object' && !Array.isArray(r) && ('jsonrpc' in o || Object.keys(o).length === 1)) {
    return { body: r as Record<string, unknown>, envelope: 'wrapped' };
  }
  return { body: o, envelope: 'bare' };
}

/** The top level of a body, normalised, and its list as it came (see `normaliseTop`). */
export interface NormalisedTop {
  /** Top-level fields without the list, normalised as `normaliseBody` leaves them. */
  readonly data: Record<string, unknown>;
  /** The list's value in the body, as parsed (an empty array when the body has no list key). */
  readonly list: unknown;
  /** Issues of top-level fields (nulled as invalid). */
  readonly issues: RowIssue[];
}

/**
 * The first half of `normaliseBody`: the envelope unwrapped, the list
 * found under its key or an alias, every other top-level field normalised.
 * Fails only when the body is not a JSON object.
 */
export function normaliseTop(spec: ResponseSpec, body: unknown): { ok: true; value: NormalisedTop } | { ok: false; reason: string } {
  const u = unwrap(body);
  if (!u) return { ok: false, reason: 'body is not a JSON object' };
  const src = u.body;
  const issues: RowIssue[] = [];
  const list = spec.list;
  let listKeyInBody: string | undefined;
  if (list) {
    if (list.key in src) listKeyInBody = list.key;
    else listKeyInBody = list.aliases.find((a) => a in src);
  }
  const data: Record<string, unknown> = {};
  for (const k in src) {
    if (k === listKeyInBody) continue;
    let name = k;
    let type = spec.top[k];
    if (type === undefined) {
      const alias = FIELD_ALIASES[k];
      if (alias !== undefined && !(alias in src)) {
        name = alias;
        type = spec.top[alias];
      }
    }
    if (type === undefined) {
      data[name] = src[k];
      continue;
    }
    const c = coerce(type, src[k]);
    if (c === INVALID) {
      if (issues.length < MAX_ISSUES) issues.push({ index: -1, field: name, reason: `${describe(src[k])} is not valid` });
      data[name] = null;
    } else data[name] = c;
  }
  return { ok: true, value: { data, list: listKeyInBody === undefined ? [] : src[listKeyInBody], issues } };
}

/**
 * A whole response body normalised against its entry's response spec.
 * Unusable rows are dropped and counted; the body as a whole fails only
 * when it is not an object or its list is not an array.
 */
export function normaliseBody(spec: ResponseSpec, body: unknown): NormaliseResult {
  const top = normaliseTop(spec, body);
  if (!top.ok) return { ok: false, reason: top.reason };
  const { data, list: rawList, issues } = top.value;
  const list = spec.list;
  let rows: Row[] = [];
  let dropped = 0;
  if (list) {
    if (rawList !== null && !Array.isArray(rawList)) return { ok: false, reason: `${list.key} is not an array` };
    const arr = (rawList ?? []) as unknown[];
    rows = new Array<Row>();
    if (typeof list.row === 'string') {
      // A list of scalars (holiday dates): kept in `data`, no rows.
      const t = list.row;
      const values: Scalar[] = [];
      for (let i = 0; i < arr.length; i++) {
        const c = coerce(t, arr[i]);
        if (c === INVALID || c === null) {
          dropped++;
          if (issues.length < MAX_ISSUES) issues.push({ index: i, reason: `${describe(arr[i])} is not valid` });
        } else values.push(c);
      }
      data[list.key] = values;
      return { ok: true, value: { data, rows, dropped, issues } };
    } else {
      for (let i = 0; i < arr.length; i++) {
        const r = normaliseRow(arr[i], list.row, list.rowKey, list.required);
        if (typeof r === 'string') {
          dropped++;
          if (issues.length < MAX_ISSUES) issues.push({ index: i, reason: r });
        } else rows.push(r);
      }
    }
    data[list.key] = rows;
  }
  return { ok: true, value: { data, rows, dropped, issues } };
}
