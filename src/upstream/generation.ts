import type { FieldLayout } from './listrows.js';
import type { Row } from './normalise.js';

/**
 * What a `ListReader` keeps of one read of a list body (`Generation`), and
 * the view of it the state store takes with the rows (`ListDelta`).
 */

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

  /** Records the next row (`dropped`: 1 when `row` is the reason it was dropped); returns its position. */
  add(start: number, end: number, row: Row | string, layout: FieldLayout | undefined, fieldAt: number, dropped: number): number {
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
    this.dropped[q] = dropped;
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

/**
 * How each usable row of a read (index into `Normalised.rows`) relates to
 * the previous read, for the state store: a row object that is the
 * previous read's is unchanged; a row with `changedCount` > 0 is its
 * `base` with the values of those fields changed, and each of its values'
 * bytes are at hand (`fields`). Valid until the reader's next read but one.
 */
export class ListDelta {
  /** @param g the read; @param at the list position of each usable row. */
  constructor(
    private readonly g: Generation,
    private readonly at: Int32Array,
  ) {}

  /** The body. */
  get bytes(): Uint8Array {
    return this.g.bytes;
  }

  /** A view of `bytes`, to read them a word at a time. */
  get view(): DataView<ArrayBufferLike> {
    return this.g.view;
  }

  /** How many values of row `r` differ from its base (0 when it was not compared field by field). */
  changedCount(r: number): number {
    return this.g.changedCount[this.at[r]!]!;
  }

  /** The previous read's row that row `r` is a copy of with `changedCount(r)` values changed. */
  base(r: number): Row | undefined {
    return this.g.bases[this.at[r]!];
  }

  /** The key index (in the row's key order) of the `k`-th changed value of row `r`, ascending. */
  changedField(r: number, k: number): number {
    return this.g.changed[this.g.changedAt[this.at[r]!]! + k]!;
  }

  /** Where row `r` starts in `bytes`. */
  rowStart(r: number): number {
    return this.g.start[this.at[r]!]!;
  }

  /** Three entries per field of row `r` from `fieldAt(r)`: value start and end relative to `rowStart(r)`, 1 when those bytes are the value's JSON. */
  get fields(): Int32Array {
    return this.g.fields;
  }

  /** The first entry of row `r` in `fields`. */
  fieldAt(r: number): number {
    return this.g.fieldAt[this.at[r]!]!;
  }
}
