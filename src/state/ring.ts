/**
 * A fixed-capacity ring of serialised patch frames of one topic, by seq, for
 * resume: a client that reconnects with its last seq gets the frames it
 * missed if they are all still here.
 *
 * The ring holds one run of consecutive seqs ending at the last one pushed:
 * a resume needs every frame from its seq to the latest, so frames before a
 * gap could never be sent, and a seq need not be stored per frame.
 */
export class ReplayRing {
  private readonly frames: (string | undefined)[];
  private head = 0;
  private size = 0;
  /** Seq of the last frame pushed (meaningful while `size` > 0). */
  private last = 0;

  /** A ring holding the last `capacity` frames (at least 1). */
  constructor(readonly capacity: number) {
    const c = Math.max(1, Math.floor(capacity));
    this.frames = new Array<string | undefined>(c);
  }

  /** Adds the frame of `seq`; seqs must be pushed in increasing order. A seq that does not follow the last drops the frames before it. */
  push(seq: number, frame: string): void {
    const c = this.frames.length;
    if (this.size > 0 && seq !== this.last + 1) this.size = 0;
    this.frames[this.head] = frame;
    if (++this.head === c) this.head = 0;
    if (this.size < c) this.size++;
    this.last = seq;
  }

  /** Oldest seq held, or undefined when empty. */
  oldest(): number | undefined {
    return this.size === 0 ? undefined : this.last - this.size + 1;
  }

  /**
   * The frames with seq greater than `after`, in order, when they are all
   * held and contiguous up to `latest`; undefined otherwise (the caller then
   * sends a snapshot). Empty when the client is already at `latest`.
   */
  since(after: number, latest: number): string[] | undefined {
    if (after === latest) return [];
    if (after > latest || this.size === 0 || latest !== this.last || after + 1 < this.last - this.size + 1) return undefined;
    const c = this.frames.length;
    const out: string[] = [];
    for (let seq = after + 1; seq <= latest; seq++) out.push(this.frames[(this.head - 1 - (latest - seq) + 2 * c) % c]!);
    return out;
  }

  /** Drops every frame (e.g. when the topic's row is replaced by a snapshot). */
  clear(): void {
    this.frames.fill(undefined);
    this.size = 0;
  }
}
