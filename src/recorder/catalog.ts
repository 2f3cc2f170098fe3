import { readFile, rename, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { dayDir } from './format.js';
import { segmentLines, segments, type Segment } from './reader.js';
import { SegmentSummary, SummaryBuilder, mergeSummaries, summaryName } from './summary.js';

/**
 * What is recorded: each day's segments with their summaries, and the day
 * as a whole (first and last data, per feed). A segment's summary is the
 * file the recorder wrote when it closed it; else the open segment's live
 * summary from the recorder; else the segment is read (once per size: the
 * result is kept in memory). See docs/REPLAY.md.
 */

/** The segment the recorder is writing, with its summary so far. */
export interface LiveSegment {
  readonly date: string;
  /** Its file name. */
  readonly file: string;
  readonly summary: SegmentSummary | undefined;
}

/** Where the catalog finds the open segment's summary. */
export type LiveSource = () => LiveSegment | undefined;

/** A recorded day: its segments, on-disk bytes and what they hold. */
export interface RecordedDay {
  readonly date: string;
  readonly segments: readonly Segment[];
  /** Bytes on disk (compressed where compressed). */
  readonly diskBytes: number;
  /** Whether every segment is compressed. */
  readonly compressed: boolean;
  /** What the segments hold; undefined when none holds a readable line. */
  readonly summary: SegmentSummary | undefined;
}

const MEMO_MAX = 512;
/** Summaries read from segment files, by path, valid while the file keeps its size. */
const memo = new Map<string, { size: number; summary: SegmentSummary | undefined }>();

/** A recorded day (undefined when nothing of it is recorded). */
export async function recordedDay(root: string, date: string, live?: LiveSource): Promise<RecordedDay | undefined> {
  const segs = await segments(root, date);
  if (segs.length === 0) return undefined;
  const open = live?.();
  const parts: SegmentSummary[] = [];
  for (const seg of segs) {
    const s = open !== undefined && open.date === date && open.file === seg.file ? open.summary : await segmentSummary(root, date, seg);
    if (s !== undefined) parts.push(s);
  }
  return {
    date,
    segments: segs,
    diskBytes: segs.reduce((a, s) => a + s.bytes, 0),
    compressed: segs.every((s) => s.compressed),
    summary: mergeSummaries(parts),
  };
}

/** A closed segment's summary: its summary file, else read from the segment itself. */
export async function segmentSummary(root: string, date: string, seg: Segment): Promise<SegmentSummary | undefined> {
  const dir = dayDir(root, date);
  const stored = await readFile(join(dir, summaryName(seg.start)), 'utf8').then(
    (t) => SegmentSummary.safeParse(JSON.parse(t)),
    () => undefined,
  );
  if (stored?.success) return stored.data;
  const path = join(dir, seg.file);
  const had = memo.get(path);
  if (had !== undefined && had.size === seg.bytes) return had.summary;
  const summary = await scanSegment(path);
  if (memo.size >= MEMO_MAX) memo.delete(memo.keys().next().value!);
  memo.set(path, { size: seg.bytes, summary });
  return summary;
}

/** Reads a segment file and summarises it (up to any damage). */
export async function scanSegment(path: string): Promise<SegmentSummary | undefined> {
  const b = new SummaryBuilder();
  for await (const { line, bytes } of segmentLines(path)) b.line(line, bytes);
  return b.result();
}

/** Writes a segment's summary beside it (through a temporary file, so a reader never sees half of one). */
export async function writeSummary(root: string, date: string, start: string, summary: SegmentSummary): Promise<void> {
  const path = join(dayDir(root, date), summaryName(start));
  await writeFile(`${path}.tmp`, JSON.stringify(summary));
  await rename(`${path}.tmp`, path);
}

/** Whether a segment's summary file exists. */
export async function hasSummary(root: string, date: string, start: string): Promise<boolean> {
  return stat(join(dayDir(root, date), summaryName(start))).then(
    () => true,
    () => false,
  );
}
