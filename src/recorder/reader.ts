import { createReadStream, existsSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { createInterface } from 'node:readline';
import { createGunzip } from 'node:zlib';
import { dayDir, readLine, segmentStart, type RecordLine } from './format.js';

/**
 * Reading recordings without loading a day into memory: the days and their
 * segments, and the lines of a day from a segment on, one at a time. A line
 * that cannot be read (a torn or damaged file) ends that segment's lines and
 * is reported through `onDamage`; the next segment is read as usual.
 */

/** A segment of a day. */
export interface Segment {
  /** File name. */
  readonly file: string;
  /** Start, `HHMMSS` KST. */
  readonly start: string;
  readonly bytes: number;
  readonly compressed: boolean;
}

/** The segments of a day, oldest first (empty when the day is not recorded). */
export async function segments(root: string, date: string): Promise<Segment[]> {
  const dir = dayDir(root, date);
  if (!/^\d{8}$/.test(date) || !existsSync(dir)) return [];
  const out: Segment[] = [];
  for (const file of await readdir(dir)) {
    const start = segmentStart(file);
    if (start === undefined) continue;
    out.push({ file, start, bytes: (await stat(join(dir, file))).size, compressed: file.endsWith('.gz') });
  }
  // A segment compressed and not yet unlinked appears twice: keep the compressed one.
  const byStart = new Map<string, Segment>();
  for (const s of out.sort((a, b) => a.start.localeCompare(b.start))) {
    const had = byStart.get(s.start);
    if (had === undefined || s.compressed) byStart.set(s.start, s);
  }
  return [...byStart.values()];
}

/** The recorded days, oldest first. */
export async function days(root: string): Promise<string[]> {
  return (await readdir(root).catch(() => [] as string[])).filter((d) => /^\d{8}$/.test(d)).sort();
}

/** Where a segment is damaged. */
export interface Damage {
  readonly file: string;
  readonly line: number;
  readonly reason: string;
}

/** The lines of a day's segments, from the segment `from` falls in (`HHMMSS`; default the first). */
export async function* readDay(root: string, date: string, from?: string, onDamage?: (d: Damage) => void): AsyncGenerator<RecordLine> {
  const all = await segments(root, date);
  let first = 0;
  if (from !== undefined) for (let i = 0; i < all.length; i++) if (all[i]!.start <= from) first = i;
  for (const seg of all.slice(first)) {
    const path = join(dayDir(root, date), seg.file);
    // Compressed since it was listed (the raw file is removed once its `.gz` is complete): read that.
    const now = seg.compressed || existsSync(path) ? path : `${path}.gz`;
    for await (const { line } of segmentLines(now, onDamage)) yield line;
  }
}

/** A line of a segment and its bytes (with the newline). */
export interface SegmentLine {
  readonly line: RecordLine;
  readonly bytes: number;
}

/** The lines of one segment file (`.gz` decompressed), up to the first that cannot be read, which is reported through `onDamage`. */
export async function* segmentLines(path: string, onDamage?: (d: Damage) => void): AsyncGenerator<SegmentLine> {
  const file = basename(path);
  const input = createReadStream(path);
  const stream = path.endsWith('.gz') ? input.pipe(createGunzip()) : input;
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  let n = 0;
  try {
    for await (const text of lines) {
      n++;
      if (text === '') continue;
      const r = readLine(text);
      if (!r.ok) {
        onDamage?.({ file, line: n, reason: r.reason === 'not JSON' ? 'not JSON (torn or damaged)' : r.reason });
        return;
      }
      yield { line: r.line, bytes: Buffer.byteLength(text) + 1 };
    }
  } catch (err) {
    onDamage?.({ file, line: n, reason: `unreadable: ${(err as Error).message}` });
  } finally {
    lines.close();
    input.destroy();
  }
}
