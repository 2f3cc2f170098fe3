import type { ListSpec, ResponseSpec } from './catalogue.js';
import type { FieldTable } from './fields.js';
import { Generation, ListDelta } from './generation.js';
import { FieldLayouts, KEEP, UNUSABLE, fieldValue, tokenIsJson, type FieldLayout } from './listrows.js';
import { MAX_ISSUES, normaliseRow, normaliseTop, type Normalised, type Row, type RowIssue, type Scalar } from './normalise.js';
import { FieldScan, compositeEnd, firstArray, integerEnd, numberGoesOn, scalarEnd, skipWs, type ScannedInteger } from './scan.js';

/**
 * Incremental reading of a list body that is polled again and again (the
 * whole-market lists, once a second): most rows are byte for byte what they
 * were in the previous body. Each row's bytes are found in the body and
 * compared with the previous body's row at that place; an equal row is the
 * previous row object, a row that differs only in some values is the
 * previous row with those values changed, and only a row that differs in
 * more is parsed and normalised on its own. The result is what
 * `JSON.parse` + `normaliseBody` would give; a body of any other shape is
 * refused with a reason, for the caller to read the plain way.
 */

/** Why a body was not read incrementally (it is then read whole). */
export type PlainReason = 'envelope' | 'rows' | 'syntax';

export { ListDelta } from './generation.js';

/** A list body read incrementally: the normalised body, and how its rows relate to the previous read's. */
export interface ListRead {
  readonly value: Normalised;
  readonly delta: ListDelta;
}

/** A failed row: not JSON. */
const FAIL = -1;

/**
 * Whether `len` bytes at `ai` of `a` equal those at `bi` of `b`, `b` being
 * JSON text, eight at a time. Two equal doubles have the same bits unless
 * they are +0 and -0, whose bytes (seven of them NUL) JSON text cannot
 * hold; NaNs compare unequal, which only sends the caller the long way.
 * Read little-endian, as x86 and Arm hold words: the order does not
 * change which bytes are equal, and a big-endian read (the default) swaps
 * each word's bytes first.
 */
function sameView(a: DataView<ArrayBufferLike>, ai: number, b: DataView<ArrayBufferLike>, bi: number, len: number): boolean {
  let k = 0;
  for (; k + 8 <= len; k += 8) if (a.getFloat64(ai + k, true) !== b.getFloat64(bi + k, true)) return false;
  for (; k < len; k++) if (a.getUint8(ai + k) !== b.getUint8(bi + k)) return false;
  return true;
}

// The list's place in the envelope while the envelope alone is parsed: a value no upstream body holds.
const SENTINEL = '\u0000krx-bridge-list\u0000';
const SENTINEL_JSON = JSON.stringify(SENTINEL);

/** How many values of a parsed JSON value are the sentinel string. */
function sentinels(v: unknown): number {
  let n = 0;
  const stack: unknown[] = [v];
  while (stack.length > 0) {
    const x = stack.pop();
    if (x === SENTINEL) n++;
    else if (x !== null && typeof x === 'object') for (const k in x) stack.push((x as Record<string, unknown>)[k]);
  }
  return n;
}

/**
 * Reads successive list bodies of one endpoint (one call site: the same
 * path and parameters each time), remembering the last one. Not for
 * concurrent reads.
 */
export class ListReader {
  private last: Generation | undefined;
  private spare = new Generation();
  private readonly scan = new FieldScan();
  private readonly layouts = new FieldLayouts();
  private spec: ResponseSpec | undefined;
  /** The position in the last read that the next row is compared with. */
  private cursor = 0;
  /** Positions of the last read's codes, made when a row has moved. */
  private codes: Map<Scalar, number> | undefined;
  /** Changed values of the row being read, at their field index; `KEEP` elsewhere. */
  private readonly values: unknown[] = new Array<unknown>(64).fill(KEEP);
  /** The value `integerEnd` read last. */
  private readonly int: ScannedInteger = { value: 0 };

  /** Whether bodies of `spec` can be read incrementally: a list of object rows. */
  static handles(spec: ResponseSpec): boolean {
    return spec.list !== undefined && typeof spec.list.row !== 'string';
  }

  /**
   * Reads a body of `spec`: the normalised body and the delta from the
   * last read, or the reason to read it the plain way (the reader then
   * keeps its last read).
   */
  read(spec: ResponseSpec, bytes: Buffer): { ok: true; value: ListRead } | { ok: false; reason: PlainReason } {
    const list = spec.list;
    if (list === undefined || typeof list.row === 'string') return { ok: false, reason: 'envelope' };
    if (spec !== this.spec) this.last = undefined;
    this.spec = spec;
    const end = bytes.length;
    const open = bytes[skipWs(bytes, 0, end)] === 0x7b ? firstArray(bytes, 0, end) : -1;
    if (open < 0) return { ok: false, reason: 'envelope' };
    const next = this.spare;
    next.reset(bytes);
    this.cursor = 0;
    this.codes = undefined;
    const close = this.rows(bytes, open, list, next);
    if (close < 0) return { ok: false, reason: close === FAIL ? 'syntax' : 'rows' };
    const env = bytes.toString('utf8', 0, open) + SENTINEL_JSON + bytes.toString('utf8', close + 1, end);
    let body: unknown;
    try {
      body = JSON.parse(env);
    } catch {
      return { ok: false, reason: 'syntax' };
    }
    const top = normaliseTop(spec, body);
    if (!top.ok || top.value.list !== SENTINEL || sentinels(body) !== 1) return { ok: false, reason: 'envelope' };
    next.trim();
    this.spare = this.last ?? new Generation();
    this.last = next;
    return { ok: true, value: this.result(list, top.value.data, top.value.issues, next) };
  }

  /** Reads the rows of the list whose `[` is at `open`; returns the index of its `]`, `FAIL`, or -2 for an element that is not an object. */
  private rows(b: Buffer, open: number, list: ListSpec, next: Generation): number {
    const end = b.length;
    let p = skipWs(b, open + 1, end);
    if (b[p] === 0x5d) return p;
    for (;;) {
      // After a comma: `]` is a trailing comma (not JSON), anything else but a row an element this reader does not read.
      if (b[p] !== 0x7b) return b[p] === 0x5d ? FAIL : -2;
      p = this.row(b, p, list, next);
      if (p < 0) return p;
      p = skipWs(b, p, end);
      if (b[p] === 0x5d) return p;
      if (b[p] !== 0x2c) return FAIL;
      p = skipWs(b, p + 1, end);
    }
  }

  /** Reads the row at `s`: the same as last time, a few values changed, or whole. Returns its end. */
  private row(b: Buffer, s: number, list: ListSpec, next: Generation): number {
    const last = this.last;
    const j = this.cursor;
    if (last !== undefined && j < last.count) {
      const ls = last.start[j]!;
      const len = last.end[j]! - ls;
      if (s + len <= b.length && sameView(next.view, s, last.view, ls, len)) {
        this.same(s, len, last, j, next);
        return s + len;
      }
      const layout = last.layouts[j];
      if (layout !== undefined) {
        const e = this.changed(b, s, last, j, layout, next);
        if (e > 0) {
          this.cursor++;
          return e;
        }
      }
    }
    return this.whole(b, s, list, next);
  }

  /** Records a row whose bytes are those of the last read's row `j`. */
  private same(s: number, len: number, last: Generation, j: number, next: Generation): void {
    const layout = last.layouts[j];
    let at = 0;
    if (layout !== undefined) {
      const n = 3 * layout.names.length;
      at = next.slots(layout.names.length);
      const from = last.fieldAt[j]!;
      const nf = next.fields;
      const lf = last.fields;
      for (let k = 0; k < n; k++) nf[at + k] = lf[from + k]!;
    }
    next.add(s, s + len, last.rows[j]!, layout, at, last.dropped[j]!);
    this.cursor++;
  }

  /**
   * Compares the row at `s` with the last read's row `j` field by field:
   * everything but the values must be the same bytes, and the row key's
   * value too. Records the row (its base with the changed values) and
   * returns its end; returns -1 (having recorded nothing) when it cannot.
   */
  private changed(b: Buffer, s: number, last: Generation, j: number, layout: FieldLayout, next: Generation): number {
    const ls = last.start[j]!;
    const from = last.fieldAt[j]!;
    const n = layout.names.length;
    const end = b.length;
    const nv = next.view;
    const lv = last.view;
    const used = next.used;
    const changes = next.changes;
    const at = next.slots(n);
    const nf = next.fields;
    const lf = last.fields;
    let p = s;
    let lp = ls;
    let count = 0;
    for (let f = 0; f < n; f++) {
      const lvs = ls + lf[from + 3 * f]!;
      const lve = ls + lf[from + 3 * f + 1]!;
      const gap = lvs - lp;
      const vs = p + gap;
      if (vs >= end || !sameView(nv, p, lv, lp, gap)) return this.undo(next, used, changes);
      // The last value's bytes again, not followed by more of a number: the same token, with no need to scan it.
      let ve = vs + lve - lvs;
      const same = ve < end && sameView(nv, vs, lv, lvs, lve - lvs) && !numberGoesOn(b[ve]!);
      const type = layout.types[f];
      // A value that changed: the common case, an integer where a number is declared, read in one pass.
      let int = NaN;
      if (!same) {
        ve = type === 'n' || type === undefined ? integerEnd(b, vs, end, this.int) : -1;
        if (ve >= 0) int = this.int.value;
        else {
          ve = scalarEnd(b, vs, end);
          if (ve < 0) return this.undo(next, used, changes);
        }
      }
      nf[at + 3 * f] = vs - s;
      nf[at + 3 * f + 1] = ve - s;
      const lastJson = lf[from + 3 * f + 2]!;
      p = ve;
      lp = lve;
      if (same) {
        nf[at + 3 * f + 2] = lastJson;
        continue;
      }
      if (f === layout.keyIndex) return this.undo(next, used, changes);
      // Any other value is read as the normaliser reads it (an integer's bytes are its JSON).
      let v: Scalar | boolean | typeof UNUSABLE = int;
      let json = 1;
      if (v !== v) {
        v = fieldValue(b, vs, ve, type);
        if (v === UNUSABLE) return this.undo(next, used, changes);
        json = tokenIsJson(b, vs, ve, v) ? 1 : 0;
      }
      nf[at + 3 * f + 2] = json;
      // Two values whose bytes are their JSON differ exactly when their bytes do; otherwise compare the values.
      if ((json === 1 && lastJson === 1) || v !== (last.rows[j] as Row)[layout.names[f]!]) {
        this.values[f] = v;
        count++;
        next.change(f);
      }
    }
    const tail = last.end[j]! - lp;
    if (p + tail > end || !sameView(nv, p, lv, lp, tail)) return this.undo(next, used, changes);
    const base = last.rows[j] as Row;
    const row = count === 0 ? base : this.copy(base, layout, next, changes, count);
    const q = next.add(s, p + tail, row, layout, at, 0);
    next.bases[q] = base;
    next.changedAt[q] = changes;
    next.changedCount[q] = count;
    return p + tail;
  }

  /** The base row with the changed values set (`values` holds them at their field index). */
  private copy(base: Row, layout: FieldLayout, next: Generation, changes: number, count: number): Row {
    const row = layout.make(base, this.values);
    for (let k = 0; k < count; k++) this.values[next.changed[changes + k]!] = KEEP;
    return row;
  }

  private undo(next: Generation, used: number, changes: number): number {
    for (let k = changes; k < next.changes; k++) this.values[next.changed[k]!] = KEEP;
    next.used = used;
    next.changes = changes;
    return -1;
  }

  /** Reads the row at `s` on its own: `JSON.parse` and `normaliseRow`, and its field layout for the next read. */
  private whole(b: Buffer, s: number, list: ListSpec, next: Generation): number {
    const scan = this.scan;
    const flat = scan.scan(b, s, b.length);
    const e = flat ? scan.end : compositeEnd(b, s, b.length);
    if (e < 0) return FAIL;
    let raw: unknown;
    try {
      raw = JSON.parse(b.toString('utf8', s, e));
    } catch {
      return FAIL;
    }
    const table = list.row as FieldTable;
    const r = normaliseRow(raw, table, list.rowKey, list.required);
    if (typeof r === 'string') {
      next.add(s, e, r, undefined, 0, 1);
      this.cursor++;
      return e;
    }
    const k = this.resync(list.rowKey === undefined ? undefined : r[list.rowKey]);
    const last = this.last;
    if (k >= 0 && last !== undefined && last.end[k]! - last.start[k]! === e - s && sameView(next.view, s, last.view, last.start[k]!, e - s)) {
      // A row that moved (rows before it appeared or went): the same bytes as its last read, so the same row.
      this.cursor = k;
      this.same(s, e - s, last, k, next);
      return e;
    }
    const layout = flat ? this.layouts.of(b, scan, r, table, list.rowKey) : undefined;
    let at = 0;
    if (layout !== undefined) {
      at = next.slots(scan.count);
      const nf = next.fields;
      for (let f = 0; f < scan.count; f++) {
        const vs = scan.spans[4 * f + 2]!;
        const ve = scan.spans[4 * f + 3]!;
        nf[at + 3 * f] = vs - s;
        nf[at + 3 * f + 1] = ve - s;
        nf[at + 3 * f + 2] = tokenIsJson(b, vs, ve, r[layout.names[f]!]) ? 1 : 0;
      }
    }
    next.add(s, e, r, layout, at, 0);
    return e;
  }

  /**
   * After a row read whole: the next row is compared with the one after
   * this code's place in the last read. Returns that place when the code
   * was found elsewhere than at the cursor, else -1.
   */
  private resync(code: Scalar | undefined): number {
    const last = this.last;
    const j = this.cursor;
    const at = j < (last?.count ?? 0) ? last!.rows[j] : undefined;
    if (last === undefined || code === undefined || (typeof at === 'object' && at[this.spec!.list!.rowKey!] === code)) {
      this.cursor++;
      return -1;
    }
    if (this.codes === undefined) {
      const key = this.spec!.list!.rowKey!;
      this.codes = new Map();
      for (let k = last.count - 1; k >= 0; k--) {
        const r = last.rows[k]!;
        if (typeof r === 'object' && r[key] !== undefined) this.codes.set(r[key], k);
      }
    }
    const k = this.codes.get(code);
    // A code not in the last read is a new row: the last read's row at the cursor may still come.
    if (k === undefined) return -1;
    this.cursor = k + 1;
    return k;
  }

  /** The normalised body: the usable rows in order, the dropped ones counted and described. */
  private result(list: ListSpec, data: Record<string, unknown>, issues: RowIssue[], g: Generation): ListRead {
    const rows: Row[] = [];
    const at = new Int32Array(g.count);
    let dropped = 0;
    for (let q = 0; q < g.count; q++) {
      if (g.dropped[q] === 0) {
        at[rows.length] = q;
        rows.push(g.rows[q] as Row);
      } else {
        dropped++;
        if (issues.length < MAX_ISSUES) issues.push({ index: q, reason: g.rows[q] as string });
      }
    }
    data[list.key] = rows;
    return { value: { data, rows, dropped, issues }, delta: new ListDelta(g, at) };
  }
}
