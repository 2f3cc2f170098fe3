import { randomBytes } from 'node:crypto';
import type { Row } from '../upstream/normalise.js';
import { CHANNELS, MARKETS, type Channel, type Market } from '../protocol/constants.js';
import type { PatchOp } from '../protocol/messages.js';
import { feedOf, topicOf } from '../protocol/topics.js';
import { rowChecksum } from '../protocol/crc32.js';
import { applyOps, diffRows } from './diff.js';
import { ReplayRing } from './ring.js';

/**
 * Latest row, seq, checksum and replay ring of every topic, and the change
 * events produced by applying successive upstream snapshots.
 * See docs/PROTOCOL.md §Sequence numbers.
 */

/** One topic's state. */
export interface TopicEntry {
  readonly topic: string;
  readonly code: string;
  /** The latest row. */
  row: Row;
  /** Seq of the latest change (the first row seen is seq 1). */
  seq: number;
  /** When the response that produced the latest change arrived (ms epoch). */
  ts: number;
  /** When the latest response that carried this row arrived (ms epoch). */
  seenTs: number;
  /** CRC-32 of the canonical latest row. */
  crc: number;
  /** Patch frames of recent changes, for resume. Allocated on the first change. */
  ring?: ReplayRing;
  /** Cached snapshot frame and the (seq, seenTs) it was built for. */
  snap?: { frame: string; seq: number; ts: number };
}

/** One change of one topic: its serialised frame, built once for every recipient. */
export interface ChangeEvent {
  readonly topic: string;
  readonly code: string;
  readonly seq: number;
  readonly kind: 'snapshot' | 'patch';
  /** The serialised `snapshot` or `patch` message. */
  readonly frame: string;
  /** The row after the change. */
  readonly row: Row;
  /** The operations, for patches. */
  readonly ops?: readonly PatchOp[];
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

/** A new random epoch id. */
export function newEpoch(): string {
  return `${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
}

/** Serialises a snapshot message for a topic entry. */
export function snapshotFrame(e: TopicEntry, ts: number): string {
  return JSON.stringify({ type: 'snapshot', topic: e.topic, seq: e.seq, ts, data: e.row, crc: e.crc });
}

/** State of every topic, grouped by feed. */
export class StateStore {
  private epoch_: string;
  private readonly ringSize: number;
  private readonly feeds = new Map<string, Map<string, TopicEntry>>();

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
    const e = feed.get(c.code);
    if (e !== undefined && c.seq <= e.seq) return { kind: 'duplicate' };
    if (c.kind === 'snapshot') {
      if (c.row === undefined) return { kind: 'gap' };
      const n = this.load(channel, market, c.code, { row: c.row, seq: c.seq, ts: c.ts, crc: c.crc });
      return { kind: 'applied', event: { topic: n.topic, code: c.code, seq: c.seq, kind: 'snapshot', frame: c.frame, row: n.row } };
    }
    if (e === undefined || c.seq !== e.seq + 1 || c.ops === undefined) return { kind: 'gap' };
    const row = applyOps(e.row, c.ops);
    if (row === undefined || rowChecksum(row) !== c.crc) return { kind: 'gap' };
    e.row = row;
    e.seq = c.seq;
    e.ts = c.ts;
    e.seenTs = c.ts;
    e.crc = c.crc;
    (e.ring ??= new ReplayRing(this.ringSize)).push(c.seq, c.frame);
    return { kind: 'applied', event: { topic: e.topic, code: c.code, seq: c.seq, kind: 'patch', frame: c.frame, row, ops: c.ops } };
  }

  /**
   * Replaces a topic's state with a persisted one (cluster start, gap,
   * leadership). `frames` (seq and patch frame, ascending) refill the ring:
   * the longest run that ends at the entry's seq is kept.
   */
  load(channel: Channel, market: Market, code: string, p: PersistedEntry, frames: readonly (readonly [number, string])[] = []): TopicEntry {
    const e: TopicEntry = { topic: topicOf(channel, market, code), code, row: p.row, seq: p.seq, ts: p.ts, seenTs: p.ts, crc: p.crc };
    let end = frames.length;
    while (end > 0 && frames[end - 1]![0] > p.seq) end--;
    let start = end;
    while (start > 0 && frames[start - 1]![0] === p.seq - (end - start)) start--;
    if (start < end) {
      e.ring = new ReplayRing(this.ringSize);
      for (let i = Math.max(start, end - this.ringSize); i < end; i++) e.ring.push(frames[i]![0], frames[i]![1]);
    }
    this.feed(channel, market).set(code, e);
    return e;
  }

  /** Every (channel, market) that holds at least one topic. */
  *heldFeeds(): IterableIterator<readonly [Channel, Market]> {
    for (const channel of CHANNELS) {
      for (const market of MARKETS) if ((this.feeds.get(feedOf(channel, market))?.size ?? 0) > 0) yield [channel, market];
    }
  }

  /**
   * Applies one upstream response's rows to a feed: each row is keyed by
   * `keyField`, diffed against the stored row, and every change becomes a
   * `patch` (or a `snapshot` for a topic seen for the first time) with
   * `seq` one above the previous. Rows equal to the stored row produce
   * nothing. Returns the batch of changes (possibly empty).
   */
  apply(channel: Channel, market: Market, rows: readonly Row[], ts: number, keyField = 'isuSrtCd'): ChangeBatch {
    const feed = this.feed(channel, market);
    const events: ChangeEvent[] = [];
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i]!;
      const code = row[keyField];
      if (typeof code !== 'string' || code.length === 0) continue;
      let e = feed.get(code);
      if (e === undefined) {
        e = { topic: topicOf(channel, market, code), code, row, seq: 1, ts, seenTs: ts, crc: rowChecksum(row) };
        feed.set(code, e);
        events.push({ topic: e.topic, code, seq: 1, kind: 'snapshot', frame: this.snapshot(e)!, row });
        continue;
      }
      e.seenTs = ts;
      const ops = diffRows(e.row, row);
      if (ops.length === 0) continue;
      e.row = row;
      e.seq++;
      e.ts = ts;
      e.crc = rowChecksum(row);
      const frame = JSON.stringify({ type: 'patch', topic: e.topic, seq: e.seq, ts, ops, crc: e.crc });
      (e.ring ??= new ReplayRing(this.ringSize)).push(e.seq, frame);
      events.push({ topic: e.topic, code, seq: e.seq, kind: 'patch', frame, row, ops });
    }
    return { channel, market, ts, events };
  }

  /** The entry of a topic, by feed and code. */
  entry(channel: Channel, market: Market, code: string): TopicEntry | undefined {
    return this.feeds.get(feedOf(channel, market))?.get(code);
  }

  /** Every entry of a feed (for whole-market snapshots). */
  entries(channel: Channel, market: Market): IterableIterator<TopicEntry> {
    return this.feed(channel, market).values();
  }

  /** Number of topics held. */
  get size(): number {
    let n = 0;
    for (const f of this.feeds.values()) n += f.size;
    return n;
  }

  /**
   * The snapshot frame of an entry, built once per (seq, seenTs) and cached.
   * `ts` is when the upstream last confirmed the row.
   */
  snapshot(e: TopicEntry): string {
    const s = e.snap;
    if (s !== undefined && s.seq === e.seq && s.ts === e.seenTs) return s.frame;
    const frame = snapshotFrame(e, e.seenTs);
    e.snap = { frame, seq: e.seq, ts: e.seenTs };
    return frame;
  }

  /**
   * The patch frames a client at seq `after` missed, when all are still in
   * the ring; undefined when it must get a snapshot instead.
   */
  replay(e: TopicEntry, after: number): string[] | undefined {
    if (after === e.seq) return [];
    return e.ring?.since(after, e.seq);
  }

  private feed(channel: Channel, market: Market): Map<string, TopicEntry> {
    const key = feedOf(channel, market);
    let f = this.feeds.get(key);
    if (!f) {
      f = new Map();
      this.feeds.set(key, f);
    }
    return f;
  }
}
