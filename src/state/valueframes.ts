import type { Channel, Market } from '../protocol/constants.js';
import { topicOf } from '../protocol/topics.js';
import type { ListDelta } from '../upstream/listread.js';
import { asciiBytes, patchHead, patchTsPart } from './frames.js';
import type { RowLayout } from './layout.js';

/**
 * Patch frames of rows that a `ListReader` found changed in a few values,
 * written as bytes one after another into buffers of one `apply` call:
 * blocks made once per call and per set of changed fields, the topic's
 * code, the seq, the changed values' bytes in the upstream body and the
 * checksum. The bytes are the frame every consumer takes (the sockets, the
 * journal, the recorder); no text is made of them unless asked for. Byte
 * for byte the UTF-8 of the frame `apply` serialises for the same change.
 */

const SEQ_PART = asciiBytes('","seq":')!;

/**
 * Sizes of the buffers the frames of a call are written to: the first
 * small (most calls write a few frames), each next one twice the last, up
 * to the largest (more for a longer frame).
 */
const FIRST_CHUNK = 16 << 10;
const LAST_CHUNK = 64 << 10;

const EMPTY = Buffer.alloc(0);

/** Changed-field sets whose blocks are kept: fields 0..30, one bit each. */
const MASK_FIELDS = 31;

/** How many decimal digits `String(v)` writes for a non-negative integer below 2^32 (a seq, a checksum). */
function digitCount(v: number): number {
  let n = 1;
  // Comparisons, not divisions: a seq or a checksum has at most ten digits.
  for (let bound = 10; n < 10 && v >= bound; bound *= 10) n++;
  return n;
}

/** Writes the `n` digits of `v` (below 2^32) at `at`; returns the index past them. */
function putInt(out: Buffer, at: number, v: number, n: number): number {
  let k = at + n - 1;
  // Above 2^31 one digit in floating point, then int32 arithmetic, where dividing by ten is integer division.
  if (v >= 2_147_483_648) {
    const q = Math.floor(v / 10);
    out[k--] = 48 + v - q * 10;
    v = q;
  }
  let x = v | 0;
  for (; k >= at; k--) {
    const q = (x / 10) | 0;
    out[k] = 48 + x - q * 10;
    x = q;
  }
  return at + n;
}

/**
 * Copies bytes `[s, e)` of `src` to `dst` at `at`, four at a time; returns
 * the index past them. A value's bytes are a few to a few tens: the call
 * of `TypedArray.prototype.set` on a view of them costs more than the copy,
 * and a loop of single bytes costs about 2 ns each.
 */
function copyBytes(dst: DataView, at: number, src: DataView<ArrayBufferLike>, s: number, e: number): number {
  let k = s;
  for (; k + 4 <= e; k += 4, at += 4) dst.setUint32(at, src.getUint32(k, true), true);
  for (; k < e; k++) dst.setUint8(at++, src.getUint8(k));
  return at;
}

/** Whether a code is written in a topic's JSON as it is, in ASCII (no quote, backslash, control or non-ASCII character). */
function plainAscii(s: string): boolean {
  for (let k = 0; k < s.length; k++) {
    const c = s.charCodeAt(k);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return false;
  }
  return true;
}

/** Writes the patch frames of one `apply` call (one feed, one `ts`). */
export class ValueFrames {
  /** `{"type":"patch","topic":"channel.market.`, or undefined when not ASCII. */
  private readonly topic: Uint8Array | undefined;
  /** `,"ts":…,"ops":[`. */
  readonly tsPart: string;
  /** Per layout and set of changed fields: the blocks between the values (see `blocks`); null when not ASCII. */
  private readonly cache = new Map<RowLayout, Map<number, Uint8Array[] | null>>();
  /** The buffer being written: frames already written in it are held by their events, so a full one is left to them, never reused. */
  private out = EMPTY;
  private outView = new DataView(EMPTY.buffer, EMPTY.byteOffset, 0);
  private used = 0;
  private nextChunk = FIRST_CHUNK;

  /** A writer for `channel.market` frames stamped `ts`. */
  constructor(channel: Channel, market: Market, ts: number) {
    this.topic = asciiBytes(patchHead(topicOf(channel, market, '')).slice(0, -SEQ_PART.length));
    this.tsPart = patchTsPart(ts);
  }

  /** The buffer the last frame was written to (valid after `write` returned its start). */
  get chunk(): Buffer {
    return this.out;
  }

  /** Where the last frame written ends in `chunk`. */
  get end(): number {
    return this.used;
  }

  /**
   * Writes the patch frame of row `i` of `d` (topic `code`, `seq`,
   * checksum `crc`, the row having `layout`) and returns where it starts
   * in `chunk` (it ends at `end`); -1 when a part is not ASCII or a changed
   * value's bytes are not its JSON (the caller then serialises the values).
   */
  write(code: string, seq: number, crc: number, layout: RowLayout, d: ListDelta, i: number): number {
    const n = d.changedCount(i);
    const fields = d.fields;
    const at = d.fieldAt(i);
    let mask = 0;
    for (let k = 0; k < n; k++) {
      const f = d.changedField(i, k);
      if (fields[at + 3 * f + 2] !== 1) return -1;
      mask = f < MASK_FIELDS && mask >= 0 ? mask | (1 << f) : -1;
    }
    const blocks = this.blocks(layout, d, i, mask);
    const topic = this.topic;
    if (topic === undefined || blocks === undefined || !plainAscii(code) || seq >= 4_294_967_296) return -1;
    const seqDigits = digitCount(seq);
    const crcDigits = digitCount(crc);
    let len = topic.length + code.length + SEQ_PART.length + seqDigits + blocks[n]!.length + crcDigits + 1;
    for (let k = 0; k < n; k++) {
      const f = d.changedField(i, k);
      len += blocks[k]!.length + fields[at + 3 * f + 1]! - fields[at + 3 * f]!;
    }
    if (this.used + len > this.out.length) {
      // Unpooled: a frame's buffer is its batch's alone.
      this.out = Buffer.allocUnsafeSlow(Math.max(this.nextChunk, len));
      this.outView = new DataView(this.out.buffer, this.out.byteOffset, this.out.length);
      this.nextChunk = Math.min(LAST_CHUNK, 2 * this.nextChunk);
      this.used = 0;
    }
    const out = this.out;
    const ov = this.outView;
    const bytes = d.view;
    const start = d.rowStart(i);
    const first = this.used;
    out.set(topic, first);
    let p = first + topic.length;
    for (let k = 0; k < code.length; k++) out[p++] = code.charCodeAt(k);
    out.set(SEQ_PART, p);
    p = putInt(out, p + SEQ_PART.length, seq, seqDigits);
    for (let k = 0; k < n; k++) {
      const f = d.changedField(i, k);
      out.set(blocks[k]!, p);
      p = copyBytes(ov, p + blocks[k]!.length, bytes, start + fields[at + 3 * f]!, start + fields[at + 3 * f + 1]!);
    }
    out.set(blocks[n]!, p);
    p = putInt(out, p + blocks[n]!.length, crc, crcDigits);
    out[p] = 0x7d;
    this.used = first + len;
    return first;
  }

  /**
   * The blocks before each changed value and after the last:
   * `,"ts":…,"ops":[{"op":"replace","path":"/a","value":`, then
   * `},{"op":"replace","path":"/b","value":` for each further one, then
   * `}],"crc":`. Kept per layout and set of changed fields; undefined
   * when one is not ASCII.
   */
  private blocks(layout: RowLayout, d: ListDelta, i: number, mask: number): Uint8Array[] | undefined {
    let byMask = this.cache.get(layout);
    if (byMask === undefined) this.cache.set(layout, (byMask = new Map()));
    let out = mask >= 0 ? byMask.get(mask) : undefined;
    if (out === undefined) {
      const n = d.changedCount(i);
      const texts: string[] = [];
      for (let k = 0; k < n; k++) texts.push((k === 0 ? this.tsPart : '},') + layout.replaceHeads[d.changedField(i, k)]!);
      texts.push('}],"crc":');
      const bytes = texts.map(asciiBytes);
      // null: some block is not ASCII, for this set of fields as for any other.
      out = bytes.every((b) => b !== undefined) ? (bytes as Uint8Array[]) : null;
      if (mask >= 0) byMask.set(mask, out);
    }
    return out ?? undefined;
  }
}
