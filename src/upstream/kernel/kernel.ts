import { KERNEL_WASM } from './wasm.js';

/**
 * The list kernel's memory and calls: one WebAssembly instance per
 * `ListReader`, with memory of its own that holds the bodies it compares,
 * the records of its last two reads and the frames being written. The
 * kernel's functions (`assembly/index.ts`) take pointers; this class lays
 * the memory out with a bump allocator (a region outgrown is left behind:
 * regions grow by half again at least, so what is left is bounded by what
 * is used) and keeps typed views of it, made again when the memory grows.
 * The memory goes with the reader.
 */

/** Slots of the control block of `run` (i32), as `assembly/index.ts` numbers them. */
export const C = {
  NEXT: 0,
  END: 1,
  LAST: 2,
  NEXT_ROWS: 3,
  LAST_ROWS: 4,
  LAST_COUNT: 5,
  NEXT_FIELDS: 6,
  LAST_FIELDS: 7,
  CHANGES: 8,
  VALUES: 9,
  LAYOUTS: 10,
  ROW_CAP: 11,
  FIELD_CAP: 12,
  CHANGE_CAP: 13,
  P: 14,
  Q: 15,
  J: 16,
  USED: 17,
  CHANGED: 18,
  PHASE: 19,
  WHY: 20,
  CHANGED_ROWS: 21,
  CHANGED_ROW_COUNT: 22,
  DROPPED: 23,
  SCRATCH: 24,
  SCRATCH_CAP: 25,
  TABLES: 26,
} as const;

/** Slots of the control block of `change` (i32), as `assembly/index.ts` numbers them. */
export const F = {
  BODY: 32,
  ROWS: 33,
  FIELDS: 34,
  CHANGES: 35,
  TOPIC: 36,
  TOPIC_LEN: 37,
  TS: 38,
  TS_LEN: 39,
  OUT: 40,
  USED: 41,
  CAP: 42,
  CODE: 43,
  SCRATCH: 44,
  SCRATCH_CAP: 45,
  KEY: 46,
  CRC: 47,
  TABLES: 48,
} as const;

/** What `change` returned other than a frame's start. */
export const CHANGE = { NO_CRC: -1, NO_ROOM: -2, NO_CODE: -3, NO_FRAME: -4 } as const;

/** Words of a row record, and what each holds. */
export const R = { WORDS: 10, START: 0, END: 1, LAYOUT: 2, FIELD_AT: 3, FLAGS: 4, CHANGED_AT: 5, CHANGED_COUNT: 6, BASE: 7, CRC: 8 } as const;

/** A row record's status (`R.FLAGS` >> 8): the same bytes, values changed (all integers), values changed that the caller reads. */
export const S = { SAME: 0, CHANGED: 1, PENDING: 2 } as const;

/** What `run` returned. */
export const RUN = { END: 0, STOP: 1, SPACE: 2, PENDING: 3, FAIL: -1, NOT_OBJECT: -2 } as const;

/** Kind of a changed-field entry (`[field, kind]`): an integer whose value is in the values, or another token. */
export const K = { INT: 0, OTHER: 1 } as const;

/** Bytes per field layout in the layout table: its fields, its key's index, its canonical shape, then a byte per field. */
export const LAYOUT_BYTES = 80;

/** Where a layout's bytes per field start (1: the field's changed values are read as integers). */
export const LAYOUT_INTS = 12;

/** Most fields a layout of the table has. */
export const LAYOUT_FIELDS = 64;

/** Field layouts a kernel's table holds. */
export const LAYOUT_SLOTS = 256;

/** Bytes a kernel writes or reads past the end of what it is asked to (eight at a time). */
const SLACK = 16;

const PAGE = 64 << 10;
const TABLES = 0;
const TABLE_BYTES = 8 << 10;
const CTL = TABLES + TABLE_BYTES;
const CTL_BYTES = 256;
const HEAP = CTL + CTL_BYTES;

interface Exports {
  run(ctl: number): number;
  init(tables: number): void;
  change(ctl: number, q: number, shape: number, seq: number, crc: number, hasCrc: number, codeLen: number): number;
}

let compiled: WebAssembly.Module | undefined;

function module(): WebAssembly.Module {
  return (compiled ??= new WebAssembly.Module(Buffer.from(KERNEL_WASM, 'base64')));
}

/**
 * What the kernel needs of a row layout to write its checksums and patch
 * frames (a `RowLayout` of the state store has it): per canonical
 * position, the key's index and the text before its value; per key, its
 * `replace` operation up to the value.
 */
export interface PatchLayout {
  /** Per canonical position: the index of that key in the row's key order. */
  readonly order: Int32Array;
  /** Per canonical position: `{"key":` first, then `,"key":`. */
  readonly heads: readonly string[];
  /** Per key (row order): `{"op":"replace","path":"/key","value":`. */
  readonly replaceHeads: readonly string[];
}

/** A layout's shape in the kernel's memory, and the sizes that bound what it writes. */
export interface Shape {
  readonly at: number;
  /** Bytes of the heads, all together. */
  readonly headBytes: number;
  /** Bytes of the longest replace head. */
  readonly maxReplace: number;
}

/** Bytes of a shape's head: its fields, the bytes of its heads, the bytes of its longest replace head. */
const SHAPE_HEAD = 12;

/** Bytes of the region that holds the shapes; when it is full the shapes are written again from its start. */
const SHAPE_BYTES = 16 << 10;

/** A region of the kernel's memory: where it starts and how many bytes it holds. */
export interface Region {
  at: number;
  bytes: number;
}

/** One kernel instance and its memory. */
export class ListKernel {
  private readonly memory = new WebAssembly.Memory({ initial: 1 });
  private readonly fn: Exports;
  private top = HEAP;
  private u8_: Uint8Array;
  private i32_: Int32Array;
  private f64_: Float64Array;
  /** The control block of `run`, in i32 slots from `ctl`. */
  readonly ctl = CTL >> 2;

  /** A kernel with the checksum tables in place and nothing else. */
  constructor() {
    this.fn = new WebAssembly.Instance(module(), { env: { memory: this.memory } }).exports as unknown as Exports;
    const buffer = this.memory.buffer as ArrayBuffer;
    this.u8_ = new Uint8Array(buffer);
    this.i32_ = new Int32Array(buffer);
    this.f64_ = new Float64Array(buffer);
    this.fn.init(TABLES);
    this.i32_[this.ctl + F.TABLES] = TABLES;
    this.i32_[this.ctl + C.TABLES] = TABLES;
  }

  /** The memory's bytes (a new view after the memory grew: take it again after any `alloc`, `fit`, `scratch` or `shape`). */
  get u8(): Uint8Array {
    return this.u8_;
  }

  /** The memory as i32 words (as `u8`). */
  get i32(): Int32Array {
    return this.i32_;
  }

  /** The memory as f64 words (as `u8`). */
  get f64(): Float64Array {
    return this.f64_;
  }

  // The memory grows only here (`alloc`): the kernel's own code allocates nothing.
  private views(): void {
    const buffer = this.memory.buffer as ArrayBuffer;
    this.u8_ = new Uint8Array(buffer);
    this.i32_ = new Int32Array(buffer);
    this.f64_ = new Float64Array(buffer);
  }

  private readonly named = new Map<string, Region>();
  private shapes: { layout: PatchLayout; shape: Shape }[] = [];
  private shapeRegion: Region | undefined;
  private shapeUsed = 0;

  /** The kernel's own region `name`, holding at least `bytes` bytes; what it held is not kept when it grows. */
  scratch(name: string, bytes: number): Region {
    const r = this.named.get(name);
    if (r !== undefined && r.bytes >= bytes) return r;
    const n = this.fit(r, bytes);
    this.named.set(name, n);
    return n;
  }

  /**
   * The shape of `l` in memory, written on first use; undefined when a
   * head is not ASCII (the caller then writes the frame itself). Valid
   * until the next call: a full region is written again from its start.
   */
  shape(l: PatchLayout): Shape | undefined {
    const list = this.shapes;
    for (let i = 0; i < list.length; i++) if (list[i]!.layout === l) return list[i]!.shape;
    const shape = this.write(l, false);
    if (shape !== undefined) this.shapes.push({ layout: l, shape });
    return shape;
  }

  /** Writes the shape of `l` into the shapes' region (or, `permanent`, into a region of its own); undefined when a head is not ASCII. */
  private write(l: PatchLayout, permanent: boolean): Shape | undefined {
    const n = l.order.length;
    const texts = [...l.heads, ...l.replaceHeads];
    let textBytes = 0;
    for (const t of texts) {
      for (let k = 0; k < t.length; k++) if (t.charCodeAt(k) > 0x7f) return undefined;
      textBytes += t.length;
    }
    const replaced = l.replaceHeads.length;
    const bytes = SHAPE_HEAD + 12 * n + 8 * replaced + textBytes;
    let at: number;
    if (permanent) at = this.alloc(bytes).at;
    else {
      if (bytes + SLACK > SHAPE_BYTES) return undefined;
      if (this.shapeRegion === undefined || this.shapeUsed + bytes + SLACK > SHAPE_BYTES) {
        this.shapeRegion ??= this.alloc(SHAPE_BYTES);
        this.shapeUsed = 0;
        this.shapes = [];
      }
      at = this.shapeRegion.at + this.shapeUsed;
      this.shapeUsed += (bytes + 7) & ~7;
    }
    const i32 = this.i32;
    const u8 = this.u8;
    let text = at + SHAPE_HEAD + 12 * n + 8 * replaced;
    const put = (slot: number, s: string): void => {
      i32[slot >> 2] = text;
      i32[(slot >> 2) + 1] = s.length;
      for (let k = 0; k < s.length; k++) u8[text++] = s.charCodeAt(k);
    };
    let headBytes = 0;
    let maxReplace = 0;
    for (let k = 0; k < n; k++) {
      i32[(at + SHAPE_HEAD + 12 * k) >> 2] = l.order[k]!;
      put(at + SHAPE_HEAD + 4 + 12 * k, l.heads[k]!);
      headBytes += l.heads[k]!.length;
    }
    for (let f = 0; f < replaced; f++) {
      put(at + SHAPE_HEAD + 12 * n + 8 * f, l.replaceHeads[f]!);
      maxReplace = Math.max(maxReplace, l.replaceHeads[f]!.length);
    }
    i32[at >> 2] = n;
    i32[(at >> 2) + 1] = headBytes;
    i32[(at >> 2) + 2] = maxReplace;
    return { at, headBytes, maxReplace };
  }

  /**
   * The canonical shape of rows with keys `names` (row order), written once
   * for good (a reader's field layouts are few): what `run` checksums a
   * changed row by. 0 when a key is not ASCII.
   */
  canonical(names: readonly string[]): number {
    const sorted = [...names].sort();
    return (
      this.write(
        {
          order: Int32Array.from(sorted, (k) => names.indexOf(k)),
          heads: sorted.map((k, i) => (i === 0 ? '{' : ',') + JSON.stringify(k) + ':'),
          replaceHeads: [],
        },
        true,
      )?.at ?? 0
    );
  }

  /** A new region of at least `bytes` bytes (16-byte aligned, with room past its end for the kernel's wide reads and writes). */
  alloc(bytes: number): Region {
    const at = this.top;
    const end = at + ((bytes + SLACK + 15) & ~15);
    const have = this.memory.buffer.byteLength;
    if (end > have) {
      this.memory.grow(Math.ceil((end - have) / PAGE));
      this.views();
    }
    this.top = end;
    return { at, bytes };
  }

  /** `r` when it holds `bytes`, else a new region of at least that many and half again as many as `r` (the old one is left). */
  fit(r: Region | undefined, bytes: number): Region {
    if (r !== undefined && r.bytes >= bytes) return r;
    return this.alloc(Math.max(bytes, Math.ceil((r?.bytes ?? 0) * 1.5)));
  }

  /** Bytes of memory the kernel holds. */
  get memoryBytes(): number {
    return this.memory.buffer.byteLength;
  }

  /** Runs `run` on the control block. */
  run(): number {
    return this.fn.run(CTL);
  }

  /**
   * The change of row `q` (of the generation whose pointers are in the
   * control block, `F`) to `seq`: its checksum, made here unless `crc` is
   * given, and its patch frame; see `assembly/index.ts` `change`. The
   * frame's start in the out region, or one of `CHANGE`.
   */
  change(q: number, shape: number, seq: number, crc: number | undefined, codeLen: number): number {
    return this.fn.change(CTL, q, shape, seq, crc ?? 0, crc === undefined ? 0 : 1, codeLen);
  }
}
