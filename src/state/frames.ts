import { encode } from '../protocol/encode.js';
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

/** A patch message serialised by `encode`, for values the fragments do not cover. */
export function plainPatchFrame(topic: string, seq: number, ts: number, ops: readonly PatchOp[], crc: number): string {
  return encode({ type: 'patch', topic, seq, ts, ops: [...ops], crc });
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

/** The bytes of an ASCII text (frame fragments written as bytes); undefined when the text is not ASCII. */
export function asciiBytes(s: string): Uint8Array | undefined {
  const out = new Uint8Array(s.length);
  for (let k = 0; k < s.length; k++) {
    const c = s.charCodeAt(k);
    if (c > 0x7f) return undefined;
    out[k] = c;
  }
  return out;
}
