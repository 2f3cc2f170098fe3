/**
 * Text written one piece after another into one growing buffer as UTF-8
 * bytes: what a writer of many small lines uses instead of joining strings
 * (a long joined string is flattened and encoded once more at the end).
 */

const EMPTY = Buffer.alloc(0);

/** A growing byte buffer that text is appended to. */
export class ByteBuilder {
  /** Empty until the first append after a `take`: a builder that is not used again allocates nothing more. */
  private buf = EMPTY;
  private at = 0;

  /** Room made at the first append: `initialBytes`, then what the last `take` held, so a writer of like batches grows once. */
  private room: number;

  /** An empty builder that makes room for `initialBytes` at first (more as it grows). */
  constructor(private readonly initialBytes = 64 << 10) {
    this.room = initialBytes;
  }

  /** Bytes held. */
  get length(): number {
    return this.at;
  }

  /** Appends the UTF-8 bytes of `s`; returns how many. */
  text(s: string): number {
    // At most three UTF-8 bytes per UTF-16 unit.
    this.reserve(3 * s.length);
    const n = this.buf.write(s, this.at);
    this.at += n;
    return n;
  }

  /** Appends `b`'s bytes; returns how many. */
  bytes(b: Uint8Array): number {
    this.reserve(b.length);
    this.buf.set(b, this.at);
    this.at += b.length;
    return b.length;
  }

  /** Appends `n` bytes to be filled in later with `set`; returns where they start. */
  skip(n: number): number {
    this.reserve(n);
    const at = this.at;
    this.at += n;
    return at;
  }

  /** Sets the byte at `at` (below `length`). */
  set(at: number, byte: number): void {
    this.buf[at] = byte;
  }

  /** The bytes `[from, to)` held, as a view valid until the next append or `take`. */
  view(from: number, to: number): Buffer {
    return this.buf.subarray(from, to);
  }

  /** Everything appended since the last `take`; the builder starts over. The bytes are the caller's. */
  take(): Buffer {
    const out = this.buf.subarray(0, this.at);
    this.room = Math.max(this.initialBytes, this.at);
    this.buf = EMPTY;
    this.at = 0;
    return out;
  }

  private reserve(bytes: number): void {
    if (this.at + bytes <= this.buf.length) return;
    const grown = Buffer.allocUnsafe(Math.max(2 * this.buf.length, this.room, this.at + bytes));
    this.buf.copy(grown, 0, 0, this.at);
    this.buf = grown;
  }
}
