/**
 * CRC-32 (IEEE 802.3, the zlib/PNG polynomial) and the canonical row
 * serialisation it is computed over. Pure functions that run unchanged in
 * Node and browsers (no Buffer, no node: modules). See docs/PROTOCOL.md
 * §Checksums.
 *
 * The checksum of a row is computed incrementally over the UTF-8 bytes the
 * canonical serialisation would have, without building that string or an
 * encoded copy of it: a row's keys are sorted once per row shape (the keys
 * in enumeration order), and a row is checked against its shape by one
 * walk of its keys.
 */

const TABLE = (() => {
  const t = new Int32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c;
  }
  return t;
})();

/** The running state of an empty CRC (before the final inversion). */
const INIT = -1;

function byte(c: number, b: number): number {
  return TABLE[(c ^ b) & 0xff]! ^ (c >>> 8);
}

/**
 * Feeds the UTF-8 encoding of `s` into a running CRC state: ASCII goes
 * straight in; a lone surrogate counts as U+FFFD, as `TextEncoder` encodes it.
 */
function update(c: number, s: string): number {
  const n = s.length;
  for (let i = 0; i < n; i++) {
    let u = s.charCodeAt(i);
    if (u < 0x80) {
      c = TABLE[(c ^ u) & 0xff]! ^ (c >>> 8);
      continue;
    }
    if (u < 0x800) {
      c = byte(byte(c, 0xc0 | (u >> 6)), 0x80 | (u & 0x3f));
      continue;
    }
    if (u >= 0xd800 && u <= 0xdfff) {
      const lo = u <= 0xdbff && i + 1 < n ? s.charCodeAt(i + 1) : 0;
      if (lo >= 0xdc00 && lo <= 0xdfff) {
        const cp = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
        c = byte(byte(byte(byte(c, 0xf0 | (cp >> 18)), 0x80 | ((cp >> 12) & 0x3f)), 0x80 | ((cp >> 6) & 0x3f)), 0x80 | (cp & 0x3f));
        i++;
        continue;
      }
      u = 0xfffd;
    }
    c = byte(byte(byte(c, 0xe0 | (u >> 12)), 0x80 | ((u >> 6) & 0x3f)), 0x80 | (u & 0x3f));
  }
  return c;
}

// Digits of an integer, least significant first; reused so no string is made per number.
const DIGITS = new Uint8Array(16);

/** Feeds the decimal digits of `v` (0 ≤ v < 2^31), zero-padded to `width`. */
function digits(c: number, v: number, width: number): number {
  // As an int32, so the divisions by ten compile to integer arithmetic, not floating-point remainders.
  let x = v | 0;
  let n = 0;
  do {
    const q = (x / 10) | 0;
    DIGITS[n++] = 48 + x - q * 10;
    x = q;
  } while (x > 0 || n < width);
  while (n > 0) c = byte(c, DIGITS[--n]!);
  return c;
}

/** Feeds a safe integer as `JSON.stringify` writes it (-0 as `0`). */
function integer(c: number, v: number): number {
  if (v < 0) {
    c = byte(c, 0x2d);
    v = -v;
  }
  if (v < 2_147_483_648) return digits(c, v, 1);
  // Split in exact integer halves; the quotient of a division may round up by one.
  let hi = Math.floor(v / 1e9);
  let lo = v - hi * 1e9;
  if (lo < 0) {
    hi--;
    lo += 1e9;
  }
  return digits(digits(c, hi, 1), lo, 9);
}

/** Whether `JSON.stringify(s)` is `s` in quotes: no quote, backslash, control character or surrogate. */
export function isPlainJsonString(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const u = s.charCodeAt(i);
    if (u < 0x20 || u === 0x22 || u === 0x5c || (u >= 0xd800 && u <= 0xdfff)) return false;
  }
  return true;
}

/** Feeds `JSON.stringify(v ?? null)` of one row value. */
function value(c: number, v: unknown): number {
  if (typeof v === 'number') {
    if (Number.isSafeInteger(v)) return integer(c, v);
    return update(c, Number.isFinite(v) ? String(v) : 'null');
  }
  if (typeof v === 'string') {
    if (!isPlainJsonString(v)) return update(c, JSON.stringify(v));
    return byte(update(byte(c, 0x22), v), 0x22);
  }
  if (v === null || v === undefined) return update(c, 'null');
  // As canonicalJson concatenates it (a value JSON cannot hold reads `undefined`).
  return update(c, String(JSON.stringify(v)));
}

/** CRC-32 of the UTF-8 bytes of a string, as an unsigned 32-bit integer. */
export function crc32(text: string): number {
  return (update(INIT, text) ^ INIT) >>> 0;
}

/**
 * The canonical serialisation of a flat row: JSON with the keys in
 * ascending code-unit order, no whitespace. Values are serialised as by
 * `JSON.stringify`.
 */
export function canonicalJson(row: Readonly<Record<string, unknown>>): string {
  const keys = Object.keys(row).sort();
  let out = '{';
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    if (i > 0) out += ',';
    out += JSON.stringify(k) + ':' + JSON.stringify(row[k] ?? null);
  }
  return out + '}';
}

/**
 * The keys of a row in enumeration order, and what the checksum needs to
 * visit them in canonical order. Rows of one feed share a shape, so it is
 * built once and reused (see `rowShape`, `hasShape`).
 */
export interface RowShape {
  /** The keys, in the row's enumeration (insertion) order. */
  readonly keys: readonly string[];
  /** The same keys in canonical (ascending code-unit) order. */
  readonly sorted: readonly string[];
  /** Per canonical position: the text before its value (`{"key":` first, then `,"key":`). */
  readonly heads: readonly string[];
  /** Per canonical position: the CRC state after feeding that head into state 0 (see `skipTable`). */
  readonly headCrcs: Int32Array;
  /** Per canonical position: the table that advances a CRC state over that head's length. */
  readonly headSkips: readonly Int32Array[];
  /** Per canonical position: the index of that key in `keys`. */
  readonly order: Int32Array;
}

/** The shape of a row (allocates; cache the result). */
export function rowShape(row: Readonly<Record<string, unknown>>): RowShape {
  const keys = Object.keys(row);
  const sorted = [...keys].sort();
  const heads = sorted.map((k, i) => (i === 0 ? '{' : ',') + JSON.stringify(k) + ':');
  const headCrcs = Int32Array.from(heads, (h) => update(0, h));
  const headSkips = heads.map((h) => skipTable(utf8Length(h)));
  const order = Int32Array.from(sorted, (k) => keys.indexOf(k));
  return { keys, sorted, heads, headCrcs, headSkips, order };
}

function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const u = s.charCodeAt(i);
    if (u < 0x80) n += 1;
    else if (u < 0x800) n += 2;
    else if (u >= 0xd800 && u <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

// Skip tables by byte count, shared by every shape.
const skips = new Map<number, Int32Array>();

/**
 * The table that advances a CRC state over `n` zero bytes, one 256-entry
 * part per byte of the state. The CRC register is linear over GF(2), so
 * feeding a fixed text H into state c gives skip(c) XOR feed(0, H): a
 * field name costs four lookups instead of one per byte.
 */
function skipTable(n: number): Int32Array {
  let t = skips.get(n);
  if (t !== undefined) return t;
  t = new Int32Array(1024);
  for (let k = 0; k < 4; k++) {
    for (let b = 0; b < 256; b++) {
      let c = b << (8 * k);
      for (let i = 0; i < n; i++) c = TABLE[c & 0xff]! ^ (c >>> 8);
      t[k * 256 + b] = c;
    }
  }
  skips.set(n, t);
  return t;
}

/** Feeds a head (its skip table and its own state from 0) into a running CRC state. */
function head(c: number, t: Int32Array, own: number): number {
  return t[c & 0xff]! ^ t[256 + ((c >>> 8) & 0xff)]! ^ t[512 + ((c >>> 16) & 0xff)]! ^ t[768 + (c >>> 24)]! ^ own;
}

/** Whether a row's own enumerable keys are exactly `shape.keys`, in that order (no allocation). */
export function hasShape(row: Readonly<Record<string, unknown>>, shape: RowShape): boolean {
  const keys = shape.keys;
  let i = 0;
  for (const k in row) {
    if (k !== keys[i]) return false;
    i++;
  }
  return i === keys.length;
}

/** `rowChecksum` of a row known to have `shape` (see `hasShape`). */
export function shapedChecksum(row: Readonly<Record<string, unknown>>, shape: RowShape): number {
  const sorted = shape.sorted;
  const crcs = shape.headCrcs;
  const tables = shape.headSkips;
  const n = sorted.length;
  if (n === 0) return crc32('{}');
  let c = INIT;
  for (let i = 0; i < n; i++) c = value(head(c, tables[i]!, crcs[i]!), row[sorted[i]!]);
  return (byte(c, 0x7d) ^ INIT) >>> 0;
}

/**
 * `shapedChecksum` of a row some of whose values are at hand as the UTF-8
 * bytes of their JSON (a row just read from an upstream body). The value
 * of key `k` (index in `shape.keys`) is described by
 * `fields[at + 3k .. at + 3k + 2]`: where it starts and ends in `text`,
 * relative to `start`, and 1 when those bytes are its JSON; other values
 * are serialised as usual.
 */
export function textChecksum(row: Readonly<Record<string, unknown>>, shape: RowShape, text: Uint8Array, start: number, fields: Int32Array, at: number): number {
  const sorted = shape.sorted;
  const order = shape.order;
  const crcs = shape.headCrcs;
  const tables = shape.headSkips;
  const n = sorted.length;
  if (n === 0) return crc32('{}');
  let c = INIT;
  for (let i = 0; i < n; i++) {
    c = head(c, tables[i]!, crcs[i]!);
    const k = at + 3 * order[i]!;
    if (fields[k + 2] === 1) {
      const e = start + fields[k + 1]!;
      for (let x = start + fields[k]!; x < e; x++) c = TABLE[(c ^ text[x]!) & 0xff]! ^ (c >>> 8);
    } else c = value(c, row[sorted[i]!]);
  }
  return (byte(c, 0x7d) ^ INIT) >>> 0;
}

// The last shapes seen by rowChecksum: a client or a mirror checks rows of a few feeds.
const recent: RowShape[] = [];
const RECENT = 8;

/** The checksum a snapshot or patch carries: CRC-32 of the UTF-8 bytes of `canonicalJson(row)`. */
export function rowChecksum(row: Readonly<Record<string, unknown>>): number {
  for (let i = 0; i < recent.length; i++) {
    const s = recent[i]!;
    if (hasShape(row, s)) return shapedChecksum(row, s);
  }
  const s = rowShape(row);
  if (recent.length >= RECENT) recent.pop();
  recent.unshift(s);
  return shapedChecksum(row, s);
}
