import type { ListSpec, ResponseSpec } from './catalogue.js';
import type { FieldTable } from './fields.js';
import { Generation, ListDelta } from './generation.js';
import { C, K, LAYOUT_BYTES, LAYOUT_INTS, LAYOUT_SLOTS, ListKernel, R, RUN, S, type Region } from './kernel/kernel.js';
import { FieldLayouts, KEEP, UNUSABLE, fieldValue, tokenIsJson, type FieldLayout } from './listrows.js';
import { MAX_ISSUES, normaliseRow, normaliseTop, type Normalised, type Row, type RowIssue, type Scalar } from './normalise.js';
import { FieldScan, compositeEnd, firstArray, skipWs } from './scan.js';

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

/** Why a body was not read incrementally (it is then read whole); `kernel`: this process cannot run the kernel (no WebAssembly). */
export type PlainReason = 'envelope' | 'rows' | 'syntax' | 'kernel';

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

/**
 * An integer read from the kernel's f64 values, small ones as int32: a
 * double taken from a `Float64Array` and stored in an object is boxed (a
 * heap number of its own) unless it is made an int32 first, while
 * `JSON.parse` stores small integers unboxed.
 */
function integer(v: number): number {
  return v >= -1_073_741_824 && v <= 1_073_741_823 ? v | 0 : v;
}

/** Room for a changed row's canonical bytes, to checksum it as it is read; a longer row is checksummed by the store. */
const ROW_SCRATCH = 4 << 10;

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
 * path and parameters each time), remembering the last one. The byte work
 * (finding each row, comparing it with the last body's, reading changed
 * integers) is the kernel's (`kernel/`); what it leaves (a row read whole,
 * a changed value that is not an integer) is read here. Not for
 * concurrent reads.
 */
export class ListReader {
  /** The kernel, made at the first read; null when it cannot be (every body is then read the plain way). */
  private kernel_: ListKernel | null | undefined;
  private last: Generation | undefined;
  private spare_: Generation | undefined;
  private readonly scan = new FieldScan();
  private layouts = new FieldLayouts();
  /** Field layouts by their id in the kernel's table, and ids by layout. */
  private layoutById: FieldLayout[] = [];
  private readonly layoutIds = new Map<FieldLayout, number>();
  private layoutTable_: Region | undefined;
  private spec: ResponseSpec | undefined;
  /** The position in the last read that the next row is compared with. */
  private cursor = 0;
  /** Positions of the last read's codes, made when a row has moved. */
  private codes: Map<Scalar, number> | undefined;
  /** Reads made. */
  private reads = 0;
  /** Changed values of the row being made, at their field index; `KEEP` elsewhere. */
  private readonly values: unknown[] = new Array<unknown>(64).fill(KEEP);

  /** The kernel (made by the first read). */
  private get kernel(): ListKernel {
    return this.kernel_!;
  }

  private get layoutTable(): Region {
    return this.layoutTable_!;
  }

  /** Bytes of memory the reader's kernel holds (0 before its first read). */
  get kernelBytes(): number {
    return this.kernel_?.memoryBytes ?? 0;
  }

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
    if (this.kernel_ === undefined) {
      try {
        this.kernel_ = new ListKernel();
        this.layoutTable_ = this.kernel_.alloc(LAYOUT_SLOTS * LAYOUT_BYTES);
        this.spare_ = new Generation(this.kernel_);
      } catch {
        // Node without WebAssembly (`--jitless`): the plain way, counted.
        this.kernel_ = null;
      }
    }
    if (this.kernel_ === null) return { ok: false, reason: 'kernel' };
    if (spec !== this.spec) this.last = undefined;
    this.spec = spec;
    // Layouts that keep changing have filled the kernel's table: start again from it empty, and from no last read.
    if (this.layoutById.length >= LAYOUT_SLOTS) {
      this.layoutById = [];
      this.layoutIds.clear();
      this.layouts = new FieldLayouts();
      this.last = undefined;
    }
    const end = bytes.length;
    const open = bytes[skipWs(bytes, 0, end)] === 0x7b ? firstArray(bytes, 0, end) : -1;
    if (open < 0) return { ok: false, reason: 'envelope' };
    const next = this.spare_!;
    next.reset(bytes, this.last, ++this.reads);
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
    this.spare_ = this.last ?? new Generation(this.kernel);
    this.last = next;
    return { ok: true, value: this.result(list, top.value.data, top.value.issues, next) };
  }

  /**
   * Reads the rows of the list whose `[` is at `open`: the kernel reads
   * what it can, the rest is read here, until the list's `]`. Returns the
   * index of the `]`, `FAIL`, or -2 for an element that is not an object.
   */
  private rows(b: Buffer, open: number, list: ListSpec, next: Generation): number {
    const k = this.kernel;
    const c = k.ctl;
    const last = this.last;
    const scratch = k.scratch('rowcrc', ROW_SCRATCH);
    next.toControl(last);
    let i32 = k.i32;
    i32[c + C.SCRATCH] = scratch.at;
    i32[c + C.SCRATCH_CAP] = ROW_SCRATCH;
    i32[c + C.LAYOUTS] = this.layoutTable.at;
    i32[c + C.P] = skipWs(b, open + 1, b.length);
    i32[c + C.J] = 0;
    i32[c + C.PHASE] = 0;
    for (;;) {
      const from = next.count;
      const listed = next.changedRowCount;
      const r = k.run();
      next.fromControl();
      i32 = k.i32;
      this.cursor = i32[c + C.J]!;
      let at = i32[c + C.P]!;
      const bad = this.made(b, next, from, listed);
      if (bad >= 0 || r === RUN.STOP) next.aligned = false;
      if (bad >= 0) {
        // A changed value the normaliser refuses: that row (the kernel's last, PENDING) is read whole.
        at = next.rec(bad, R.START);
        this.cursor = next.rec(bad, R.BASE);
        next.used = next.rec(bad, R.FIELD_AT);
        next.changes = next.rec(bad, R.CHANGED_AT);
        next.count = bad;
        next.unlist(bad);
      } else if (r === RUN.PENDING) continue;
      else if (r === RUN.END) {
        // Lined up with the last read only if it had as many rows.
        if (last === undefined || next.count !== last.count) next.aligned = false;
        return at;
      } else if (r === RUN.FAIL) return FAIL;
      else if (r === RUN.NOT_OBJECT) return -2;
      else if (r === RUN.SPACE) {
        next.room();
        next.toControl(last);
        k.i32[c + C.LAYOUTS] = this.layoutTable.at;
        continue;
      }
      // A row the kernel left (RUN.STOP), or the refused one: read whole here, then the kernel goes on after it.
      const e = this.whole(b, at, list, next);
      if (e < 0) return e;
      next.toControl(last);
      i32 = k.i32;
      i32[c + C.LAYOUTS] = this.layoutTable.at;
      i32[c + C.P] = e;
      i32[c + C.J] = this.cursor;
      i32[c + C.PHASE] = 1;
    }
  }

  /**
   * Makes the rows of the records the kernel wrote from `from` on (and of
   * the changed rows it listed from `listed` on): a row with the last
   * read's bytes is the last read's row; a row with values changed is its
   * base with those values. Returns the first row whose changed value the
   * normaliser refuses (to be read whole), or -1.
   */
  private made(b: Buffer, next: Generation, from: number, listed: number): number {
    const last = this.last;
    if (last === undefined) return -1;
    const rows = next.rows;
    const lrows = last.rows;
    const i32 = this.kernel.i32;
    if (next.aligned) {
      // Every row so far was read against the last read's row at its position: those rows, then the changed ones made.
      for (let q = from; q < next.count; q++) rows[q] = lrows[q]!;
      const list = next.changedRows!.at >> 2;
      for (let k = listed; k < next.changedRowCount; k++) {
        const q = i32[list + k]!;
        if (!this.make(b, next, last, q)) return q;
      }
      return -1;
    }
    const recs = next.recs!.at >> 2;
    for (let q = from; q < next.count; q++) {
      const r = recs + q * R.WORDS;
      if (i32[r + R.FLAGS]! >> 8 === S.SAME) rows[q] = lrows[i32[r + R.BASE]!]!;
      else if (!this.make(b, next, last, q)) return q;
    }
    return -1;
  }

  /** Makes the row of record `q`, the last read's row with values changed; false when a changed value is unusable. */
  private make(b: Buffer, next: Generation, last: Generation, q: number): boolean {
    const i32 = this.kernel.i32;
    const f64 = this.kernel.f64;
    const r = (next.recs!.at >> 2) + q * R.WORDS;
    const entries = next.changed!.at >> 2;
    const base = last.rows[i32[r + R.BASE]!] as Row;
    const layout = this.layoutById[i32[r + R.LAYOUT]!]!;
    const c0 = i32[r + R.CHANGED_AT]!;
    let count = i32[r + R.CHANGED_COUNT]!;
    const values = this.values;
    if (i32[r + R.FLAGS]! >> 8 === S.PENDING) {
      count = this.pending(b, next, last, q, layout, base);
      if (count < 0) return false;
    } else {
      const vals = next.values!.at >> 3;
      for (let e = c0; e < c0 + count; e++) values[i32[entries + 2 * e]!] = integer(f64[vals + e]!);
    }
    next.rows[q] = count === 0 ? base : layout.make(base, values);
    next.bases[q] = base;
    for (let e = c0; e < c0 + count; e++) values[i32[entries + 2 * e]!] = KEEP;
    return true;
  }

  /**
   * The changed values of row `q` that the kernel left: each is read as
   * the normaliser reads it and kept when it differs from the base's.
   * Returns how many differ (the row's entries rewritten to those) with
   * their values in `values`, or -1 when one is unusable.
   */
  private pending(b: Buffer, next: Generation, last: Generation, q: number, layout: FieldLayout, base: Row): number {
    const i32 = this.kernel.i32;
    const f64 = this.kernel.f64;
    const entries = next.changed!.at >> 2;
    const vals = next.values!.at >> 3;
    const s = next.rec(q, R.START);
    const slots = next.fieldBase + next.rec(q, R.FIELD_AT);
    const lslots = last.fieldBase + last.rec(next.rec(q, R.BASE), R.FIELD_AT);
    const c0 = next.rec(q, R.CHANGED_AT);
    const n = next.rec(q, R.CHANGED_COUNT);
    const values = this.values;
    let kept = 0;
    for (let e = c0; e < c0 + n; e++) {
      const f = i32[entries + 2 * e]!;
      const kind = i32[entries + 2 * e + 1]!;
      const slot = slots + 3 * f;
      let v: Scalar | boolean | typeof UNUSABLE;
      let json = 1;
      if (kind === K.INT) v = integer(f64[vals + e]!);
      else {
        const vs = s + i32[slot]!;
        const ve = s + i32[slot + 1]!;
        v = fieldValue(b, vs, ve, layout.types[f]);
        if (v === UNUSABLE) {
          for (let x = c0; x < c0 + kept; x++) values[i32[entries + 2 * x]!] = KEEP;
          return -1;
        }
        json = tokenIsJson(b, vs, ve, v) ? 1 : 0;
        i32[slot + 2] = json;
      }
      // Two values whose bytes are their JSON differ exactly when their bytes do; otherwise compare the values.
      if ((json === 1 && i32[lslots + 3 * f + 2] === 1) || v !== base[layout.names[f]!]) {
        values[f] = v;
        const x = c0 + kept++;
        i32[entries + 2 * x] = f;
        i32[entries + 2 * x + 1] = kind;
        f64[vals + x] = kind === K.INT ? (v as number) : NaN;
      }
    }
    next.setRec(q, R.CHANGED_COUNT, kept);
    next.setRec(q, R.FLAGS, S.CHANGED << 8);
    return kept;
  }

  /** Records a row whose bytes are those of the last read's row `j`. */
  private same(s: number, len: number, last: Generation, j: number, next: Generation): void {
    const id = last.rec(j, R.LAYOUT);
    let at = 0;
    if (id >= 0) {
      const n = 3 * this.layoutById[id]!.names.length;
      at = next.slots(n / 3);
      const from = last.fieldBase + last.rec(j, R.FIELD_AT);
      this.kernel.i32.copyWithin(next.fieldBase + at, from, from + n);
    }
    next.add(s, s + len, last.rows[j]!, id, at, last.rec(j, R.FLAGS) & 1, j);
    this.cursor++;
  }

  /** The id of `layout` in the kernel's table, added on first use; -1 when the table is full. */
  private idOf(layout: FieldLayout): number {
    let id = this.layoutIds.get(layout);
    if (id !== undefined) return id;
    if (this.layoutById.length >= LAYOUT_SLOTS) return -1;
    id = this.layoutById.length;
    this.layoutById.push(layout);
    this.layoutIds.set(layout, id);
    const at = this.layoutTable.at + id * LAYOUT_BYTES;
    const n = layout.names.length;
    const i32 = this.kernel.i32;
    const u8 = this.kernel.u8;
    i32[at >> 2] = n;
    i32[(at >> 2) + 1] = layout.keyIndex;
    // Integers are read where a number is declared, and where nothing is (as the normaliser keeps them).
    for (let f = 0; f < n; f++) u8[at + LAYOUT_INTS + f] = layout.types[f] === 'n' || layout.types[f] === undefined ? 1 : 0;
    // Last, as it may grow the memory: how a changed row of these keys is checksummed.
    const canonical = this.kernel.canonical(layout.names);
    this.kernel.i32[(at >> 2) + 2] = canonical;
    return id;
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
      next.add(s, e, r, -1, 0, 1, -1);
      this.cursor++;
      return e;
    }
    const k = this.resync(list.rowKey === undefined ? undefined : r[list.rowKey]);
    const last = this.last;
    if (k >= 0 && last !== undefined && last.rec(k, R.END) - last.rec(k, R.START) === e - s && sameView(next.view, s, last.view, last.rec(k, R.START), e - s)) {
      // A row that moved (rows before it appeared or went): the same bytes as its last read, so the same row.
      this.cursor = k;
      this.same(s, e - s, last, k, next);
      return e;
    }
    const layout = flat ? this.layouts.of(b, scan, r, table, list.rowKey) : undefined;
    const id = layout === undefined ? -1 : this.idOf(layout);
    let at = 0;
    if (id >= 0) {
      at = next.slots(scan.count);
      const nf = this.kernel.i32;
      const base = next.fieldBase + at;
      for (let f = 0; f < scan.count; f++) {
        const vs = scan.spans[4 * f + 2]!;
        const ve = scan.spans[4 * f + 3]!;
        nf[base + 3 * f] = vs - s;
        nf[base + 3 * f + 1] = ve - s;
        nf[base + 3 * f + 2] = tokenIsJson(b, vs, ve, r[layout!.names[f]!]) ? 1 : 0;
      }
    }
    next.add(s, e, r, id, at, 0, -1);
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
    if (g.aligned && g.droppedByKernel === 0) {
      // Every row read by the kernel and none dropped: the usable rows are the rows, position for position.
      const rows = g.rows.slice(0, g.count) as Row[];
      data[list.key] = rows;
      return { value: { data, rows, dropped: 0, issues }, delta: new ListDelta(g, undefined, this.layoutById) };
    }
    const rows: Row[] = [];
    const at = new Int32Array(g.count);
    const i32 = this.kernel.i32;
    const recs = g.recs!.at >> 2;
    let dropped = 0;
    for (let q = 0; q < g.count; q++) {
      if ((i32[recs + q * R.WORDS + R.FLAGS]! & 1) === 0) {
        at[rows.length] = q;
        rows.push(g.rows[q] as Row);
      } else {
        dropped++;
        if (issues.length < MAX_ISSUES) issues.push({ index: q, reason: g.rows[q] as string });
      }
    }
    data[list.key] = rows;
    return { value: { data, rows, dropped, issues }, delta: new ListDelta(g, at, this.layoutById) };
  }
}
