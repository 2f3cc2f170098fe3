import type { Row } from '../upstream/normalise.js';

/**
 * A fixed-capacity ring of the patch frames of one topic, by seq, for
 * resume: a client that reconnects with its last seq gets the frames it
 * missed if they are all still here.
 *
 * The ring holds one run of consecutive seqs ending at the last one pushed:
 * a resume needs every frame from its seq to the latest, so frames before a
 * gap could never be sent, and a seq need not be stored per frame.
 *
 * A change the store made here is kept as the rows before and after it
 * and its time, and its frame is made again only when a resume first asks
 * for it (then kept, for the clients that resume after it): the rows are
 * the topic's state and outlive a poll anyway, while a frame kept as a
 * string was one more object per change to outlive the young generation. Copying those frames out of it was
 * most of the garbage collector's time with a whole market changing every
 * second (bench/README.md, "The replay rings keep rows"). Frames the ring
 * is given as they are (a cluster leader's, or loaded from the shared
 * state) are kept as they are.
 */

/** Makes the patch frame of `seq` (time `ts`) that changed `prev` into `row`. */
export type FrameMaker = (seq: number, ts: number, prev: Row, row: Row) => string;

/** The last `capacity` patch frames of a topic, for resume. */
export class ReplayRing {
  /**
   * Three entries per slot, side by side (one place in memory to write per
   * change): the frame as given, or the row before the change; undefined,
   * or the row after it; and the change's time, as ms after `baseTs` (a
   * small integer, which an array holds without allocating).
   */
  private readonly items: unknown[];
  private readonly baseTs: number;
  private head = 0;
  private size = 0;
  /** Seq of the last frame pushed (meaningful while `size` > 0). */
  private last = 0;

  /** A ring holding the last `capacity` frames (at least 1); `baseTs`: about when its changes happen (ms epoch). */
  constructor(
    readonly capacity: number,
    baseTs = 0,
  ) {
    const c = Math.max(1, Math.floor(capacity));
    this.items = new Array<unknown>(3 * c).fill(undefined);
    this.baseTs = baseTs;
  }

  /** Adds the frame of `seq`; seqs must be pushed in increasing order. A seq that does not follow the last drops the frames before it. */
  push(seq: number, frame: string): void {
    const k = 3 * this.slot(seq);
    this.items[k] = frame;
    this.items[k + 1] = undefined;
  }

  /**
   * Adds the change of `seq` as the rows before and after it and its time
   * (the same rule of order as `push`); its frame is made by `since`'s
   * maker when a resume needs it.
   */
  pushRows(seq: number, ts: number, prev: Row, row: Row): void {
    const k = 3 * this.slot(seq);
    const items = this.items;
    items[k] = prev;
    items[k + 1] = row;
    items[k + 2] = ts - this.baseTs;
  }

  /** The slot for `seq`, the ring advanced past it. */
  private slot(seq: number): number {
    const c = this.items.length / 3;
    if (this.size > 0 && seq !== this.last + 1) this.size = 0;
    const i = this.head;
    if (++this.head === c) this.head = 0;
    if (this.size < c) this.size++;
    this.last = seq;
    return i;
  }

  /** Oldest seq held, or undefined when empty. */
  oldest(): number | undefined {
    return this.size === 0 ? undefined : this.last - this.size + 1;
  }

  /**
   * The frames with seq greater than `after`, in order, when they are all
   * held and contiguous up to `latest`; undefined otherwise (the caller then
   * sends a snapshot). Empty when the client is already at `latest`. A
   * change held as rows gets its frame from `make`, and keeps it.
   */
  since(after: number, latest: number, make: FrameMaker): string[] | undefined {
    if (after === latest) return [];
    if (!this.covers(after, latest)) return undefined;
    const c = this.items.length / 3;
    const items = this.items;
    const out: string[] = [];
    for (let seq = after + 1; seq <= latest; seq++) {
      const k = 3 * ((this.head - 1 - (latest - seq) + 2 * c) % c);
      const row = items[k + 1] as Row | undefined;
      if (row !== undefined) {
        // Made once: a reconnecting crowd resumes from the same few seqs.
        items[k] = make(seq, this.baseTs + (items[k + 2] as number), items[k] as Row, row);
        items[k + 1] = undefined;
      }
      out.push(items[k] as string);
    }
    return out;
  }

  /** Whether `since(after, latest)` would give the frames (without making them). */
  covers(after: number, latest: number): boolean {
    if (after === latest) return true;
    return after < latest && this.size > 0 && latest === this.last && after + 1 >= this.last - this.size + 1;
  }

  /** Drops every frame (e.g. when the topic's row is replaced by a snapshot). */
  clear(): void {
    this.items.fill(undefined);
    this.size = 0;
  }
}
