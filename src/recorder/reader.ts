import { existsSync } from 'node:fs';
import { open, readdir, stat, type FileHandle } from 'node:fs/promises';
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

/**
 * Whether an error is a file that is not there: a segment's raw file is
 * removed once its `.gz` is complete (written aside and renamed first), so
 * a raw file listed or checked a moment ago may be gone, its `.gz` there.
 */
function gone(err: unknown): boolean {
  return (err as NodeJS.ErrnoException).code === 'ENOENT';
}

/** The segment of `file` in `dir`, or its `.gz` when the raw file was compressed since it was listed; undefined when neither is there. */
export async function segmentOf(dir: string, file: string, start: string): Promise<Segment | undefined> {
  const names = file.endsWith('.gz') ? [file] : [file, `${file}.gz`];
  for (const name of names) {
    try {
      return { file: name, start, bytes: (await stat(join(dir, name))).size, compressed: name.endsWith('.gz') };
    } catch (err) {
      if (!gone(err)) throw err;
    }
  }
  return undefined;
}

/** The segments of a day, oldest first (empty when the day is not recorded). */
export async function segments(root: string, date: string): Promise<Segment[]> {
  const dir = dayDir(root, date);
  if (!/^\d{8}$/.test(date) || !existsSync(dir)) return [];
  const out: Segment[] = [];
  for (const file of await readdir(dir)) {
    const start = segmentStart(file);
    if (start === undefined) continue;
    const seg = await segmentOf(dir, file, start);
    if (seg !== undefined) out.push(seg);
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
  for await (const { line } of readDayLines(root, date, from, onDamage)) yield line;
}

/** `readDay`, each line with its bytes and, for a change line taken apart at its frame, the frame's message (`SegmentLine`). */
export async function* readDayLines(root: string, date: string, from?: string, onDamage?: (d: Damage) => void): AsyncGenerator<SegmentLine> {
  const all = await segments(root, date);
  let first = 0;
  if (from !== undefined) for (let i = 0; i < all.length; i++) if (all[i]!.start <= from) first = i;
  for (const seg of all.slice(first)) yield* segmentLines(join(dayDir(root, date), seg.file), onDamage);
}

/** A line of a segment and its bytes (with the newline). */
export interface SegmentLine {
  readonly line: RecordLine;
  readonly bytes: number;
  /** A change line's frame as parsed when the line was read (see `ReadLine`), so it need not be parsed again. */
  readonly message?: Readonly<Record<string, unknown>>;
}

/** Opens a segment file, or its `.gz` when a raw file was compressed since it was listed: the handle and the path opened. */
async function openSegment(path: string): Promise<{ handle: FileHandle; path: string }> {
  try {
    return { handle: await open(path, 'r'), path };
  } catch (err) {
    if (!gone(err) || path.endsWith('.gz')) throw err;
    return { handle: await open(`${path}.gz`, 'r'), path: `${path}.gz` };
  }
}

/**
 * The lines of one segment file (`.gz` decompressed; the `.gz` of a raw
 * file compressed since it was listed), up to the first that cannot be
 * read, which is reported through `onDamage`. Once open, the file is read
 * to its end even if it is removed meanwhile.
 */
export async function* segmentLines(path: string, onDamage?: (d: Damage) => void): AsyncGenerator<SegmentLine> {
  let file = basename(path);
  let opened: { handle: FileHandle; path: string };
  try {
    opened = await openSegment(path);
  } catch (err) {
    onDamage?.({ file, line: 0, reason: `unreadable: ${(err as Error).message}` });
    return;
  }
  file = basename(opened.path);
  const input = opened.handle.createReadStream();
  const stream = opened.path.endsWith('.gz') ? input.pipe(createGunzip()) : input;
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
      const bytes = Buffer.byteLength(text) + 1;
      yield r.message !== undefined ? { line: r.line, bytes, message: r.message } : { line: r.line, bytes };
    }
  } catch (err) {
    onDamage?.({ file, line: n, reason: `unreadable: ${(err as Error).message}` });
  } finally {
    lines.close();
    input.destroy();
  }
}
