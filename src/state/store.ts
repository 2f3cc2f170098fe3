import { randomBytes } from 'node:crypto';
import type { Row } from '../upstream/normalise.js';
import { CHANNELS, MARKETS, type Channel, type Market } from '../protocol/constants.js';
import type { PatchOp } from '../protocol/messages.js';
import { feedOf, topicOf } from '../protocol/topics.js';
import { hasShape, rowChecksum, shapedChecksum } from '../protocol/crc32.js';
import type { ListDelta } from '../upstream/listread.js';
import { Change, type ChangeEvent } from './change.js';
import { applyOps, diffRows } from '../protocol/patch.js';
import { flat, patchHead, patchTail, patchTsPart, plainPatchFrame, snapshotFrameOf, snapshotHead, snapshotTail } from './frames.js';
import { Layouts, diffLaid, laidOpsJson, type RowLayout } from './layout.js';
import { ReplayRings, type RingPlace } from './ring.js';
import { ValueFrames } from './valueframes.js';

export type { ChangeEvent } from './change.js';

/**
 * Latest row, seq, checksum and replay ring of every topic, and the change
 * events produced by applying successive upstream snapshots.
 * See docs/PROTOCOL.md §Sequence numbers.
 */

/** One topic's state. */
export interface TopicEntry extends RingPlace {
  readonly topic: string;
  readonly code: string;
  /** The latest row. */
  row: Row;
  /** Seq of the latest change (the first row seen is seq 1). */
  seq: number;
  /** When the response that produced the latest change arrived (ms epoch). */
  ts: number;
  /** When the latest response that carried this row arrived (ms epoch). */
  readonly seenTs: number;
  /** CRC-32 of the canonical latest row. */
  crc: number;
  /**
   * Patch frames of recent changes, for resume: the rings of the topic's
   * feed, its own among them from its first change on (`ring` and where it
   * stands, set by the store).
   */
  rings?: ReplayRings;
  /**
   * The end of this topic's snapshot frame from `"data"` on (the row's
   * JSON and checksum) and the seq it was built for: it changes only with
   * the seq, while the frame's `ts` changes with every poll.
   */
  snap?: { seq: number; tail: string };
  /** The keys of `row` and the fragments derived from them (set by the store). */
  layout?: RowLayout;
  /** The start of this topic's patch frames, `{"type":"patch","topic":…,"seq":` (set by the store). */
  patchHead?: string;
}

/** The changes of one feed (channel, market) from one upstream response. */
export interface ChangeBatch {
  readonly channel: Channel;
  readonly market: Market;
  /** When the upstream response arrived (ms epoch). */
  readonly ts: number;
  readonly events: readonly ChangeEvent[];
}

/** Options of `StateStore`. */
export interface StateStoreOptions {
  /** Patch frames kept per topic for resume; default 32. */
  readonly ringSize?: number;
  /** Process epoch; default a random id. */
  readonly epoch?: string;
}

/**
 * A change made by another process (the cluster leader), as the backplane
 * delivers it: the frame it published and what the frame says.
 */
export interface RemoteChange {
  readonly code: string;
  readonly seq: number;
  /** When the upstream response that produced it arrived (ms epoch). */
  readonly ts: number;
  readonly kind: 'snapshot' | 'patch';
  /** The serialised message, forwarded to clients unchanged. */
  readonly frame: string;
  /** The whole row (snapshots). */
  readonly row?: Row;
  /** The operations (patches). */
  readonly ops?: readonly PatchOp[];
  /** CRC-32 of the canonical row after the change. */
  readonly crc: number;
}

/**
 * What `StateStore.mirror` did with a remote change: applied it (the event
 * to fan out), ignored a duplicate, or found that changes are missing.
 */
export type MirrorOutcome = { readonly kind: 'applied'; readonly event: ChangeEvent } | { readonly kind: 'duplicate' } | { readonly kind: 'gap' };

/** A topic's state as persisted outside the process (the cluster's shared state). */
export interface PersistedEntry {
  readonly row: Row;
  readonly seq: number;
  /** When the change at `seq` arrived (ms epoch). */
  readonly ts: number;
  readonly crc: number;
}

/** A patch frame from its parts: the operations' JSON without brackets (`laidOpsJson`) between the topic's head, seq and `ts`, and the checksum. */
function laidPatchFrame(e: TopicEntry, seq: number, tsPart: string, body: string, crc: number): string {
  return flat((e.patchHead ??= patchHead(e.topic)) + seq + tsPart + body + patchTail(crc));
}

/**
 * When the topics of a feed were last carried by a whole list at once:
 * an `apply` that visits only the rows that changed (its read lines up
 * with the last, see `StateStore.apply`) does not touch the others'
 * entries, and notes here instead that every entry in `order` was seen.
 */
interface ListSeen {
  /** The entry of each position of the last list applied. */
  readonly order: (Entry | undefined)[];
  /** The `apply` (counted per feed) that carried the whole of `order`, 0 for none since `settle`. */
  gen: number;
  /** Its time. */
  ts: number;
}

/**
 * A topic's entry, every field the store may set later already in place
 * (one hidden class, every field in the object, where a field added later
 * would live in a separate property array, one more place in memory for a
 * change to reach). Its `seenTs` is its own, or its feed's last whole
 * list's when that is later.
 */
class Entry implements TopicEntry {
  rings: ReplayRings | undefined = undefined;
  ring: number | undefined = undefined;
  ringHead = 0;
  ringSize = 0;
  ringLast = 0;
  snap: { seq: number; tail: string } | undefined = undefined;
  patchHead: string | undefined = undefined;
  /** When a response last carried this row, as the store last set it here. */
  seen: number;
  /** The feed's `apply` that set `seen`. */
  seenGen = 0;
  /** Its position in the feed's last list (`ListSeen.order`), when it is there. */
  pos = -1;

  constructor(
    readonly topic: string,
    readonly code: string,
    public row: Row,
    public seq: number,
    public ts: number,
    public crc: number,
    public layout: RowLayout | undefined,
    private readonly list: ListSeen,
  ) {
    this.seen = ts;
  }

  /** When the latest response that carried this row arrived (ms epoch). */
  get seenTs(): number {
    const l = this.list;
    return l.gen > this.seenGen && l.order[this.pos] === this ? l.ts : this.seen;
  }
}

/** A new random epoch id. */
export function newEpoch(): string {
  return `${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
}

/** The topics of one feed, their replay rings, the layouts of its rows, and where each code stood in the last response. */
interface FeedState extends ListSeen {
  readonly entries: Map<string, Entry>;
  readonly rings: ReplayRings;
  readonly layouts: Layouts;
  /**
   * The entry of each position of the last list applied: a feed's list
   * comes in the same order poll after poll, so a code is usually found
   * where it was, with no hash lookup of a freshly parsed string.
   */
  readonly order: (Entry | undefined)[];
  /** `apply` calls made. */
  applies: number;
  /**
   * Whether each position of `order` holds an entry of its own whose row
   * is the last list's row object there (or none, for a row without a
   * code): a row that is the same object again then changes nothing. Not
   * so when a code comes twice in a list, or a row was kept from an equal
   * one.
   */
  coherent: boolean;
  /** The reader, the read and the key field of the last `apply`'s rows (`ListDelta`); no reader when it had no delta. */
  lastReader: object | undefined;
  lastRead: number;
  lastKey: string;
}

/** What one `apply` call gathers as it goes. */
interface Applying {
  readonly events: ChangeEvent[];
  tsPart: string | undefined;
  frames: ValueFrames | undefined;
}

/** State of every topic, grouped by feed. */
export class StateStore {
  private epoch_: string;
  private readonly ringSize: number;
  private readonly feeds = new Map<string, FeedState>();
  /** Layouts of the rows whose changes a resume makes frames of again, when a topic's own no longer fits them. */
  private readonly remakeLayouts = new Layouts();

  /** An empty store. */
  constructor(opts: StateStoreOptions = {}) {
    this.epoch_ = opts.epoch ?? newEpoch();
    this.ringSize = opts.ringSize ?? 32;
  }

  /** The epoch of the seqs held: seqs are comparable only within one epoch (per process, or per cluster). */
  get epoch(): string {
    return this.epoch_;
  }

  /**
   * Switches to another epoch (a cluster's shared one): every topic is
   * dropped, since seqs of different epochs are not comparable.
   */
  resetEpoch(epoch: string): void {
    this.epoch_ = epoch;
    this.feeds.clear();
  }

  /**
   * Applies a change another process made (cluster mirror): a patch must
   * follow the held seq by exactly one and reproduce its checksum; a
   * snapshot replaces an older row. Anything at or below the held seq is a
   * duplicate; anything else is a gap, left for the caller to fill from the
   * shared state. The ring keeps the patch frame for resume.
   */
  mirror(channel: Channel, market: Market, c: RemoteChange): MirrorOutcome {
    const feed = this.feed(channel, market);
    const e = feed.entries.get(c.code);
    feed.lastReader = undefined;
    if (e !== undefined && c.seq <= e.seq) return { kind: 'duplicate' };
    if (c.kind === 'snapshot') {
      if (c.row === undefined) return { kind: 'gap' };
      const n = this.load(channel, market, c.code, { row: c.row, seq: c.seq, ts: c.ts, crc: c.crc });
      return { kind: 'applied', event: new Change(n.topic, c.code, c.seq, 'snapshot', c.frame, n.row, c.crc) };
    }
    if (e === undefined || c.seq !== e.seq + 1 || c.ops === undefined) return { kind: 'gap' };
    const row = applyOps(e.row, c.ops);
    if (row === undefined || rowChecksum(row) !== c.crc) return { kind: 'gap' };
    e.row = row;
    e.layout = undefined;
    e.seq = c.seq;
    e.ts = c.ts;
    e.seen = c.ts;
    e.seenGen = ++feed.applies;
    e.crc = c.crc;
    // The frame as the leader made it: made again from this process's rows, whose key order an added field can change, its operations could come in another order.
    this.ringOf(e, feed).push(e, c.seq, c.frame);
    return { kind: 'applied', event: new Change(e.topic, c.code, c.seq, 'patch', c.frame, row, c.crc, c.ops) };
  }

  /**
   * Replaces a topic's state with a persisted one (cluster start, gap,
   * leadership). `frames` (seq and patch frame, ascending) refill the ring:
   * the longest run that ends at the entry's seq is kept.
   */
  load(channel: Channel, market: Market, code: string, p: PersistedEntry, frames: readonly (readonly [number, string])[] = []): TopicEntry {
    const feed = this.feed(channel, market);
    const old = feed.entries.get(code);
    this.settle(feed);
    const e = new Entry(topicOf(channel, market, code), code, p.row, p.seq, p.ts, p.crc, undefined, feed);
    // The topic's ring, if it had one, is its again, emptied.
    if (old?.ring !== undefined) {
      feed.rings.clear(old);
      e.rings = feed.rings;
      e.ring = old.ring;
      // The replaced entry no longer resumes from it.
      old.ring = undefined;
    }
    let end = frames.length;
    while (end > 0 && frames[end - 1]![0] > p.seq) end--;
    let start = end;
    while (start > 0 && frames[start - 1]![0] === p.seq - (end - start)) start--;
    if (start < end) {
      const rings = this.ringOf(e, feed);
      for (let i = Math.max(start, end - this.ringSize); i < end; i++) rings.push(e, frames[i]![0], frames[i]![1]);
    }
    feed.entries.set(code, e);
    // The entry object changed: positions remembered from the last list may point to the old one.
    feed.order.length = 0;
    feed.lastReader = undefined;
    return e;
  }

  /** Every (channel, market) that holds at least one topic. */
  *heldFeeds(): IterableIterator<readonly [Channel, Market]> {
    for (const channel of CHANNELS) {
      for (const market of MARKETS) if ((this.feeds.get(feedOf(channel, market))?.entries.size ?? 0) > 0) yield [channel, market];
    }
  }

  /**
   * Applies one upstream response's rows to a feed: each row is keyed by
   * `keyField`, diffed against the stored row, and every change becomes a
   * `patch` (or a `snapshot` for a topic seen for the first time) with
   * `seq` one above the previous. Rows equal to the stored row produce
   * nothing. Returns the batch of changes (possibly empty).
   *
   * `delta`, from the `ListReader` that read `rows`, lets a row that is the
   * stored row with a few values changed be diffed and checksummed from
   * those values alone; the changes are the same as without it.
   */
  apply(channel: Channel, market: Market, rows: readonly Row[], ts: number, keyField = 'isuSrtCd', delta?: ListDelta): ChangeBatch {
    const feed = this.feed(channel, market);
    const gen = ++feed.applies;
    const out: Applying = { events: [], tsPart: undefined, frames: undefined };
    const order = feed.order;
    if (
      delta !== undefined &&
      delta.aligned &&
      feed.coherent &&
      feed.lastReader === delta.reader &&
      feed.lastRead === delta.read - 1 &&
      feed.lastKey === keyField &&
      feed.order.length === rows.length
    ) {
      // The rows are the last apply's, position by position, but for those the reader lists as changed: only those are visited.
      const n = delta.changedRows;
      for (let k = 0; k < n; k++) this.applyRow(channel, market, feed, gen, rows, delta.changedRow(k), ts, keyField, delta, out);
      feed.gen = gen;
      feed.ts = ts;
      for (let k = 0; k < n; k++) {
        const i = delta.changedRow(k);
        if (order[i] !== undefined && order[i]!.row !== rows[i]) feed.coherent = false;
      }
    } else {
      this.settle(feed);
      for (let i = 0; i < rows.length; i++) this.applyRow(channel, market, feed, gen, rows, i, ts, keyField, delta, out);
      order.length = rows.length;
      // Each entry at one position only (its last), holding that position's row; only a read's rows can be taken the short way next.
      let coherent = delta !== undefined;
      for (let i = 0; i < rows.length && coherent; i++) coherent = order[i] === undefined || (order[i]!.row === rows[i] && order[i]!.pos === i);
      feed.coherent = coherent;
    }
    out.frames?.finish();
    feed.lastReader = delta?.reader;
    feed.lastRead = delta?.read ?? 0;
    feed.lastKey = keyField;
    return { channel, market, ts, events: out.events };
  }

  /**
   * Makes the entries that lazily took the time of the feed's last whole
   * list (`ListSeen`) hold it themselves, before `order` changes.
   */
  private settle(feed: FeedState): void {
    if (feed.gen === 0) return;
    const order = feed.order;
    for (let i = 0; i < order.length; i++) {
      const e = order[i];
      if (e !== undefined && e.pos === i && feed.gen > e.seenGen) {
        e.seen = feed.ts;
        e.seenGen = feed.gen;
      }
    }
    feed.gen = 0;
  }

  /** Applies row `i` of `rows` (apply `gen` of the feed), adding its event, if any, to `out`. */
  private applyRow(
    channel: Channel,
    market: Market,
    feed: FeedState,
    gen: number,
    rows: readonly Row[],
    i: number,
    ts: number,
    keyField: string,
    delta: ListDelta | undefined,
    out: Applying,
  ): void {
    const { entries, layouts, order } = feed;
    const row = rows[i]!;
    let e = order[i];
    // The very row object stored at this place last time (the reader found the same bytes): only its time changes.
    if (e !== undefined && e.row === row) {
      e.seen = ts;
      e.seenGen = gen;
      e.pos = i;
      return;
    }
    const code = row[keyField];
    if (typeof code !== 'string' || code.length === 0) {
      order[i] = undefined;
      return;
    }
    if (e === undefined || e.code !== code) {
      e = entries.get(code);
      if (e === undefined) {
        const layout = layouts.of(row);
        e = new Entry(topicOf(channel, market, code), code, row, 1, ts, shapedChecksum(row, layout), layout, feed);
        e.seenGen = gen;
        entries.set(code, e);
        order[i] = e;
        e.pos = i;
        out.events.push(new Change(e.topic, code, 1, 'snapshot', this.snapshot(e), row, e.crc));
        return;
      }
      order[i] = e;
    }
    e.pos = i;
    e.seen = ts;
    e.seenGen = gen;
    const prev = e.row;
    if (row === prev) return;
    const layout = (e.layout ??= layouts.of(prev));
    if (delta !== undefined && delta.changedCount(i) > 0 && delta.base(i) === prev) {
      out.events.push(this.changedValues(e, feed, row, layout, delta, i, ts, (out.frames ??= new ValueFrames(channel, market, ts, delta, keyField))));
      return;
    }
    const n = diffLaid(prev, row, layout);
    if (n === 0) {
      // Equal, key for key and in the same order: keep the newer object, so the next read of the same bytes finds it stored.
      e.row = row;
      return;
    }
    let ops: PatchOp[] | undefined;
    let frame: string | undefined;
    if (n > 0) {
      // Same keys in the same order: the changed fields are known, and so are their fragments.
      e.crc = shapedChecksum(row, layout);
      const body = laidOpsJson(row, layout, n);
      if (body !== undefined) frame = laidPatchFrame(e, e.seq + 1, (out.tsPart ??= patchTsPart(ts)), body, e.crc);
      else ops = diffRows(prev, row);
    } else {
      ops = diffRows(prev, row);
      if (ops.length === 0) return;
      e.layout = layouts.of(row);
      e.crc = shapedChecksum(row, e.layout);
    }
    e.row = row;
    e.seq++;
    e.ts = ts;
    frame ??= plainPatchFrame(e.topic, e.seq, ts, ops!, e.crc);
    this.ringOf(e, feed).pushRows(e, e.seq, ts, prev, row);
    out.events.push(new Change(e.topic, code, e.seq, 'patch', frame, row, e.crc, ops));
  }

  /**
   * The change of a row that is the stored row with the values the reader
   * listed changed (at least one; the keys are the stored row's): its
   * checksum and its patch frame are made from those values' bytes in the
   * body, byte for byte what `apply` makes of them otherwise.
   */
  private changedValues(e: Entry, feed: FeedState, row: Row, layout: RowLayout, d: ListDelta, i: number, ts: number, frames: ValueFrames): Change {
    const seq = e.seq + 1;
    const at = frames.write(e.code, seq, layout, i, row);
    e.crc = frames.crc;
    const change =
      at >= 0
        ? Change.written(e.topic, e.code, seq, row, e.crc, frames.chunk, at, frames.end)
        : new Change(e.topic, e.code, seq, 'patch', this.frameOfRow(e, seq, row, layout, d, i, frames.tsPart), row, e.crc);
    this.ringOf(e, feed).pushRows(e, seq, ts, e.row, row);
    e.row = row;
    e.seq = seq;
    e.ts = ts;
    return change;
  }

  /** The patch frame serialised from the row's changed values (as `apply` does for rows without a delta). */
  private frameOfRow(e: TopicEntry, seq: number, row: Row, layout: RowLayout, d: ListDelta, i: number, tsPart: string): string {
    const n = d.changedCount(i);
    for (let k = 0; k < n; k++) layout.changed[k] = d.changedField(i, k);
    return laidPatchFrame(e, seq, tsPart, laidOpsJson(row, layout, n)!, e.crc);
  }

  /** The entry of a topic, by feed and code. */
  entry(channel: Channel, market: Market, code: string): TopicEntry | undefined {
    return this.feeds.get(feedOf(channel, market))?.entries.get(code);
  }

  /** Every entry of a feed (for whole-market snapshots). */
  entries(channel: Channel, market: Market): IterableIterator<TopicEntry> {
    return this.feed(channel, market).entries.values();
  }

  /** Number of topics held. */
  get size(): number {
    let n = 0;
    for (const f of this.feeds.values()) n += f.entries.size;
    return n;
  }

  /**
   * The snapshot frame of an entry: the row's JSON is serialised once per
   * seq and kept; the head with the current ts is joined to it per call.
   * `ts` is when the upstream last confirmed the row.
   */
  snapshot(e: TopicEntry): string {
    let s = e.snap;
    if (s === undefined || s.seq !== e.seq) e.snap = s = { seq: e.seq, tail: snapshotTail(e.row, e.crc) };
    return snapshotFrameOf(snapshotHead(e.topic), e.seq, e.seenTs, s.tail);
  }

  /** Whether `replay(e, after)` would give the frames, without making them. */
  canReplay(e: TopicEntry, after: number): boolean {
    return after === e.seq || (e.ring !== undefined && e.rings!.covers(e, after, e.seq));
  }

  /**
   * The patch frames a client at seq `after` missed, when all are still in
   * the ring (made again from the rows where the ring keeps those);
   * undefined when it must get a snapshot instead.
   */
  replay(e: TopicEntry, after: number): string[] | undefined {
    if (after === e.seq) return [];
    if (e.ring === undefined) return undefined;
    return e.rings!.since(e, after, e.seq, (seq, ts, prev, row) => this.remadeFrame(e, seq, ts, prev, row));
  }

  /**
   * The patch frame of a change the replay ring holds as rows, byte for
   * byte the one `apply` sent: whichever of its paths made it, it holds
   * the operations `diffRows` gives (the new row's keys in order, then the
   * removed ones) written as `encode` writes them, and the row's
   * `rowChecksum` (test/state/store.test.ts). Made the way `apply` makes
   * most: from the fields of a layout when the keys are the same.
   */
  private remadeFrame(e: TopicEntry, seq: number, ts: number, prev: Row, row: Row): string {
    // Usually the topic's rows have kept their keys: its own layout, else the one of those keys.
    const layout = e.layout !== undefined && hasShape(prev, e.layout) ? e.layout : this.remakeLayouts.of(prev);
    const n = diffLaid(prev, row, layout);
    if (n > 0) {
      const body = laidOpsJson(row, layout, n);
      if (body !== undefined) return laidPatchFrame(e, seq, patchTsPart(ts), body, shapedChecksum(row, layout));
    }
    return plainPatchFrame(e.topic, seq, ts, diffRows(prev, row), rowChecksum(row));
  }

  /** The rings of `e`'s feed, a ring of its own added there on its first change. */
  private ringOf(e: Entry, feed: FeedState): ReplayRings {
    if (e.ring === undefined) {
      e.rings = feed.rings;
      feed.rings.add(e);
    }
    return feed.rings;
  }

  private feed(channel: Channel, market: Market): FeedState {
    const key = feedOf(channel, market);
    let f = this.feeds.get(key);
    if (!f) {
      f = {
        entries: new Map(),
        rings: new ReplayRings(this.ringSize),
        layouts: new Layouts(),
        order: [],
        gen: 0,
        ts: 0,
        applies: 0,
        coherent: false,
        lastReader: undefined,
        lastRead: 0,
        lastKey: '',
      };
      this.feeds.set(key, f);
    }
    return f;
  }
}
