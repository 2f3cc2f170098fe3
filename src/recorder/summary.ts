import { z } from 'zod';
import type { RecordLine } from './format.js';

/**
 * What a segment holds, per feed: the first and last time it has data, its
 * changes and the bytes of its lines. The recorder keeps one as it writes
 * and stores it beside the segment when the segment closes
 * (`seg-HHMMSS.summary.json`); a segment without one (its process was
 * killed) is summarised by reading it. `/recordings` and the replay's
 * `not_recorded` check read these, never a file's modification time, which
 * says nothing of the data once a day is compressed. See docs/REPLAY.md.
 */

/** One feed's part of a segment: `from`/`to` ms epoch of its first and last change or status, its changes and bytes (uncompressed, keyframe lines included). */
export const FeedSummary = z
  .object({ from: z.number(), to: z.number(), changes: z.number().int().nonnegative(), bytes: z.number().int().nonnegative() })
  .strict();
/** One feed's part of a segment (type). */
export type FeedSummary = z.infer<typeof FeedSummary>;

/**
 * Where nothing was recorded: from the stop line, or the last line before a
 * process started recording again without one (a crash), to that process's
 * first keyframe (ms epoch). Without `from` the gap began in an earlier
 * segment, where that segment's last line is.
 */
export const Gap = z.object({ from: z.number().optional(), to: z.number() }).strict();
/** A stretch not recorded (type). */
export type Gap = z.infer<typeof Gap>;

/** A segment's summary: its first and last line's time, its bytes (uncompressed), its feeds, and where in it nothing was recorded. */
export const SegmentSummary = z
  .object({
    from: z.number(),
    to: z.number(),
    bytes: z.number().int().nonnegative(),
    feeds: z.record(z.string(), FeedSummary),
    gaps: z.array(Gap).optional(),
  })
  .strict();
/** A segment's summary (type). */
export type SegmentSummary = z.infer<typeof SegmentSummary>;

/** The file name of the summary of the segment starting at `hhmmss`. */
export function summaryName(hhmmss: string): string {
  return `seg-${hhmmss}.summary.json`;
}

/** A summary being built, line by line or batch by batch. */
export class SummaryBuilder {
  private from = Infinity;
  private to = -Infinity;
  private bytes = 0;
  private readonly feeds = new Map<string, { from: number; to: number; changes: number; bytes: number }>();
  /** The time of the keyframe being read (its rows and statuses carry none of their own). */
  private keyframeAt = 0;
  private readonly gaps: Gap[] = [];
  /** Keyframe bytes of feeds with no change or status in the segment yet. */
  private readonly keyframed = new Map<string, number>();
  /** When the recording stopped (a stop line), until a process starts it again. */
  private stoppedAt: number | undefined;

  /**
   * Counts `bytes` of keyframe lines of `feed` at `t`: its size, not its time
   * range. Every keyframe holds every topic held, polled or not, so a feed
   * polled no more would seem recorded until the end of the day; its range
   * is that of its changes and statuses.
   */
  held(t: number, bytes: number, feed?: string): void {
    this.span(t, bytes);
    if (feed === undefined) return;
    const f = this.feeds.get(feed);
    if (f !== undefined) f.bytes += bytes;
    else this.keyframed.set(feed, (this.keyframed.get(feed) ?? 0) + bytes);
  }

  /** A process starts recording at `t` (a keyframe that says `start`): a gap ends here, unless this is the first line of the day's recording. */
  starts(t: number): void {
    const from = this.stoppedAt ?? (this.from === Infinity ? undefined : this.to);
    this.stoppedAt = undefined;
    this.gaps.push(from === undefined ? { to: t } : { from, to: t });
  }

  /** The recording stops at `t` (a stop line). */
  stops(t: number): void {
    this.stoppedAt = t;
  }

  /** The segment's bytes and time range, with a line of `bytes` at `t`. */
  private span(t: number, bytes: number): void {
    this.bytes += bytes;
    if (t < this.from) this.from = t;
    if (t > this.to) this.to = t;
  }

  /** Counts `bytes` of the segment at `t` (ms epoch), of `feed` when given, holding `changes` changes. */
  add(t: number, bytes: number, feed?: string, changes = 0): void {
    this.span(t, bytes);
    if (feed === undefined) return;
    const f = this.feeds.get(feed);
    const kept = this.keyframed.get(feed) ?? 0;
    this.keyframed.delete(feed);
    if (f === undefined) this.feeds.set(feed, { from: t, to: t, changes, bytes: bytes + kept });
    else {
      if (t < f.from) f.from = t;
      if (t > f.to) f.to = t;
      f.changes += changes;
      f.bytes += bytes;
    }
  }

  /** Counts one line as read from a segment (`bytes` with its newline). */
  line(l: RecordLine, bytes: number): void {
    switch (l.k) {
      case 'K':
        this.keyframeAt = l.t;
        if (l.start === true) this.starts(l.t);
        return this.add(l.t, bytes);
      case 'r':
        return this.held(this.keyframeAt, bytes, feedOfTopic(l.topic));
      case 'S':
        return this.held(this.keyframeAt, bytes, l.feed);
      case 'E':
        return this.add(this.keyframeAt, bytes);
      case 'c':
        return this.add(l.t, bytes, feedOfTopic(l.topic), 1);
      case 's':
        return this.add(l.t, bytes, l.feed);
      case 'X':
        this.stops(l.t);
        return this.add(l.t, bytes);
    }
  }

  /** The summary so far; undefined while nothing was counted. */
  result(): SegmentSummary | undefined {
    if (this.from === Infinity) return undefined;
    const feeds: Record<string, FeedSummary> = {};
    for (const [k, v] of [...this.feeds].sort(([a], [b]) => a.localeCompare(b))) feeds[k] = { ...v };
    return { from: this.from, to: this.to, bytes: this.bytes, feeds, ...(this.gaps.length > 0 ? { gaps: this.gaps.map((g) => ({ ...g })) } : {}) };
  }
}

/** `channel.market` of a topic `channel.market.code`. */
function feedOfTopic(topic: string): string {
  const dot = topic.indexOf('.', topic.indexOf('.') + 1);
  return dot < 0 ? topic : topic.slice(0, dot);
}

/**
 * The summaries of several segments, in order, as one: a day's (undefined
 * for none). A gap that began in an earlier segment begins at that
 * segment's last line; one before the first segment is no gap (the day's
 * recording starts there).
 */
export function mergeSummaries(list: readonly SegmentSummary[]): SegmentSummary | undefined {
  if (list.length === 0) return undefined;
  const out: SegmentSummary = { from: Infinity, to: -Infinity, bytes: 0, feeds: {} };
  const gaps: Gap[] = [];
  for (const s of list) {
    for (const g of s.gaps ?? []) {
      const from = g.from ?? (out.to === -Infinity ? undefined : out.to);
      if (from !== undefined && from < g.to) gaps.push({ from, to: g.to });
    }
    out.from = Math.min(out.from, s.from);
    out.to = Math.max(out.to, s.to);
    out.bytes += s.bytes;
    for (const [feed, f] of Object.entries(s.feeds)) {
      const had = out.feeds[feed];
      out.feeds[feed] = had
        ? { from: Math.min(had.from, f.from), to: Math.max(had.to, f.to), changes: had.changes + f.changes, bytes: had.bytes + f.bytes }
        : { ...f };
    }
  }
  if (gaps.length > 0) out.gaps = gaps;
  return out;
}
