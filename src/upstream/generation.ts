import type { FieldLayout } from './listrows.js';
import type { Row } from './normalise.js';
import { C, F, LAYOUT_FIELDS, R, type ListKernel, type Region } from './kernel/kernel.js';

/**
 * What a `ListReader` keeps of one read of a list body (`Generation`), and
 * the view of it the state store takes with the rows (`ListDelta`).
 */

const EMPTY = Buffer.alloc(0);

/** Bytes per changed-field entry (`[field, kind]`) and per value of one. */
const CHANGE_BYTES = 8;

/**
 * One read of a list body, by list position. The body's bytes are copied
 * into the reader's kernel, and what the reader found of each row is kept
 * there, in a record of `R.WORDS` words: its byte range, its field layout
 * (an id of the reader's), where its field slots start, whether it was
 * dropped, and for a row compared field by field with the previous read's
 * row `R.BASE`, which of its values changed (entries in `changes`). Each
 * field of a row with a layout has three slots in `fields`: where its
 * value starts and ends relative to the row's first byte, and 1 when those
 * bytes are the value's JSON (`tokenIsJson`). The normalised rows (or why
 * a row was dropped) and the rows a changed row was compared with are
 * JavaScript values, kept here.
 */
export class Generation {
  /** The body, as given. */
  bytes: Buffer = EMPTY;
  view: DataView<ArrayBufferLike> = new DataView(EMPTY.buffer, 0, 0);
  /** Rows (list positions) read. */
  count = 0;
  /** Field slots in use. */
  used = 0;
  /** Changed-field entries in use. */
  changes = 0;
  /** The normalised row, or why the row was dropped. */
  readonly rows: (Row | string)[] = [];
  /** Per row: the previous read's row it was compared with field by field (meaningful when its changed count > 0). */
  readonly bases: (Row | undefined)[] = [];
  /** The body's copy in the kernel's memory. */
  body: Region | undefined;
  /** Row records. */
  recs: Region | undefined;
  /** Field slots (i32, three per field). */
  fields: Region | undefined;
  /** Changed-field entries (two i32 each). */
  changed: Region | undefined;
  /** The values of changed integers (f64, one per entry). */
  values: Region | undefined;
  /** The rows the kernel recorded with changed values, in order (i32 each; as many as rows at most). */
  changedRows: Region | undefined;
  /** How many are listed there. */
  changedRowCount = 0;
  /** Rows recorded dropped by the kernel. */
  droppedByKernel = 0;
  /**
   * Whether every row was read by the kernel against the previous read's
   * row at the same position (none read whole, none moved): the rows are
   * then the previous read's, position by position, but for those listed
   * in `changedRows`.
   */
  aligned = true;
  /** Which read of its reader this is (1, 2, …). */
  read = 0;

  /** An empty read in `kernel`'s memory. */
  constructor(readonly kernel: ListKernel) {}

  /** Starts read `read` of `bytes`: copies them into the kernel's memory, with room for what `like` (the last read) held. */
  reset(bytes: Buffer, like: Generation | undefined, read: number): void {
    this.bytes = bytes;
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
    this.count = 0;
    this.used = 0;
    this.changes = 0;
    this.changedRowCount = 0;
    this.droppedByKernel = 0;
    this.aligned = true;
    this.read = read;
    const k = this.kernel;
    const rows = Math.max(64, (like?.count ?? 0) + 16);
    const entries = Math.max(64, (like?.changes ?? 0) + 64);
    this.body = k.fit(this.body, bytes.length);
    this.recs = k.fit(this.recs, rows * R.WORDS * 4);
    this.changedRows = k.fit(this.changedRows, rows * 4);
    this.fields = k.fit(this.fields, 4 * Math.max(3 * 64, (like?.used ?? 0) + 3 * 64));
    this.changed = k.fit(this.changed, CHANGE_BYTES * entries);
    this.values = k.fit(this.values, CHANGE_BYTES * entries);
    k.u8.set(bytes, this.body.at);
  }

  /** Row records this read has room for. */
  get rowCap(): number {
    return Math.min(Math.floor(this.recs!.bytes / (R.WORDS * 4)), this.changedRows!.bytes >> 2);
  }

  /** Field slots this read has room for. */
  get fieldCap(): number {
    return this.fields!.bytes >> 2;
  }

  /** Changed-field entries this read has room for. */
  get changeCap(): number {
    return Math.min(this.changed!.bytes, this.values!.bytes) / CHANGE_BYTES;
  }

  /** Makes room for the next row, whatever its fields, keeping what is held: each of the three doubles where it could fall short. */
  room(): void {
    const rows = this.count + 1 > this.rowCap ? 2 * this.rowCap : this.rowCap;
    const slots = this.used + 3 * LAYOUT_FIELDS > this.fieldCap ? 2 * (this.used + 3 * LAYOUT_FIELDS) : this.fieldCap;
    const entries = this.changes + LAYOUT_FIELDS > this.changeCap ? 2 * (this.changes + LAYOUT_FIELDS) : this.changeCap;
    this.grow(rows, slots, entries);
  }

  /** Makes room for `rows` records, `slots` field slots and `entries` changed-field entries in all, keeping what is held. */
  grow(rows: number, slots: number, entries: number): void {
    const k = this.kernel;
    const move = (r: Region, bytes: number, keep: number): Region => {
      const n = k.fit(r, bytes);
      if (n !== r) k.u8.copyWithin(n.at, r.at, r.at + keep);
      return n;
    };
    this.recs = move(this.recs!, rows * R.WORDS * 4, this.count * R.WORDS * 4);
    this.changedRows = move(this.changedRows!, rows * 4, this.changedRowCount * 4);
    this.fields = move(this.fields!, slots * 4, this.used * 4);
    this.changed = move(this.changed!, entries * CHANGE_BYTES, this.changes * CHANGE_BYTES);
    this.values = move(this.values!, entries * CHANGE_BYTES, this.changes * CHANGE_BYTES);
  }

  /** Drops rows `q` on from the list of changed rows (their records are dropped). */
  unlist(q: number): void {
    const i32 = this.kernel.i32;
    const list = this.changedRows!.at >> 2;
    while (this.changedRowCount > 0 && i32[list + this.changedRowCount - 1]! >= q) this.changedRowCount--;
  }

  /** Word `w` of row `q`'s record. */
  rec(q: number, w: number): number {
    return this.kernel.i32[(this.recs!.at >> 2) + q * R.WORDS + w]!;
  }

  /** Sets word `w` of row `q`'s record. */
  setRec(q: number, w: number, v: number): void {
    this.kernel.i32[(this.recs!.at >> 2) + q * R.WORDS + w] = v;
  }

  /** The index in the kernel's i32 words of field slot 0 of this read. */
  get fieldBase(): number {
    return this.fields!.at >> 2;
  }

  /** Reserves the slots of `n` fields; returns the first (relative to `fieldBase`). */
  slots(n: number): number {
    const at = this.used;
    if (at + 3 * n > this.fieldCap) this.grow(this.rowCap, 2 * (at + 3 * n), this.changeCap);
    this.used += 3 * n;
    return at;
  }

  /** Records a changed field of the row being read (an entry of kind `K.OTHER`: its value is in the row). */
  change(f: number): void {
    if (this.changes >= this.changeCap) this.grow(this.rowCap, this.fieldCap, 2 * (this.changes + 1));
    const i32 = this.kernel.i32;
    const e = (this.changed!.at >> 2) + 2 * this.changes++;
    i32[e] = f;
    i32[e + 1] = 1;
  }

  /**
   * Records the next row (`dropped`: 1 when `row` is the reason it was
   * dropped; `layout`: its id, -1 for none; `base`: the previous read's
   * row it is the same as, -1 for none); returns its position.
   */
  add(start: number, end: number, row: Row | string, layout: number, fieldAt: number, dropped: number, base: number): number {
    const q = this.count++;
    if (q >= this.rowCap) this.grow(2 * q + 16, this.fieldCap, this.changeCap);
    const i32 = this.kernel.i32;
    const r = (this.recs!.at >> 2) + q * R.WORDS;
    i32[r + R.START] = start;
    i32[r + R.END] = end;
    i32[r + R.LAYOUT] = layout;
    i32[r + R.FIELD_AT] = fieldAt;
    i32[r + R.FLAGS] = dropped;
    i32[r + R.CHANGED_AT] = 0;
    i32[r + R.CHANGED_COUNT] = 0;
    i32[r + R.BASE] = base;
    this.rows[q] = row;
    return q;
  }

  /** Writes this read's regions and counts into the kernel's control block as the next read, `last` as the last. */
  toControl(last: Generation | undefined): void {
    const k = this.kernel;
    const i32 = k.i32;
    const c = k.ctl;
    i32[c + C.NEXT] = this.body!.at;
    i32[c + C.END] = this.bytes.length;
    i32[c + C.NEXT_ROWS] = this.recs!.at;
    i32[c + C.NEXT_FIELDS] = this.fields!.at;
    i32[c + C.CHANGES] = this.changed!.at;
    i32[c + C.VALUES] = this.values!.at;
    i32[c + C.ROW_CAP] = this.rowCap;
    i32[c + C.FIELD_CAP] = this.fieldCap;
    i32[c + C.CHANGE_CAP] = this.changeCap;
    i32[c + C.Q] = this.count;
    i32[c + C.USED] = this.used;
    i32[c + C.CHANGED] = this.changes;
    i32[c + C.CHANGED_ROWS] = this.changedRows!.at;
    i32[c + C.CHANGED_ROW_COUNT] = this.changedRowCount;
    i32[c + C.DROPPED] = this.droppedByKernel;
    i32[c + C.LAST] = last?.body?.at ?? 0;
    i32[c + C.LAST_ROWS] = last?.recs?.at ?? 0;
    i32[c + C.LAST_FIELDS] = last?.fields?.at ?? 0;
    i32[c + C.LAST_COUNT] = last?.count ?? 0;
  }

  /** Takes the counts the kernel reached from its control block. */
  fromControl(): void {
    const i32 = this.kernel.i32;
    const c = this.kernel.ctl;
    this.count = i32[c + C.Q]!;
    this.used = i32[c + C.USED]!;
    this.changes = i32[c + C.CHANGED]!;
    this.changedRowCount = i32[c + C.CHANGED_ROW_COUNT]!;
    this.droppedByKernel = i32[c + C.DROPPED]!;
    // The kernel lists at most one changed row per row it recorded, in a region as long as the records'.
    if (this.changedRowCount > this.count) throw new Error(`list kernel: ${this.changedRowCount} changed rows listed for ${this.count} rows`);
  }

  /** Drops references past the rows read (a shorter list than the last). */
  trim(): void {
    this.rows.length = this.count;
    this.bases.length = this.count;
  }
}

/**
 * How each usable row of a read (index into `Normalised.rows`) relates to
 * the previous read, for the state store: a row object that is the
 * previous read's is unchanged; a row with `changedCount` > 0 is its
 * `base` with the values of those fields changed, and each of its values'
 * bytes are at hand (`fields`), and the kernel can write its checksum and
 * patch frame from them. Valid until the reader's next read but one.
 */
export class ListDelta {
  /** Which read of its reader this is: the read before it is `read - 1`. */
  readonly read: number;
  /**
   * Whether the rows are the previous read's, position by position, but
   * for the `changedRows` (every row read against the previous read's
   * row at its position; none dropped).
   */
  readonly aligned: boolean;

  /** @param g the read; @param at the list position of each usable row (undefined: the same as its index); @param layouts the reader's field layouts by id. */
  constructor(
    private readonly g: Generation,
    private readonly at: Int32Array | undefined,
    private readonly layouts: readonly (FieldLayout | undefined)[],
  ) {
    this.read = g.read;
    this.aligned = at === undefined && g.aligned;
  }

  /** The reader's kernel: a delta's `read` counts the reads of its kernel. */
  get reader(): object {
    return this.g.kernel;
  }

  /** How many rows have changed values (when `aligned`). */
  get changedRows(): number {
    return this.aligned ? this.g.changedRowCount : 0;
  }

  /** The index of the `k`-th row with changed values (when `aligned`), ascending. */
  changedRow(k: number): number {
    return this.g.kernel.i32[(this.g.changedRows!.at >> 2) + k]!;
  }

  private q(r: number): number {
    return this.at === undefined ? r : this.at[r]!;
  }

  /** The body. */
  get bytes(): Uint8Array {
    return this.g.bytes;
  }

  /** A view of `bytes`, to read them a word at a time. */
  get view(): DataView<ArrayBufferLike> {
    return this.g.view;
  }

  /** The kernel that read the body. */
  get kernel(): ListKernel {
    return this.g.kernel;
  }

  /** How many values of row `r` differ from its base (0 when it was not compared field by field). */
  changedCount(r: number): number {
    return this.g.rec(this.q(r), R.CHANGED_COUNT);
  }

  /** The previous read's row that row `r` is a copy of with `changedCount(r)` values changed. */
  base(r: number): Row | undefined {
    return this.g.bases[this.q(r)];
  }

  /** The key index (in the row's key order) of the `k`-th changed value of row `r`, ascending. */
  changedField(r: number, k: number): number {
    const g = this.g;
    return g.kernel.i32[(g.changed!.at >> 2) + 2 * (g.rec(this.q(r), R.CHANGED_AT) + k)]!;
  }

  /** Where row `r` starts in `bytes`. */
  rowStart(r: number): number {
    return this.g.rec(this.q(r), R.START);
  }

  /** Bytes of row `r`. */
  rowLength(r: number): number {
    const q = this.q(r);
    return this.g.rec(q, R.END) - this.g.rec(q, R.START);
  }

  /** Three entries per field of row `r` from `fieldAt(r)`: value start and end relative to `rowStart(r)`, 1 when those bytes are the value's JSON. */
  get fields(): Int32Array {
    return this.g.kernel.i32;
  }

  /** The first entry of row `r` in `fields`. */
  fieldAt(r: number): number {
    return this.g.fieldBase + this.g.rec(this.q(r), R.FIELD_AT);
  }

  /** The field layout row `r` was read with, when it has one. */
  layout(r: number): FieldLayout | undefined {
    const id = this.g.rec(this.q(r), R.LAYOUT);
    return id < 0 ? undefined : this.layouts[id];
  }

  /** Points the kernel's `change` at this read (see `ListKernel.change`). */
  bind(): void {
    const g = this.g;
    const i32 = g.kernel.i32;
    const c = g.kernel.ctl;
    i32[c + F.BODY] = g.body!.at;
    i32[c + F.ROWS] = g.recs!.at;
    i32[c + F.FIELDS] = g.fields!.at;
    i32[c + F.CHANGES] = g.changed!.at;
  }

  /** The kernel's `change` of row `r` (the delta bound, `bind`). */
  change(r: number, shape: number, seq: number, crc: number | undefined, codeLen: number): number {
    return this.g.kernel.change(this.q(r), shape, seq, crc, codeLen);
  }
}
