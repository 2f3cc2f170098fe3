/**
 * A fixed-capacity ring of serialised patch frames of one topic, by seq, for
 * resume: a client that reconnects with its last seq gets the frames it
 * missed if they are all still here.
 */
export class ReplayRing {
  private readonly frames: (string | undefined)[];
  private readonly seqs: Float64Array;
  private head = 0;
  private size = 0;

  /** A ring holding the last `capacity` frames (at least 1). */
  constructor(readonly capacity: number) {
    const c = Math.max(1, Math.floor(capacity));
    this.frames = new Array<string | undefined>(c);
    this.seqs = new Float64Array(c);
  }

  /** Adds the frame of `seq`; seqs must be pushed in increasing order. */
  push(seq: number, frame: string): void {
    const c = this.frames.length;
    this.frames[this.head] = frame;
    this.seqs[this.head] = seq;
    this.head = (this.head + 1) % c;
    if (this.size < c) this.size++;
  }

  /** Oldest seq held, or undefined when empty. */
  oldest(): number | undefined {
    if (this.size === 0) return undefined;
    const c = this.frames.length;
    return this.seqs[(this.head - this.size + c) % c];
  }

  /**
   * The frames with seq greater than `after`, in order, when they are all
   * held and contiguous up to `latest`; undefined otherwise (the caller then
   * sends a snapshot). Empty when the client is already at `latest`.
   */
  since(after: number, latest: number): string[] | undefined {
    if (after === latest) return [];
    if (after > latest || this.size === 0) return undefined;
    const c = this.frames.length;
    const first = this.oldest()!;
    if (after + 1 < first) return undefined;
    const out: string[] = [];
    let expect = after + 1;
    for (let i = 0; i < this.size; i++) {
      const idx = (this.head - this.size + i + c) % c;
      const seq = this.seqs[idx]!;
      if (seq <= after) continue;
      if (seq !== expect) return undefined;
      out.push(this.frames[idx]!);
      expect++;
    }
    return expect - 1 === latest ? out : undefined;
  }

  /** Drops every frame (e.g. when the topic's row is replaced by a snapshot). */
  clear(): void {
    this.frames.fill(undefined);
    this.size = 0;
  }
}
