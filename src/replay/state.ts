import { feedOf, parseTopic } from '../protocol/topics.js';
import { applyOps } from '../protocol/patch.js';
import type { Row } from '../protocol/row.js';
import type { PatchOp } from '../protocol/messages.js';
import { snapshotFrameOf, snapshotHead, snapshotTail } from '../state/frames.js';
import { wildcardTopic, type Target } from '../gateway/requests.js';

/**
 * What a replay connection holds: every topic's row, seq, `ts` and checksum
 * at the replay clock, every feed's last recorded status, and the
 * connection's subscriptions. Snapshots are made from it, so a subscribe at
 * any moment of the replay starts that topic at the replay clock.
 */

interface TopicState {
  row: Row;
  seq: number;
  ts: number;
  crc: number;
  /** The recording process it came from (`ReplayState.restart` counts them). */
  gen: number;
}

/** A replay's state at its clock, and its subscriptions. */
export class ReplayState {
  /** The replay clock: the recorded moment played last (ms epoch). */
  clock = 0;
  /** Each feed's last recorded `status` frame. */
  readonly statuses = new Map<string, string>();
  /** Explicitly subscribed topics. */
  readonly topics = new Set<string>();
  /** Feeds subscribed with `*`. */
  readonly wildcards = new Set<string>();
  private readonly rows = new Map<string, TopicState>();
  private pending: Map<string, TopicState> | undefined;
  private gen = 0;

  /**
   * Another process starts recording (a keyframe that says `start`): the
   * rows held came from the one before, whose seqs the new one may not
   * continue (a restart without its state), so a snapshot it records
   * replaces them whatever its seq.
   */
  restart(): void {
    this.gen++;
  }

  /**
   * A keyframe's row of a topic. Before playing it is the state at once (a
   * replay starts from the keyframe of its segment). While playing it is
   * kept aside until its moment's changes are played (they triggered the
   * keyframe, so it holds them already), then settled (`settleKeyframe`);
   * unless its seq is below the state's (a process restarted with seqs
   * anew): then it is the state at once, and true is returned.
   */
  keyframe(r: { topic: string; row: Record<string, unknown>; seq: number; ts: number; crc: number }, playing: boolean): boolean {
    const s = { row: r.row as Row, seq: r.seq, ts: r.ts, crc: r.crc, gen: this.gen };
    const held = this.rows.get(r.topic);
    if (playing && held !== undefined && r.seq >= held.seq) {
      (this.pending ??= new Map()).set(r.topic, s);
      return false;
    }
    this.rows.set(r.topic, s);
    return playing;
  }

  /** Whether keyframe rows wait to be settled. */
  get keyframePending(): boolean {
    return this.pending !== undefined;
  }

  /**
   * Settles the keyframe rows kept aside: a topic whose changes did not
   * bring it to the keyframe's seq (a gap: damage skipped, or a process
   * restarted) takes the keyframe's row. Returns those topics.
   */
  settleKeyframe(): string[] {
    const pending = this.pending;
    this.pending = undefined;
    const taken: string[] = [];
    for (const [topic, s] of pending ?? []) {
      if (this.rows.get(topic)?.seq === s.seq) continue;
      this.rows.set(topic, s);
      taken.push(topic);
    }
    return taken;
  }

  /**
   * Applies a recorded `snapshot` or `patch` frame of `topic` at `seq`;
   * false when it is not applied: the state holds it already (seq at or
   * below, unless the held row is an earlier process's and this is a
   * snapshot), or a patch does not follow the state's seq (a gap the next
   * keyframe repairs). `message`: the frame already parsed, when the reader
   * has it (`SegmentLine.message`).
   */
  apply(topic: string, seq: number, frame: string, message?: Readonly<Record<string, unknown>>): boolean {
    const held = this.rows.get(topic);
    // A row of an earlier process: only a snapshot of this one replaces it at or below its seq.
    const earlier = held !== undefined && held.gen !== this.gen;
    if (held !== undefined && seq <= held.seq && !earlier) return false;
    // The message the reader parsed the frame into when it read the line, else the frame parsed now.
    const msg = (message ?? JSON.parse(frame)) as { type: string; ts: number; crc: number; data?: Row; ops?: PatchOp[] };
    if (msg.type === 'snapshot' && msg.data) {
      this.rows.set(topic, { row: msg.data, seq, ts: msg.ts, crc: msg.crc, gen: this.gen });
      return true;
    }
    if (msg.type !== 'patch' || !msg.ops || held === undefined || seq !== held.seq + 1) return false;
    const row = applyOps(held.row, msg.ops);
    if (row === undefined) return false;
    this.rows.set(topic, { row, seq, ts: msg.ts, crc: msg.crc, gen: this.gen });
    return true;
  }

  /** A topic's row, seq and `ts` at the replay clock (undefined when the recording holds nothing of it yet). */
  held(topic: string): { readonly row: Row; readonly seq: number; readonly ts: number } | undefined {
    return this.rows.get(topic);
  }

  /** Some row held (its fields are a feed's columns), or undefined when none is. */
  anyRow(): Row | undefined {
    return this.rows.values().next().value?.row;
  }

  /** Whether the connection receives `topic`. */
  receives(topic: string): boolean {
    if (this.topics.has(topic)) return true;
    const p = parseTopic(topic);
    return p !== undefined && this.wildcards.has(feedOf(p.channel, p.market));
  }

  /** Whether the connection receives any topic of `feed`. */
  wantsFeed(feed: string): boolean {
    if (this.wildcards.has(feed)) return true;
    for (const t of this.topics) if (t.startsWith(`${feed}.`)) return true;
    return false;
  }

  /** The feeds the connection receives anything of. */
  subscribedFeeds(): Set<string> {
    const feeds = new Set<string>(this.wildcards);
    for (const t of this.topics) {
      const p = parseTopic(t);
      if (p) feeds.add(feedOf(p.channel, p.market));
    }
    return feeds;
  }

  /** The snapshot frame of a topic at the replay clock (undefined when the recording holds nothing of it yet). */
  snapshotOf(topic: string): string | undefined {
    const s = this.rows.get(topic);
    return s ? snapshotFrameOf(snapshotHead(topic), s.seq, s.ts, snapshotTail(s.row, s.crc)) : undefined;
  }

  /** Snapshot frames of `topics` still received, or of every topic received when undefined. */
  snapshots(topics: Iterable<string> | undefined): string[] {
    const out: string[] = [];
    for (const topic of topics ?? this.rows.keys()) {
      if (!this.receives(topic)) continue;
      const f = this.snapshotOf(topic);
      if (f) out.push(f);
    }
    return out;
  }

  /** Subscribes a target; returns the snapshot frames of its topics at the replay clock. */
  add(t: Target): string[] {
    if (!t.wildcard) {
      for (const topic of t.topics) this.topics.add(topic);
      return this.snapshots(t.topics);
    }
    this.wildcards.add(t.feed);
    const prefix = `${t.feed}.`;
    return this.snapshots([...this.rows.keys()].filter((topic) => topic.startsWith(prefix)));
  }

  /** Unsubscribes a target; returns the topics removed (`feed.*` for a wildcard). */
  remove(t: Target): string[] {
    if (t.wildcard) return this.wildcards.delete(t.feed) ? [wildcardTopic(t.feed)] : [];
    return t.topics.filter((topic) => this.topics.delete(topic));
  }
}
