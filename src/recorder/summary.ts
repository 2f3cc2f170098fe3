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

/** One feed's part of a segment: `from`/`to` ms epoch of its first and last line, its changes and bytes (uncompressed). */
export const FeedSummary = z
  .object({ from: z.number(), to: z.number(), changes: z.number().int().nonnegative(), bytes: z.number().int().nonnegative() })
  .strict();
/** One feed's part of a segment (type). */
export type FeedSummary = z.infer<typeof FeedSummary>;

/** A segment's summary: its first and last line's time, its bytes (uncompressed) and its feeds. */
export const SegmentSummary = z
  .object({ from: z.number(), to: z.number(), bytes: z.number().int().nonnegative(), feeds: z.record(z.string(), FeedSummary) })
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

  /** Counts `bytes` of the segment at `t` (ms epoch), of `feed` when given, holding `changes` changes. */
  add(t: number, bytes: number, feed?: string, changes = 0): void {
    this.bytes += bytes;
    if (t < this.from) this.from = t;
    if (t > this.to) this.to = t;
    if (feed === undefined) return;
    const f = this.feeds.get(feed);
    if (f === undefined) this.feeds.set(feed, { from: t, to: t, changes, bytes });
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
        return this.add(l.t, bytes);
      case 'r':
        return this.add(this.keyframeAt, bytes, feedOfTopic(l.topic));
      case 'S':
        return this.add(this.keyframeAt, bytes, l.feed);
      case 'E':
        return this.add(this.keyframeAt, bytes);
      case 'c':
        return this.add(l.t, bytes, feedOfTopic(l.topic), 1);
      case 's':
        return this.add(l.t, bytes, l.feed);
    }
  }

  /** The summary so far; undefined while nothing was counted. */
  result(): SegmentSummary | undefined {
    if (this.from === Infinity) return undefined;
    const feeds: Record<string, FeedSummary> = {};
    for (const [k, v] of [...this.feeds].sort(([a], [b]) => a.localeCompare(b))) feeds[k] = { ...v };
    return { from: this.from, to: this.to, bytes: this.bytes, feeds };
  }
}

/** `channel.market` of a topic `channel.market.code`. */
function feedOfTopic(topic: string): string {
  const dot = topic.indexOf('.', topic.indexOf('.') + 1);
  return dot < 0 ? topic : topic.slice(0, dot);
}

/** The summaries of several segments as one: a day's (undefined for none). */
export function mergeSummaries(list: readonly SegmentSummary[]): SegmentSummary | undefined {
  if (list.length === 0) return undefined;
  const out: SegmentSummary = { from: Infinity, to: -Infinity, bytes: 0, feeds: {} };
  for (const s of list) {
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
  return out;
}
