import type { Row } from '../upstream/normalise.js';

/**
 * Fixed-capacity rings of the patch frames of the topics of one feed, by
 * seq, for resume: a client that reconnects with its last seq gets the
 * frames it missed if they are all still here.
 *
 * Each ring holds one run of consecutive seqs ending at the last one
 * pushed: a resume needs every frame from its seq to the latest, so frames
 * before a gap could never be sent, and a seq need not be stored per frame.
 *
 * A change the store made here is kept as the rows before and after it
 * and its time, and its frame is made again only when a resume first asks
 * for it (then kept, for the clients that resume after it): the rows are
 * the topic's state and outlive a poll anyway, while a frame kept as a
 * string was one more object per change to outlive the young generation.
 * Copying those frames out of it was most of the garbage collector's time
 * with a whole market changing every second (bench/HISTORY.md, "The replay
 * rings keep rows"). Frames a ring is given as they are (a cluster
 * leader's, or loaded from the shared state) are kept as they are.
 *
 * The rings of a feed live side by side in a few arrays (a block of them
 * for every 256 rings of 32), not an object and an array per topic: a push
 * writes into memory reached from the feed, which a poll touches anyway,
 * instead of first reading a ring object and its array that were last
 * touched seconds ago, a cache miss each for a third of a whole market
 * every second (bench/HISTORY.md, "The cycle, third round"). Where a ring
 * stands (its next slot, how many it holds, its last seq) is kept by its
 * holder, the topic's entry, which the change has just read: kept here, it
 * was one more line of memory to fetch per change (bench/HISTORY.md, "The
 * cycle, fourth round").
 */

/** Makes the patch frame of `seq` (time `ts`) that changed `prev` into `row`. */
export type FrameMaker = (seq: number, ts: number, prev: Row, row: Row) => string;

/**
 * A ring and where it stands, kept in its holder's own object (a topic's
 * entry): `ring` is its index from `add` (undefined before), the others
 * start at 0 and are `ReplayRings`' to change.
 */
export interface RingPlace {
  ring: number | undefined;
  /** The slot the next push takes. */
  ringHead: number;
  /** How many changes the ring holds. */
  ringSize: number;
  /** The seq of the last change pushed. */
  ringLast: number;
}

/**
 * About how many entries a block's array of rows holds. Rings are added a
 * block at a time and never moved: a feed that gains topics costs at most
 * a block's slack (where doubling one array could leave half of it
 * unused), and no push waits for every ring's arrays to be copied into
 * larger ones.
 */
const BLOCK_ENTRIES = 16_384;

/** The rings of one feed's topics, each holding the last `capacity` frames of its topic. */
export class ReplayRings {
  /** Frames held per ring (at least 1). */
  readonly capacity: number;
  /**
   * Per block of rings: two entries per slot, `capacity` slots per
   * ring, ring after ring: the frame as given, or the row before the
   * change; undefined, or the row after it.
   */
  private readonly items: unknown[][] = [];
  /** Per block: the change's time (ms epoch) of each slot. */
  private readonly times: Float64Array[] = [];
  /** Rings added. */
  private count = 0;
  /** Rings per block: `1 << bits`, a power of two. */
  private readonly bits: number;
  private readonly mask: number;

  /** No rings yet, each to hold the last `capacity` frames (at least 1). */
  constructor(capacity: number) {
    this.capacity = Math.max(1, Math.floor(capacity));
    this.bits = Math.max(0, Math.floor(Math.log2(BLOCK_ENTRIES / (2 * this.capacity))));
    this.mask = (1 << this.bits) - 1;
  }

  /** Gives `h` an empty ring of its own (its `ring` was undefined). */
  add(h: RingPlace): void {
    const r = this.count++;
    if ((r & this.mask) === 0) {
      const slots = (this.mask + 1) * this.capacity;
      this.items.push(new Array<unknown>(2 * slots).fill(undefined));
      this.times.push(new Float64Array(slots));
    }
    h.ring = r;
    h.ringHead = 0;
    h.ringSize = 0;
    h.ringLast = 0;
  }

  /** Adds the frame of `seq` to `h`'s ring; seqs must be pushed in increasing order. A seq that does not follow the last drops the frames before it. */
  push(h: RingPlace, seq: number, frame: string): void {
    const q = this.slot(h, seq);
    const items = this.items[h.ring! >>> this.bits]!;
    items[2 * q] = frame;
    items[2 * q + 1] = undefined;
  }

  /**
   * Adds the change of `seq` to `h`'s ring as the rows before and after it
   * and its time (the same rule of order as `push`); its frame is made by
   * `since`'s maker when a resume needs it.
   */
  pushRows(h: RingPlace, seq: number, ts: number, prev: Row, row: Row): void {
    const q = this.slot(h, seq);
    const b = h.ring! >>> this.bits;
    const items = this.items[b]!;
    items[2 * q] = prev;
    items[2 * q + 1] = row;
    this.times[b]![q] = ts;
  }

  /** The slot in its block for `seq` in `h`'s ring, the ring advanced past it. */
  private slot(h: RingPlace, seq: number): number {
    const c = this.capacity;
    let size = h.ringSize;
    if (size > 0 && seq !== h.ringLast + 1) size = 0;
    const head = h.ringHead;
    h.ringHead = head + 1 === c ? 0 : head + 1;
    h.ringSize = size < c ? size + 1 : size;
    h.ringLast = seq;
    return (h.ring! & this.mask) * c + head;
  }

  /** Oldest seq `h`'s ring holds, or undefined when it is empty. */
  oldest(h: RingPlace): number | undefined {
    return h.ring === undefined || h.ringSize === 0 ? undefined : h.ringLast - h.ringSize + 1;
  }

  /**
   * The frames of `h`'s ring with seq greater than `after`, in order, when
   * they are all held and contiguous up to `latest`; undefined otherwise
   * (the caller then sends a snapshot). Empty when the client is already at
   * `latest`. A change held as rows gets its frame from `make`, and keeps
   * it.
   */
  since(h: RingPlace, after: number, latest: number, make: FrameMaker): string[] | undefined {
    if (after === latest) return [];
    if (!this.covers(h, after, latest)) return undefined;
    const c = this.capacity;
    const b = h.ring! >>> this.bits;
    const i = h.ring! & this.mask;
    const head = h.ringHead;
    const items = this.items[b]!;
    const times = this.times[b]!;
    const out: string[] = [];
    for (let seq = after + 1; seq <= latest; seq++) {
      const q = i * c + ((head - 1 - (latest - seq) + 2 * c) % c);
      const row = items[2 * q + 1] as Row | undefined;
      if (row !== undefined) {
        // Made once: a reconnecting crowd resumes from the same few seqs.
        items[2 * q] = make(seq, times[q]!, items[2 * q] as Row, row);
        items[2 * q + 1] = undefined;
      }
      out.push(items[2 * q] as string);
    }
    return out;
  }

  /** Whether `since(h, after, latest)` would give the frames (without making them). */
  covers(h: RingPlace, after: number, latest: number): boolean {
    if (after === latest) return true;
    const size = h.ringSize;
    const last = h.ringLast;
    return h.ring !== undefined && after < latest && size > 0 && latest === last && after + 1 >= last - size + 1;
  }

  /** Drops every frame of `h`'s ring (e.g. when its topic's row is replaced by a snapshot). */
  clear(h: RingPlace): void {
    if (h.ring === undefined) return;
    const c = this.capacity;
    const i = h.ring & this.mask;
    this.items[h.ring >>> this.bits]!.fill(undefined, 2 * i * c, 2 * (i + 1) * c);
    h.ringSize = 0;
  }
}
