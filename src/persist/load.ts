import { existsSync, readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { rowChecksum } from '../protocol/crc32.js';
import { PatchMsg } from '../protocol/messages.js';
import { applyOps } from '../protocol/patch.js';
import type { Row } from '../upstream/normalise.js';
import { decodeLineAt } from './lines.js';
import { CleanRecord, FeedRecord, HeaderRecord, TopicRecord } from './records.js';

/**
 * Reading the state files at start: the snapshot, then the journal of
 * changes written since it (topics' rows, and patch frames, each applied
 * to the seq just before it), and the mark of a clean stop. A torn last line
 * (a crash in the middle of a write) is expected and skipped; any other
 * damage sets the file aside (renamed `*.damaged-<ms>`) after keeping the
 * good lines before it, and is reported. Nothing here throws for a bad file.
 */

/** File names under the state directory. */
export const FILES = { snapshot: 'snapshot.ndjson', journal: 'journal.ndjson', clean: 'clean.json' } as const;

/** Something wrong found in a state file. */
export interface StateProblem {
  readonly file: string;
  /** 1-based line number. */
  readonly line: number;
  readonly reason: string;
  /** Where the damaged file was moved, if it was. */
  readonly setAside?: string;
}

/** What the state files held. */
export interface LoadedState {
  /** The epoch of the seqs, when the last stop was clean (a client may resume across it). */
  readonly cleanEpoch: string | undefined;
  /** The last state of each topic, by `channel.market.code`. */
  readonly topics: ReadonlyMap<string, TopicRecord>;
  /** The last status of each feed, by `channel.market`, and when its data was last refreshed. */
  readonly feeds: ReadonlyMap<string, FeedRecord>;
  /** Damage found (and torn tails). */
  readonly problems: readonly StateProblem[];
}

function readFile(dir: string, name: string, now: number, problems: StateProblem[], apply: (v: unknown) => boolean): void {
  const path = join(dir, name);
  if (!existsSync(path)) return;
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (err) {
    problems.push({ file: name, line: 0, reason: `cannot be read: ${(err as Error).message}` });
    return;
  }
  // Line by line in the bytes: a line is decoded only once its checksum passes, and an ASCII one becomes a one-byte string.
  const end = bytes.length;
  let line = 0;
  for (let s = 0; s < end;) {
    let e = bytes.indexOf(0x0a, s);
    const torn = e < 0;
    if (torn) e = end;
    line++;
    const at = s;
    s = e + 1;
    if (e === at) continue;
    const d = decodeLineAt(bytes, at, e);
    const bad = !d.ok ? d.reason : apply(d.value) ? undefined : 'not a state record';
    if (bad === undefined) continue;
    if (torn) {
      problems.push({ file: name, line, reason: `torn last line (${bad}), skipped` });
      return;
    }
    const setAside = `${name}.damaged-${now}`;
    try {
      renameSync(path, join(dir, setAside));
      problems.push({ file: name, line, reason: bad, setAside });
    } catch (err) {
      problems.push({ file: name, line, reason: `${bad}; could not be set aside: ${(err as Error).message}` });
    }
    return;
  }
}

/**
 * Applies a journal's patch frame to the topic it names when it follows the
 * seq held and gives the row its checksum says. Any other frame changes
 * nothing: one at or below the seq held is already in, and one past it
 * follows a write that failed, whose topic a later row line covers.
 */
function applyPatch(topics: Map<string, TopicRecord>, p: PatchMsg): void {
  const held = topics.get(p.topic);
  // Held only under a topic a row line named: the frame's topic needs no other check.
  if (held === undefined || p.seq !== held.s + 1) return;
  const row = applyOps(held.r as Row, p.ops);
  if (row === undefined || rowChecksum(row) !== p.crc) return;
  // The record was made from the files here and is not shared yet: updated in place, not copied per frame.
  held.r = row;
  held.s = p.seq;
  held.t = p.ts;
  held.x = p.crc;
}

/** Loads the state directory `dir` (missing files: nothing held). */
export function loadState(dir: string, now = Date.now()): LoadedState {
  const problems: StateProblem[] = [];
  const topics = new Map<string, TopicRecord>();
  const feeds = new Map<string, FeedRecord>();
  let snapshotEpoch: string | undefined;
  const apply = (v: unknown): boolean => {
    // Most journal lines are frames: tried first, by their type, so no other schema fails on them.
    if (typeof v === 'object' && v !== null && (v as { type?: unknown }).type === 'patch') {
      const p = PatchMsg.safeParse(v);
      if (!p.success) return false;
      applyPatch(topics, p.data);
      return true;
    }
    const t = TopicRecord.safeParse(v);
    if (t.success) {
      const key = `${t.data.k}.${t.data.m}.${t.data.c}`;
      const held = topics.get(key);
      // A journal line older than the snapshot (compaction was cut short) changes nothing.
      if (held === undefined || t.data.s >= held.s) topics.set(key, t.data);
      return true;
    }
    const f = FeedRecord.safeParse(v);
    if (f.success) {
      feeds.set(`${f.data.f.channel}.${f.data.f.market}`, f.data);
      return true;
    }
    const h = HeaderRecord.safeParse(v);
    if (h.success) {
      snapshotEpoch = h.data.epoch;
      return true;
    }
    return false;
  };
  readFile(dir, FILES.snapshot, now, problems, apply);
  readFile(dir, FILES.journal, now, problems, apply);
  let cleanEpoch: string | undefined;
  const cleanPath = join(dir, FILES.clean);
  if (existsSync(cleanPath)) {
    try {
      const c = CleanRecord.safeParse(JSON.parse(readFileSync(cleanPath, 'utf8')));
      if (c.success && c.data.epoch === snapshotEpoch && problems.every((p) => p.setAside === undefined)) cleanEpoch = c.data.epoch;
    } catch {
      problems.push({ file: FILES.clean, line: 1, reason: 'not a clean-stop mark' });
    }
  }
  return { cleanEpoch, topics, feeds, problems };
}
