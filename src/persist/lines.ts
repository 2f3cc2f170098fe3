import { crc32 } from 'node:zlib';
import { ByteBuilder } from '../bytes.js';

/**
 * The line format of the state files: `<crc32 of the JSON, 8 hex> <JSON>\n`.
 * A line whose checksum does not match (a torn or damaged write) is told
 * apart from a good one. The checksum is CRC-32 (IEEE) of the JSON's UTF-8
 * bytes, computed natively (zlib).
 */

/** Bytes of a line's checksum and the space after it. */
const HEAD = 9;
const HEX = Buffer.from('0123456789abcdef', 'latin1');

/** One line for `value`. Pure. */
export function encodeLine(value: unknown): string {
  const json = JSON.stringify(value);
  return `${(crc32(json) >>> 0).toString(16).padStart(8, '0')} ${json}\n`;
}

/**
 * Lines written one after another as bytes: each value's JSON is encoded
 * once, straight into place, and its checksum taken from those bytes. What
 * a flush of many lines writes, without a string per line or a join of
 * them. Byte for byte the `encodeLine`s of the same values.
 */
export class LineBuffer {
  private readonly out: ByteBuilder;

  /** An empty buffer with room for `bytes` to begin with. */
  constructor(bytes?: number) {
    this.out = new ByteBuilder(bytes);
  }

  /** Bytes held. */
  get length(): number {
    return this.out.length;
  }

  /** Appends the line of `value`. */
  add(value: unknown): void {
    this.addJson(JSON.stringify(value));
  }

  /** Appends the line of a value already serialised: `json` must be `JSON.stringify` of it (a frame as sent, say), as text or as its UTF-8 bytes. */
  addJson(json: string | Uint8Array): void {
    const out = this.out;
    const head = out.skip(HEAD);
    const n = typeof json === 'string' ? out.text(json) : out.bytes(json);
    const c = crc32(out.view(head + HEAD, head + HEAD + n)) >>> 0;
    for (let k = 0; k < 8; k++) out.set(head + k, HEX[(c >>> (28 - 4 * k)) & 15]!);
    out.set(head + 8, 0x20);
    out.set(out.skip(1), 0x0a);
  }

  /** The lines added since the last `take`, which start over. The bytes are the caller's. */
  take(): Buffer {
    return this.out.take();
  }
}

/** What a line holds: its value, or why it cannot be read. */
export type DecodedLine = { ok: true; value: unknown } | { ok: false; reason: string };

/** The value of the 8 lowercase hex digits at `at`; -1 when they are not. */
function hexWord(bytes: Uint8Array, at: number): number {
  let v = 0;
  for (let k = at; k < at + 8; k++) {
    const c = bytes[k]!;
    const d = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

/**
 * Reads the line in `bytes` from `start` to `end` (without its newline):
 * its checksum is taken of the bytes as they are, and only a line that
 * passes is decoded and parsed. Pure.
 */
export function decodeLineAt(bytes: Buffer, start: number, end: number): DecodedLine {
  if (end - start < 10 || bytes[start + 8] !== 0x20) return { ok: false, reason: 'not a state line' };
  if (crc32(bytes.subarray(start + HEAD, end)) >>> 0 !== hexWord(bytes, start)) return { ok: false, reason: 'checksum mismatch' };
  try {
    return { ok: true, value: JSON.parse(bytes.toString('utf8', start + HEAD, end)) as unknown };
  } catch {
    return { ok: false, reason: 'not JSON' };
  }
}

/** Reads one line (without its newline). Pure. */
export function decodeLine(line: string): DecodedLine {
  const bytes = Buffer.from(line);
  return decodeLineAt(bytes, 0, bytes.length);
}
