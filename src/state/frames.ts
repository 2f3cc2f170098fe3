import { isPlainJsonString } from '../protocol/crc32.js';
import type { PatchOp } from '../protocol/messages.js';
import type { Row } from '../upstream/normalise.js';

/**
 * Serialisers of the `snapshot` and `patch` messages from cached JSON
 * fragments (the topic, each field's JSON Pointer and op prefix, a row's
 * data), byte-identical to `JSON.stringify` of the same message object.
 * Pure functions. See docs/PROTOCOL.md §Server messages.
 */

/**
 * `JSON.stringify(v)` of a scalar (number, string, null, boolean); undefined
 * for anything else (the caller then serialises the whole message itself).
 */
export function jsonScalar(v: unknown): string | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? '' + v : 'null';
  if (typeof v === 'string') return isPlainJsonString(v) ? '"' + v + '"' : JSON.stringify(v);
  if (v === null) return 'null';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  return undefined;
}

/** The start of every patch frame of a topic: `{"type":"patch","topic":"…","seq":`. */
export function patchHead(topic: string): string {
  return '{"type":"patch","topic":' + JSON.stringify(topic) + ',"seq":';
}

/** The start of every snapshot frame of a topic: `{"type":"snapshot","topic":"…","seq":`. */
export function snapshotHead(topic: string): string {
  return '{"type":"snapshot","topic":' + JSON.stringify(topic) + ',"seq":';
}

/** The text between a patch's seq and its first op, for one `ts`: `,"ts":…,"ops":[`. */
export function patchTsPart(ts: number): string {
  return ',"ts":' + (jsonScalar(ts) ?? 'null') + ',"ops":[';
}

/** The end of a patch frame: `],"crc":…}`. */
export function patchTail(crc: number): string {
  return '],"crc":' + crc + '}';
}

/** A patch message serialised by `JSON.stringify`, for values the fragments do not cover. */
export function plainPatchFrame(topic: string, seq: number, ts: number, ops: readonly PatchOp[], crc: number): string {
  return JSON.stringify({ type: 'patch', topic, seq, ts, ops, crc });
}

/**
 * The end of a snapshot frame of a row, from its data on: `,"data":…,"crc":…}`.
 * It changes only with the row, so it is cached per seq.
 */
export function snapshotTail(row: Readonly<Row>, crc: number): string {
  return ',"data":' + JSON.stringify(row) + ',"crc":' + crc + '}';
}

/**
 * `s` as one flat string. A string built by concatenation is a tree of its
 * pieces until something reads it; reading one character makes V8 flatten
 * it, so a frame kept for replay holds one string, not a dozen pieces for
 * the garbage collector to copy and trace.
 */
export function flat(s: string): string {
  s.charCodeAt(0);
  return s;
}

/** A snapshot frame from its head, seq, ts and cached tail. */
export function snapshotFrameOf(head: string, seq: number, ts: number, tail: string): string {
  return head + seq + ',"ts":' + (jsonScalar(ts) ?? 'null') + tail;
}

/**
 * A frame written as bytes into one reused buffer and read back as a
 * string: one flat string made in one step, from byte blocks cached by the
 * caller, text fragments, numbers, and bytes already at hand (the JSON of
 * values in an upstream body). Only for frames that are all ASCII; `end`
 * says when one was not.
 */
export class AsciiFrame {
  private buf = Buffer.allocUnsafe(1024);
  private n = 0;
  private high = 0;
  private readonly digits = new Uint8Array(16);

  /** Starts a new frame. */
  begin(): void {
    this.n = 0;
    this.high = 0;
  }

  /** Appends a block of ASCII bytes (see `asciiBytes`). */
  block(b: Uint8Array): void {
    this.room(b.length);
    this.buf.set(b, this.n);
    this.n += b.length;
  }

  /** Appends a text fragment. */
  text(s: string): void {
    const len = s.length;
    this.room(len);
    const buf = this.buf;
    let n = this.n;
    let high = this.high;
    for (let k = 0; k < len; k++) {
      const c = s.charCodeAt(k);
      high |= c;
      buf[n++] = c;
    }
    this.n = n;
    this.high = high;
  }

  /** Appends one ASCII character code. */
  char(c: number): void {
    this.room(1);
    this.buf[this.n++] = c;
  }

  /** Appends the decimal digits of a non-negative safe integer, as `String(v)` writes them. */
  int(v: number): void {
    const d = this.digits;
    let k = 0;
    do {
      const q = Math.floor(v / 10);
      d[k++] = 48 + v - q * 10;
      v = q;
    } while (v > 0);
    this.room(k);
    const buf = this.buf;
    let n = this.n;
    while (k > 0) buf[n++] = d[--k]!;
    this.n = n;
  }

  /** Appends bytes `[s, e)` of `src`. */
  bytes(src: Uint8Array, s: number, e: number): void {
    this.room(e - s);
    const buf = this.buf;
    let n = this.n;
    let high = this.high;
    for (let k = s; k < e; k++) {
      const c = src[k]!;
      high |= c;
      buf[n++] = c;
    }
    this.n = n;
    this.high = high;
  }

  /** The frame as a flat string, or undefined when something appended was not ASCII. */
  end(): string | undefined {
    return this.high > 0x7f ? undefined : this.buf.toString('latin1', 0, this.n);
  }

  private room(k: number): void {
    if (this.n + k <= this.buf.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.n + k));
    this.buf.copy(grown, 0, 0, this.n);
    this.buf = grown;
  }
}

/** The bytes of an ASCII text, for `AsciiFrame.block`; undefined when the text is not ASCII. */
export function asciiBytes(s: string): Uint8Array | undefined {
  const out = new Uint8Array(s.length);
  for (let k = 0; k < s.length; k++) {
    const c = s.charCodeAt(k);
    if (c > 0x7f) return undefined;
    out[k] = c;
  }
  return out;
}
