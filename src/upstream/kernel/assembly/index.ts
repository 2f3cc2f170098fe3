/**
 * The list kernel: the byte work of reading a polled list body against the
 * last one, and of writing the checksums and patch frames of the rows that
 * changed, compiled to WebAssembly (AssemblyScript, `npm run build:kernel`).
 * Every function is pure over the memory it is given: `src/upstream/kernel/
 * kernel.ts` lays that memory out, and `src/upstream/listread.ts` and
 * `src/state/valueframes.ts` say what each result means. What the kernel
 * cannot decide (a value that is not an integer, a row whose keys changed)
 * it hands back, and the JavaScript reads it as before.
 */

// ---- The control block of `run` (i32 slots at `ctl`), written and read by kernel.ts. ----
const C_NEXT = 0; // next body: first byte
const C_END = 1; // next body: length
const C_LAST = 2; // last body: first byte
const C_NEXT_ROWS = 3; // next generation: row records
const C_LAST_ROWS = 4; // last generation: row records
const C_LAST_COUNT = 5; // last generation: rows
const C_NEXT_FIELDS = 6; // next generation: field slots
const C_LAST_FIELDS = 7; // last generation: field slots
const C_CHANGES = 8; // next generation: changed-field entries (two i32 each)
const C_VALUES = 9; // next generation: values of changed integers (f64 per entry)
const C_LAYOUTS = 10; // field layouts (LAYOUT_BYTES each, by id)
const C_ROW_CAP = 11;
const C_FIELD_CAP = 12;
const C_CHANGE_CAP = 13;
const C_P = 14; // position in the next body
const C_Q = 15; // rows recorded
const C_J = 16; // cursor in the last generation
const C_USED = 17; // field slots used
const C_CHANGED = 18; // changed-field entries used
const C_PHASE = 19; // 0: at the list's first element or its `]`; 1: after a row; 2: at an element after a comma
const C_WHY = 20; // why `run` stopped at a row
const C_CHANGED_ROWS = 21; // next generation: the rows recorded CHANGED or PENDING, in order (i32 each)
const C_CHANGED_ROW_COUNT = 22;
const C_DROPPED = 23; // rows recorded with the dropped bit
const C_SCRATCH = 24; // room for a row's canonical bytes, to checksum them
const C_SCRATCH_CAP = 25;
const C_TABLES = 26; // the checksum tables

// Row records: R_WORDS i32 per row.
const R_WORDS = 10;
const R_START = 0;
const R_END = 1;
const R_LAYOUT = 2; // field layout id, -1 when none
const R_FIELD_AT = 3; // first field slot (relative to the generation's field slots)
const R_FLAGS = 4; // bit 0: dropped; bits 8..: status
const R_CHANGED_AT = 5;
const R_CHANGED_COUNT = 6;
const R_BASE = 7; // the last generation's row it was compared with (-1: none)
const R_CRC = 8; // the row's checksum, when F_CRC_MADE is set

const S_SAME: i32 = 0 << 8;
const S_CHANGED: i32 = 1 << 8;
const S_PENDING: i32 = 2 << 8;
// R_FLAGS bit 1: R_CRC holds the row's checksum.
const F_CRC_MADE: i32 = 2;

// Field layouts: LAYOUT_BYTES bytes per id: i32 fields, i32 key index, i32 its canonical shape (a shape as `change` reads one, 0 for
// none: its keys are not ASCII), then one byte per field (1: read integers).
const LAYOUT_BYTES = 80;
const LAYOUT_INTS = 12;

// Shapes: i32 fields, i32 bytes of the heads, i32 bytes of the longest replace head, then entries (see `change`).
const SHAPE_HEAD = 12;

// Results of `run`.
const END: i32 = 0;
const STOP: i32 = 1;
const SPACE: i32 = 2;
const PENDING: i32 = 3;
const FAIL: i32 = -1;
const NOT_OBJECT: i32 = -2;

// Why `run` stopped at a row.
const WHY_NO_BASE: i32 = 1;
const WHY_NO_LAYOUT: i32 = 2;
const WHY_FIELDS: i32 = 3;

// Changed-field entries: [field, kind]; kind 0: an integer (its value at the entry in C_VALUES), 1: another token.
const K_INT: i32 = 0;
const K_OTHER: i32 = 1;

const QUOTE: u32 = 0x22;
const BACKSLASH: u32 = 0x5c;
const COMMA: u32 = 0x2c;
const MINUS: u32 = 0x2d;
const PLUS: u32 = 0x2b;
const DOT: u32 = 0x2e;
const ZERO: u32 = 0x30;
const NINE: u32 = 0x39;
const OPEN_BRACE: u32 = 0x7b;
const CLOSE_BRACE: u32 = 0x7d;
const CLOSE_BRACKET: u32 = 0x5d;

const MAX_SAFE: i64 = 9007199254740991;

function ci(ctl: usize, slot: i32): i32 {
  return load<i32>(ctl + ((<usize>slot) << 2));
}

function cset(ctl: usize, slot: i32, v: i32): void {
  store<i32>(ctl + ((<usize>slot) << 2), v);
}

/** The byte at `i` of the body at `b`, or 256 past its end (matches nothing). */
function at(b: usize, i: i32, end: i32): u32 {
  return i < end ? <u32>load<u8>(b + <usize>i) : 256;
}

function skipWs(b: usize, i: i32, end: i32): i32 {
  while (i < end) {
    const c = load<u8>(b + <usize>i);
    if (c != 0x20 && c != 0x0a && c != 0x0d && c != 0x09) return i;
    i++;
  }
  return i;
}

/** Whether `len` bytes at `a` equal those at `b`, sixteen at a time. */
function same(a: usize, b: usize, len: i32): bool {
  let k: i32 = 0;
  for (; k + 16 <= len; k += 16) {
    if (!i8x16.all_true(i8x16.eq(v128.load(a + <usize>k), v128.load(b + <usize>k)))) return false;
  }
  if (k + 8 <= len) {
    if (load<u64>(a + <usize>k) != load<u64>(b + <usize>k)) return false;
    k += 8;
  }
  for (; k < len; k++) if (load<u8>(a + <usize>k) != load<u8>(b + <usize>k)) return false;
  return true;
}

function numberGoesOn(c: u32): bool {
  return (c >= ZERO && c <= NINE) || c == DOT || c == 0x65 || c == 0x45 || c == PLUS || c == MINUS;
}

function digitAt(b: usize, i: i32, end: i32): bool {
  const c = at(b, i, end);
  return c >= ZERO && c <= NINE;
}

function stringEnd(b: usize, i: i32, end: i32): i32 {
  for (i++; i < end; i++) {
    const c = <u32>load<u8>(b + <usize>i);
    if (c == QUOTE) return i + 1;
    if (c == BACKSLASH) i++;
    else if (c < 0x20) return -1;
  }
  return -1;
}

function numberEnd(b: usize, i: i32, end: i32): i32 {
  if (at(b, i, end) == MINUS) i++;
  if (digitAt(b, i, end) && at(b, i, end) == ZERO) i++;
  else if (digitAt(b, i, end)) while (digitAt(b, ++i, end));
  else return -1;
  if (at(b, i, end) == DOT) {
    if (!digitAt(b, ++i, end)) return -1;
    while (digitAt(b, ++i, end));
  }
  const e = at(b, i, end);
  if (e == 0x65 || e == 0x45) {
    i++;
    const s = at(b, i, end);
    if (s == PLUS || s == MINUS) i++;
    if (!digitAt(b, i, end)) return -1;
    while (digitAt(b, ++i, end));
  }
  return i;
}

function literalEnd(b: usize, i: i32, end: i32, word: u64, len: i32): i32 {
  if (i + len > end) return -1;
  for (let k: i32 = 0; k < len; k++) if (<u64>load<u8>(b + <usize>(i + k)) != ((word >> ((<u64>k) << 3)) & 0xff)) return -1;
  return i + len;
}

/** The end of the scalar at `i`; negative for an object, an array or bytes that are not JSON. */
function scalarEnd(b: usize, i: i32, end: i32): i32 {
  if (i >= end) return -1;
  const c = <u32>load<u8>(b + <usize>i);
  if (c == QUOTE) return stringEnd(b, i, end);
  if (c == MINUS || (c >= ZERO && c <= NINE)) return numberEnd(b, i, end);
  if (c == 0x74) return literalEnd(b, i, end, 0x65757274, 4); // true
  if (c == 0x66) return literalEnd(b, i, end, 0x65736c6166, 5); // false
  if (c == 0x6e) return literalEnd(b, i, end, 0x6c6c756e, 4); // null
  return -2;
}

// The value `integerEnd` read last.
let intValue: f64 = 0;

/** As scan.ts `integerEnd`: the end of a safe integer written as `JSON.stringify` writes it, its value in `intValue`; -1 otherwise. */
function integerEnd(b: usize, i: i32, end: i32): i32 {
  const negative = at(b, i, end) == MINUS;
  const s = negative ? i + 1 : i;
  let k = s;
  let v: i64 = 0;
  while (k < end) {
    const d = <i32>load<u8>(b + <usize>k) - <i32>ZERO;
    if (d < 0 || d > 9) break;
    if (k - s < 17) v = v * 10 + <i64>d;
    k++;
  }
  const digits = k - s;
  if (digits < 1 || digits > 16 || (at(b, s, end) == ZERO && (digits > 1 || negative)) || v > MAX_SAFE) return -1;
  const c = at(b, k, end);
  if (c == DOT || c == 0x65 || c == 0x45) return -1;
  intValue = negative ? -(<f64>v) : <f64>v;
  return k;
}

/** Records row `q`. */
function record(rows: usize, q: i32, start: i32, end: i32, layout: i32, fieldAt: i32, flags: i32, changedAt: i32, count: i32, base: i32): void {
  const r = rows + <usize>q * (R_WORDS << 2);
  store<i32>(r + (R_START << 2), start);
  store<i32>(r + (R_END << 2), end);
  store<i32>(r + (R_LAYOUT << 2), layout);
  store<i32>(r + (R_FIELD_AT << 2), fieldAt);
  store<i32>(r + (R_FLAGS << 2), flags);
  store<i32>(r + (R_CHANGED_AT << 2), changedAt);
  store<i32>(r + (R_CHANGED_COUNT << 2), count);
  store<i32>(r + (R_BASE << 2), base);
}

function rowWord(rows: usize, q: i32, w: i32): i32 {
  return load<i32>(rows + <usize>q * (R_WORDS << 2) + ((<usize>w) << 2));
}

/**
 * Compares the row at `s` with the last generation's row `j` (layout
 * `layout`) field by field, as listread.ts `changed` does: everything but
 * the values must be the same bytes. Records the row and returns its end;
 * -1 when the row must be read whole; -2 when the generation has no room.
 */
function changed(ctl: usize, s: i32, j: i32, layout: i32): i32 {
  const nb = <usize>ci(ctl, C_NEXT);
  const end = ci(ctl, C_END);
  const lb = <usize>ci(ctl, C_LAST);
  const lrows = <usize>ci(ctl, C_LAST_ROWS);
  const lf = <usize>ci(ctl, C_LAST_FIELDS);
  const nf = <usize>ci(ctl, C_NEXT_FIELDS);
  const lay = <usize>ci(ctl, C_LAYOUTS) + <usize>layout * LAYOUT_BYTES;
  const n = load<i32>(lay);
  const keyIndex = load<i32>(lay + 4);
  const used = ci(ctl, C_USED);
  const c0 = ci(ctl, C_CHANGED);
  if (used + 3 * n > ci(ctl, C_FIELD_CAP) || c0 + n > ci(ctl, C_CHANGE_CAP)) return -2;
  const changes = <usize>ci(ctl, C_CHANGES);
  const values = <usize>ci(ctl, C_VALUES);
  const ls = rowWord(lrows, j, R_START);
  const from = rowWord(lrows, j, R_FIELD_AT);
  let p = s;
  let lp = ls;
  let count: i32 = 0;
  let pending = false;
  for (let f: i32 = 0; f < n; f++) {
    const slot = lf + ((<usize>(from + 3 * f)) << 2);
    const lvs = ls + load<i32>(slot);
    const lve = ls + load<i32>(slot, 4);
    const lastJson = load<i32>(slot, 8);
    const gap = lvs - lp;
    const vs = p + gap;
    if (vs >= end || !same(nb + <usize>p, lb + <usize>lp, gap)) return -1;
    let ve = vs + lve - lvs;
    const isSame = ve < end && same(nb + <usize>vs, lb + <usize>lvs, lve - lvs) && !numberGoesOn(<u32>load<u8>(nb + <usize>ve));
    let kind = K_INT;
    if (!isSame) {
      ve = load<u8>(lay + LAYOUT_INTS + <usize>f) == 1 ? integerEnd(nb, vs, end) : -1;
      if (ve < 0) {
        ve = scalarEnd(nb, vs, end);
        if (ve < 0) return -1;
        kind = K_OTHER;
      }
    }
    const out = nf + ((<usize>(used + 3 * f)) << 2);
    store<i32>(out, vs - s);
    store<i32>(out, ve - s, 4);
    p = ve;
    lp = lve;
    if (isSame) {
      store<i32>(out, lastJson, 8);
      continue;
    }
    if (f == keyIndex) return -1;
    const e = c0 + count;
    store<i32>(changes + ((<usize>e) << 3), f);
    store<i32>(changes + ((<usize>e) << 3), kind, 4);
    if (kind == K_INT) {
      store<i32>(out, 1, 8);
      store<f64>(values + ((<usize>e) << 3), intValue);
      if (lastJson != 1) pending = true;
    } else {
      store<i32>(out, 0, 8);
      pending = true;
    }
    count++;
  }
  const tail = rowWord(lrows, j, R_END) - lp;
  if (p + tail > end || !same(nb + <usize>p, lb + <usize>lp, tail)) return -1;
  const q = ci(ctl, C_Q);
  let flags = pending ? S_PENDING : S_CHANGED;
  // The checksum of a row whose values are all their JSON, made now that its bytes are at hand.
  const shape = <usize>load<i32>(lay, 8);
  let crc: u32 = 0;
  if (!pending && shape != 0 && p + tail - s + load<i32>(shape, 4) + 16 <= ci(ctl, C_SCRATCH_CAP)) {
    const scratch = <usize>ci(ctl, C_SCRATCH);
    const len = canonical(nb + <usize>s, nf + ((<usize>used) << 2), shape, scratch);
    if (len > 0) {
      crc = crc32(<usize>ci(ctl, C_TABLES), scratch, len);
      flags |= F_CRC_MADE;
    }
  }
  record(<usize>ci(ctl, C_NEXT_ROWS), q, s, p + tail, layout, used, flags, c0, count, j);
  store<u32>(<usize>ci(ctl, C_NEXT_ROWS) + <usize>q * (R_WORDS << 2) + (R_CRC << 2), crc);
  cset(ctl, C_USED, used + 3 * n);
  cset(ctl, C_CHANGED, c0 + count);
  const k = ci(ctl, C_CHANGED_ROW_COUNT);
  store<i32>(<usize>ci(ctl, C_CHANGED_ROWS) + ((<usize>k) << 2), q);
  cset(ctl, C_CHANGED_ROW_COUNT, k + 1);
  return p + tail;
}

/**
 * Reads rows of the next body from `C_P` on, as listread.ts `rows` and
 * `row` do, for as long as each row is the last generation's row at the
 * cursor or that row with values changed: records each and advances.
 * Returns END at the list's `]` (`C_P` there), STOP at a row it leaves to
 * the caller (`C_P` at its `{`, `C_WHY` why), PENDING after recording a
 * row whose changed values the caller is to read (`C_P` past it), SPACE
 * when the generation has no room for the next row, FAIL or NOT_OBJECT for
 * a list that is not one of objects.
 */
export function run(ctl: usize): i32 {
  const nb = <usize>ci(ctl, C_NEXT);
  const end = ci(ctl, C_END);
  const lb = <usize>ci(ctl, C_LAST);
  const nrows = <usize>ci(ctl, C_NEXT_ROWS);
  const lrows = <usize>ci(ctl, C_LAST_ROWS);
  const lcount = ci(ctl, C_LAST_COUNT);
  const nf = <usize>ci(ctl, C_NEXT_FIELDS);
  const lf = <usize>ci(ctl, C_LAST_FIELDS);
  const layouts = <usize>ci(ctl, C_LAYOUTS);
  const rowCap = ci(ctl, C_ROW_CAP);
  let p = ci(ctl, C_P);
  let q = ci(ctl, C_Q);
  let j = ci(ctl, C_J);
  let phase = ci(ctl, C_PHASE);
  let result = END;
  for (;;) {
    if (phase == 1) {
      p = skipWs(nb, p, end);
      const c = at(nb, p, end);
      if (c == CLOSE_BRACKET) break;
      if (c != COMMA) {
        result = FAIL;
        break;
      }
      p = skipWs(nb, p + 1, end);
      phase = 2;
    }
    const c = at(nb, p, end);
    if (c != OPEN_BRACE) {
      if (phase == 0 && c == CLOSE_BRACKET) break;
      result = c == CLOSE_BRACKET ? FAIL : NOT_OBJECT;
      break;
    }
    if (q >= rowCap) {
      result = SPACE;
      break;
    }
    if (j >= lcount) {
      cset(ctl, C_WHY, WHY_NO_BASE);
      result = STOP;
      break;
    }
    const ls = rowWord(lrows, j, R_START);
    const len = rowWord(lrows, j, R_END) - ls;
    const layout = rowWord(lrows, j, R_LAYOUT);
    if (p + len <= end && same(nb + <usize>p, lb + <usize>ls, len)) {
      let fat: i32 = 0;
      if (layout >= 0) {
        const n3 = 3 * load<i32>(layouts + <usize>layout * LAYOUT_BYTES);
        const used = ci(ctl, C_USED);
        if (used + n3 > ci(ctl, C_FIELD_CAP)) {
          result = SPACE;
          break;
        }
        memory.copy(nf + ((<usize>used) << 2), lf + ((<usize>rowWord(lrows, j, R_FIELD_AT)) << 2), (<usize>n3) << 2);
        fat = used;
        cset(ctl, C_USED, used + n3);
      }
      const dropped = rowWord(lrows, j, R_FLAGS) & 1;
      if (dropped) cset(ctl, C_DROPPED, ci(ctl, C_DROPPED) + 1);
      record(nrows, q, p, p + len, layout, fat, S_SAME | dropped, 0, 0, j);
      q++;
      j++;
      p += len;
      phase = 1;
      continue;
    }
    if (layout < 0) {
      cset(ctl, C_WHY, WHY_NO_LAYOUT);
      result = STOP;
      break;
    }
    cset(ctl, C_Q, q);
    const e = changed(ctl, p, j, layout);
    if (e == -2) {
      result = SPACE;
      break;
    }
    if (e < 0) {
      cset(ctl, C_WHY, WHY_FIELDS);
      result = STOP;
      break;
    }
    q++;
    j++;
    p = e;
    phase = 1;
    // A row whose changed values the caller reads: it may find one unusable and read the row whole, which can move the cursor.
    if ((rowWord(nrows, q - 1, R_FLAGS) >> 8) << 8 == S_PENDING) {
      result = PENDING;
      break;
    }
  }
  cset(ctl, C_P, p);
  cset(ctl, C_Q, q);
  cset(ctl, C_J, j);
  cset(ctl, C_PHASE, phase);
  return result;
}

// ---- Checksums and patch frames. ----

/** The CRC-32 tables for eight bytes a step (slicing-by-8), 8 KiB at `tables`. */
export function init(tables: usize): void {
  for (let n: u32 = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    store<u32>(tables + ((<usize>n) << 2), c);
  }
  for (let n: u32 = 0; n < 256; n++) {
    let c = load<u32>(tables + ((<usize>n) << 2));
    for (let t: u32 = 1; t < 8; t++) {
      c = load<u32>(tables + ((<usize>(c & 0xff)) << 2)) ^ (c >>> 8);
      store<u32>(tables + ((<usize>(t * 256 + n)) << 2), c);
    }
  }
}

function crc32(tables: usize, p: usize, len: i32): u32 {
  let c: u32 = 0xffffffff;
  while (len >= 8) {
    const one = load<u32>(p) ^ c;
    const two = load<u32>(p, 4);
    c =
      load<u32>(tables + ((7 * 256 + <usize>(one & 0xff)) << 2)) ^
      load<u32>(tables + ((6 * 256 + <usize>((one >>> 8) & 0xff)) << 2)) ^
      load<u32>(tables + ((5 * 256 + <usize>((one >>> 16) & 0xff)) << 2)) ^
      load<u32>(tables + ((4 * 256 + <usize>(one >>> 24)) << 2)) ^
      load<u32>(tables + ((3 * 256 + <usize>(two & 0xff)) << 2)) ^
      load<u32>(tables + ((2 * 256 + <usize>((two >>> 8) & 0xff)) << 2)) ^
      load<u32>(tables + ((1 * 256 + <usize>((two >>> 16) & 0xff)) << 2)) ^
      load<u32>(tables + ((<usize>(two >>> 24)) << 2));
    p += 8;
    len -= 8;
  }
  for (; len > 0; len--, p++) c = load<u32>(tables + ((<usize>((c ^ (<u32>load<u8>(p))) & 0xff)) << 2)) ^ (c >>> 8);
  return ~c;
}

/** Copies `len` bytes, eight at a time: writes up to seven bytes past `dst + len` and reads as far past `src + len`. Returns `dst + len`. */
function copy(dst: usize, src: usize, len: i32): usize {
  for (let k: i32 = 0; k < len; k += 8) store<u64>(dst + <usize>k, load<u64>(src + <usize>k));
  return dst + <usize>len;
}

/** Writes the decimal digits of `v` at `dst`; returns the end. */
function digits(dst: usize, v: u32): usize {
  let n: usize = 1;
  for (let bound: u64 = 10; n < 10 && <u64>v >= bound; bound *= 10) n++;
  let k = dst + n;
  do {
    const q = v / 10;
    store<u8>(--k, <u8>(48 + v - q * 10));
    v = q;
  } while (k > dst);
  return dst + n;
}

/**
 * Writes at `scratch` the canonical bytes of the row at `start` whose
 * field slots are at `fat`, keyed as `shape` orders them; returns their
 * length, or 0 when a value's bytes are not its JSON.
 */
function canonical(start: usize, fat: usize, shape: usize, scratch: usize): i32 {
  const n = load<i32>(shape);
  let w = scratch;
  for (let k: i32 = 0; k < n; k++) {
    const e = shape + SHAPE_HEAD + <usize>k * 12;
    const slot = fat + <usize>(3 * load<i32>(e)) * 4;
    if (load<i32>(slot, 8) != 1) return 0;
    w = copy(w, <usize>load<i32>(e, 4), load<i32>(e, 8));
    const vs = load<i32>(slot);
    w = copy(w, start + <usize>vs, load<i32>(slot, 4) - vs);
  }
  store<u8>(w, CLOSE_BRACE);
  return <i32>(w + 1 - scratch);
}

// Shapes (one per row layout, written by kernel.ts): i32 fields n, i32 bytes of the heads, i32 bytes of the longest replace head,
// then per canonical position [field, head offset, head length], then per field [replace-head offset, length]. Offsets are absolute.

// ---- The control block of `change` (i32 slots at `ctl`, after run's), written and read by kernel.ts. ----
const F_BODY = 32; // the body's first byte
const F_ROWS = 33; // the generation's row records
const F_FIELDS = 34; // its field slots
const F_CHANGES = 35; // its changed-field entries
const F_TOPIC = 36; // `{"type":"patch","topic":"channel.market.`
const F_TOPIC_LEN = 37;
const F_TS = 38; // `,"ts":…,"ops":[`
const F_TS_LEN = 39;
const F_OUT = 40; // where frames are written
const F_USED = 41; // bytes written there
const F_CAP = 42; // bytes there
const F_CODE = 43; // the topic's code, when written by the caller
const F_SCRATCH = 44; // room for a row's canonical bytes
const F_SCRATCH_CAP = 45;
const F_KEY = 46; // the key field's index in the row, -1 when the code is not taken from the body
const F_CRC = 47; // the checksum, out
const F_TABLES = 48; // the checksum tables

// Results of `change` other than a frame's start.
const NO_CRC: i32 = -1; // a value's bytes are not its JSON: the caller computes the checksum and calls again with it
const NO_ROOM: i32 = -2; // the frame may not fit: the caller makes room and calls again
const NO_CODE: i32 = -3; // the code cannot be taken from the body: the caller writes it at F_CODE and calls again with its length
const NO_FRAME: i32 = -4; // a changed value's bytes are not its JSON: the checksum is at F_CRC, the caller writes the frame

/**
 * The change of row `q` of a generation (pointers in the control block at
 * `ctl`), a row of `shape`, to `seq`: its checksum (given as `crc` when
 * `hasCrc`, else made from the values' bytes, canonically ordered) and
 * its patch frame, written at `F_OUT + F_USED`: the topic, the code (the
 * key field's string, or `codeLen` bytes at `F_CODE`), `","seq":` and
 * `seq`, the time part, for each changed field its replace head and its
 * value's bytes, then `}],"crc":`, the checksum and `}`. Returns where the
 * frame starts (and adds its length to `F_USED`), or NO_CRC, NO_ROOM,
 * NO_CODE or NO_FRAME.
 */
export function change(ctl: usize, q: i32, shape: usize, seq: u32, crc: u32, hasCrc: i32, codeLen: i32): i32 {
  const rows = <usize>ci(ctl, F_ROWS);
  const start = <usize>ci(ctl, F_BODY) + <usize>rowWord(rows, q, R_START);
  const rowLen = rowWord(rows, q, R_END) - rowWord(rows, q, R_START);
  const fat = <usize>ci(ctl, F_FIELDS) + ((<usize>rowWord(rows, q, R_FIELD_AT)) << 2);
  const n = load<i32>(shape);
  if (!hasCrc && (rowWord(rows, q, R_FLAGS) & F_CRC_MADE) != 0) crc = <u32>rowWord(rows, q, R_CRC);
  else if (!hasCrc) {
    if (rowLen + load<i32>(shape, 4) + 16 > ci(ctl, F_SCRATCH_CAP)) return NO_CRC;
    const scratch = <usize>ci(ctl, F_SCRATCH);
    const len = canonical(start, fat, shape, scratch);
    if (len == 0) return NO_CRC;
    crc = crc32(<usize>ci(ctl, F_TABLES), scratch, len);
  }
  cset(ctl, F_CRC, <i32>crc);
  // The code: the key field's string token without its quotes, when its bytes are its JSON.
  let code = <usize>ci(ctl, F_CODE);
  const key = ci(ctl, F_KEY);
  if (codeLen < 0) {
    if (key < 0) return NO_CODE;
    const slot = fat + <usize>(3 * key) * 4;
    const vs = load<i32>(slot);
    if (load<i32>(slot, 8) != 1 || load<u8>(start + <usize>vs) != <u8>QUOTE) return NO_CODE;
    code = start + <usize>vs + 1;
    codeLen = load<i32>(slot, 4) - vs - 2;
  }
  const c0 = rowWord(rows, q, R_CHANGED_AT);
  const count = rowWord(rows, q, R_CHANGED_COUNT);
  const used = ci(ctl, F_USED);
  // What the frame can take: its fixed parts, a replace head and a separator per changed value, the row's bytes for the values, and the wide writes.
  const bound = ci(ctl, F_TOPIC_LEN) + codeLen + ci(ctl, F_TS_LEN) + count * (load<i32>(shape, 8) + 2) + rowLen + 64;
  if (used + bound > ci(ctl, F_CAP)) return NO_ROOM;
  const changes = <usize>ci(ctl, F_CHANGES);
  const heads = shape + SHAPE_HEAD + <usize>n * 12;
  const dst = <usize>ci(ctl, F_OUT) + <usize>used;
  let w = copy(dst, <usize>ci(ctl, F_TOPIC), ci(ctl, F_TOPIC_LEN));
  w = copy(w, code, codeLen);
  // ","seq": (eight bytes, little-endian)
  store<u64>(w, ((<u64>0x3a227165) << 32) | 0x73222c22);
  w = digits(w + 8, seq);
  w = copy(w, <usize>ci(ctl, F_TS), ci(ctl, F_TS_LEN));
  for (let k: i32 = 0; k < count; k++) {
    const f = load<i32>(changes + ((<usize>(c0 + k)) << 3));
    const slot = fat + <usize>(3 * f) * 4;
    if (load<i32>(slot, 8) != 1) return NO_FRAME;
    if (k > 0) {
      store<u16>(w, 0x2c7d); // },
      w += 2;
    }
    const h = heads + <usize>f * 8;
    w = copy(w, <usize>load<i32>(h), load<i32>(h, 4));
    const vs = load<i32>(slot);
    w = copy(w, start + <usize>vs, load<i32>(slot, 4) - vs);
  }
  // }],"crc": (eight bytes, little-endian, and the colon)
  store<u64>(w, ((<u64>0x22637263) << 32) | 0x222c5d7d);
  store<u8>(w, 0x3a, 8);
  w = digits(w + 9, crc);
  store<u8>(w, CLOSE_BRACE);
  cset(ctl, F_USED, used + <i32>(w + 1 - dst));
  return used;
}
