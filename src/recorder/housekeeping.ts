import { createReadStream, createWriteStream } from 'node:fs';
import { readdir, rename, rm, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import type { Logger } from '../log.js';
import { addDays } from '../market/calendar.js';
import { kstMs, segmentStart } from './format.js';
import { hasSummary, scanSegment, writeSummary } from './catalog.js';

/**
 * The recorder's housekeeping: days past `RECORD_DAYS` are deleted, and a
 * day's segments are compressed once its sessions are over (after
 * `SESSIONS_END` KST, or once the day is past), except the segment still
 * being written. A segment without a summary (its process was killed) gets
 * one first, read from the data. See docs/REPLAY.md.
 */

/** When a day's last session ends (the after-hours single-price session), `HHMMSS` KST. */
export const SESSIONS_END = '180000';

/** The moment a day's segments may be compressed: the end of its sessions. */
export function compressAt(date: string): number {
  return kstMs(date, SESSIONS_END);
}

/** What one housekeeping pass needs. */
export interface HousekeepingJob {
  /** The recordings directory. */
  readonly dir: string;
  /** Today, `YYYYMMDD` KST. */
  readonly today: string;
  /** Now, ms epoch. */
  readonly now: number;
  /** Days kept, today included. */
  readonly keepDays: number;
  /** The segment being written (`date` and file name), never compressed. */
  readonly open?: { readonly date: string; readonly file: string };
  readonly logger: Logger;
}

/** Deletes days past `keepDays` and compresses the segments whose day's sessions are over. */
export async function housekeep(job: HousekeepingJob): Promise<void> {
  const oldest = addDays(job.today, -(job.keepDays - 1));
  for (const d of (await readdir(job.dir).catch(() => [] as string[])).sort()) {
    if (!/^\d{8}$/.test(d)) continue;
    if (d < oldest) {
      await rm(join(job.dir, d), { recursive: true, force: true });
      job.logger.info({ day: d }, 'recording deleted (RECORD_DAYS)');
      continue;
    }
    if (d > job.today || job.now < compressAt(d)) continue;
    for (const f of (await readdir(join(job.dir, d)).catch(() => [] as string[])).sort()) {
      if (job.open?.date === d && job.open.file === f) continue;
      await compressSegment(job, d, f);
    }
  }
}

/** Compresses one segment file (summarising it first when it has no summary); anything else is left alone. */
async function compressSegment(job: HousekeepingJob, date: string, file: string): Promise<void> {
  const start = segmentStart(file);
  if (start === undefined || file.endsWith('.gz')) return;
  const path = join(job.dir, date, file);
  try {
    if (!(await hasSummary(job.dir, date, start))) {
      const summary = await scanSegment(path);
      if (summary !== undefined) await writeSummary(job.dir, date, start, summary);
    }
    // Written aside and renamed: a reader never takes a half-written `.gz` for the segment.
    await pipeline(createReadStream(path), createGzip(), createWriteStream(`${path}.gz.tmp`));
    await rename(`${path}.gz.tmp`, `${path}.gz`);
    await unlink(path);
  } catch (err) {
    job.logger.warn({ file, err: (err as Error).message }, 'recording segment not compressed');
  }
}

/** When housekeeping should next run after `now` on `today`: the end of today's sessions, else the next KST midnight. */
export function nextHousekeeping(today: string, now: number): number {
  const at = compressAt(today);
  return now < at ? at : kstMs(addDays(today, 1), '000000');
}
