/**
 * Text written one piece after another into one growing buffer as UTF-8
 * bytes: what a writer of many small lines uses instead of joining strings
 * (a long joined string is flattened and encoded once more at the end).
 */

/** A growing byte buffer that text is appended to. */
export class ByteBuilder {
  private buf: Buffer;
  private at = 0;

  /** An empty builder with room for `bytes` to begin with. */
  constructor(bytes = 64 << 10) {
    this.buf = Buffer.allocUnsafe(bytes);
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
    this.buf = Buffer.allocUnsafe(this.buf.length);
    this.at = 0;
    return out;
  }

  private reserve(bytes: number): void {
    if (this.at + bytes <= this.buf.length) return;
    const grown = Buffer.allocUnsafe(Math.max(2 * this.buf.length, this.at + bytes));
    this.buf.copy(grown, 0, 0, this.at);
    this.buf = grown;
  }
}
