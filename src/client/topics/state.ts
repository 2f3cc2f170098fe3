import type { Channel, Market } from '../../protocol/constants.js';
import { viewOf, type RowView } from '../view.js';
import type { PatchMsg, PatchOp, SnapshotMsg } from '../../protocol/wire.js';
import type { Row } from '../../protocol/row.js';
import { rowChecksum } from '../../protocol/crc32.js';
import { parseTopic, type TopicParts } from '../../protocol/topics.js';
import { applyOps } from '../../protocol/patch.js';

/**
 * The client's copy of every topic's row: snapshots replace it, patches
 * advance it one seq at a time. Decides, for each patch, whether to apply it,
 * ignore it (a duplicate, or a topic waiting for its fresh snapshot) or ask
 * for a resync of that one topic. No I/O. See docs/PROTOCOL.md §3.
 */

/** A row as the client holds it: read-only (frozen unless disabled). */
export type LocalRow = Readonly<Record<string, unknown>>;

/** What changed, passed to listeners with the new row. */
export interface Change {
  readonly topic: string;
  readonly channel: Channel;
  readonly market: Market;
  readonly code: string;
  /** The topic's seq after the change. */
  readonly seq: number;
  /** When the bridge received the upstream data behind it (ms since the Unix epoch). */
  readonly ts: number;
  /** `snapshot`: the row was replaced; `patch`: `ops` were applied. */
  readonly kind: 'snapshot' | 'patch';
  /** The RFC 6902 operations of a patch. */
  readonly ops?: readonly PatchOp[];
  /** The row after the change in readable names (`price`, `change`, `volume`, `time`, …), made when first read. */
  readonly view: RowView;
}

/** Why a topic needs a fresh snapshot. */
export type ResyncReason =
  /** A patch skipped at least one seq. */
  | 'gap'
  /** A patch's operations do not apply to the held row. */
  | 'ops'
  /** The row after a patch does not match the patch's checksum. */
  | 'crc'
  /** A patch arrived for a topic the client holds no row of. */
  | 'unknown';

/** The outcome of a snapshot. */
export interface SnapshotOutcome {
  readonly row: LocalRow;
  readonly change: Change;
  /** False when the data does not match its checksum (the row is kept: it is the server's). */
  readonly crcOk: boolean;
}

/** The outcome of a patch. */
export type PatchOutcome =
  | { readonly kind: 'applied'; readonly row: LocalRow; readonly change: Change }
  | { readonly kind: 'ignored'; readonly reason: 'duplicate' | 'resyncing' }
  | { readonly kind: 'resync'; readonly reason: ResyncReason };

/** Options of `TopicTable`. */
export interface TopicTableOptions {
  /** Check each row against its message's CRC-32; default true. */
  readonly verifyCrc?: boolean;
  /** Freeze rows so a listener cannot alter the client's copy; default true. */
  readonly freeze?: boolean;
}

interface Entry {
  readonly parts: TopicParts;
  row: LocalRow | undefined;
  seq: number;
  ts: number;
  /** Waiting for a snapshot: patches are dropped until it arrives. */
  resyncing: boolean;
}

/** Local rows, seqs and resync flags of every topic, keyed by topic string. */
export class TopicTable {
  private readonly entries = new Map<string, Entry>();
  private readonly verifyCrc: boolean;
  private readonly freeze: boolean;

  /** An empty table. */
  constructor(opts: TopicTableOptions = {}) {
    this.verifyCrc = opts.verifyCrc ?? true;
    this.freeze = opts.freeze ?? true;
  }

  /** Replaces a topic's row; undefined when the topic string is not a valid topic. */
  snapshot(msg: Pick<SnapshotMsg, 'topic' | 'seq' | 'ts' | 'data' | 'crc'>): SnapshotOutcome | undefined {
    const e = this.entry(msg.topic);
    if (e === undefined) return undefined;
    const row = this.freeze ? Object.freeze(msg.data) : msg.data;
    e.row = row;
    e.seq = msg.seq;
    e.ts = msg.ts;
    e.resyncing = false;
    const crcOk = !this.verifyCrc || rowChecksum(row) === msg.crc;
    return { row, crcOk, change: change(e, msg.topic, 'snapshot') };
  }

  /**
   * Applies a patch when its seq is the next one and the result matches its
   * checksum. A gap, unusable operations or a checksum mismatch mark the
   * topic as resyncing (later patches are dropped until a snapshot) and
   * return `resync` once; the held row stays as it was.
   */
  patch(msg: Pick<PatchMsg, 'topic' | 'seq' | 'ts' | 'ops' | 'crc'>): PatchOutcome | undefined {
    const existing = this.entries.get(msg.topic);
    if (existing?.resyncing) return { kind: 'ignored', reason: 'resyncing' };
    const e = existing ?? this.entry(msg.topic);
    if (e === undefined) return undefined;
    if (e.row === undefined) return this.fail(e, 'unknown');
    if (msg.seq <= e.seq) return { kind: 'ignored', reason: 'duplicate' };
    if (msg.seq !== e.seq + 1) return this.fail(e, 'gap');
    const next = applyOps(e.row as Readonly<Row>, msg.ops);
    if (next === undefined) return this.fail(e, 'ops');
    if (this.verifyCrc && rowChecksum(next) !== msg.crc) return this.fail(e, 'crc');
    e.row = this.freeze ? Object.freeze(next) : next;
    e.seq = msg.seq;
    e.ts = msg.ts;
    return { kind: 'applied', row: e.row, change: change(e, msg.topic, 'patch', msg.ops) };
  }

  /**
   * Marks a topic as waiting for a snapshot (e.g. the server could not resume
   * it); returns false when it already was or the topic is not valid.
   */
  markResync(topic: string): boolean {
    const e = this.entry(topic);
    if (e === undefined || e.resyncing) return false;
    e.resyncing = true;
    return true;
  }

  /** Whether a topic waits for a snapshot. */
  isResyncing(topic: string): boolean {
    return this.entries.get(topic)?.resyncing ?? false;
  }

  /** The current row of a topic, if one is held. */
  row(topic: string): LocalRow | undefined {
    return this.entries.get(topic)?.row;
  }

  /** The seq of a topic's row, if one is held. */
  seq(topic: string): number | undefined {
    const e = this.entries.get(topic);
    return e?.row === undefined ? undefined : e.seq;
  }

  /** The `ts` of a topic's local row (when the bridge observed it), if one is held. */
  ts(topic: string): number | undefined {
    const e = this.entries.get(topic);
    return e?.row === undefined ? undefined : e.ts;
  }

  /** Topics with a row, in insertion order. */
  topics(): string[] {
    const out: string[] = [];
    for (const [t, e] of this.entries) if (e.row !== undefined) out.push(t);
    return out;
  }

  /** Topics waiting for a snapshot. */
  resyncing(): string[] {
    const out: string[] = [];
    for (const [t, e] of this.entries) if (e.resyncing) out.push(t);
    return out;
  }

  /**
   * The `since` map of a resume: topic to seq, for every topic that has a
   * row, is not resyncing and passes `filter`.
   */
  since(filter: (parts: TopicParts) => boolean): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [t, e] of this.entries) {
      if (e.row !== undefined && !e.resyncing && filter(e.parts)) out[t] = e.seq;
    }
    return out;
  }

  /** Drops a topic. */
  delete(topic: string): void {
    this.entries.delete(topic);
  }

  /** Drops every topic that matches `pred`; returns the topics dropped. */
  deleteWhere(pred: (parts: TopicParts) => boolean): string[] {
    const out: string[] = [];
    for (const [t, e] of this.entries) {
      if (pred(e.parts)) {
        this.entries.delete(t);
        out.push(t);
      }
    }
    return out;
  }

  /** The parts of a topic string (cached for known topics), or undefined when it is not valid. */
  parts(topic: string): TopicParts | undefined {
    return this.entries.get(topic)?.parts ?? parseTopic(topic);
  }

  /** Number of topics with a row. */
  get size(): number {
    let n = 0;
    for (const e of this.entries.values()) if (e.row !== undefined) n++;
    return n;
  }

  private fail(e: Entry, reason: ResyncReason): PatchOutcome {
    e.resyncing = true;
    return { kind: 'resync', reason };
  }

  private entry(topic: string): Entry | undefined {
    let e = this.entries.get(topic);
    if (e !== undefined) return e;
    const parts = parseTopic(topic);
    if (parts === undefined) return undefined;
    e = { parts, row: undefined, seq: 0, ts: 0, resyncing: false };
    this.entries.set(topic, e);
    return e;
  }
}

function change(e: Entry, topic: string, kind: 'snapshot' | 'patch', ops?: readonly PatchOp[]): Change {
  const row = e.row ?? {};
  const ts = e.ts;
  let view: RowView | undefined;
  return {
    topic,
    channel: e.parts.channel,
    market: e.parts.market,
    code: e.parts.code,
    seq: e.seq,
    ts,
    kind,
    ...(ops ? { ops } : {}),
    get view(): RowView {
      return (view ??= viewOf(row, ts));
    },
  };
}
