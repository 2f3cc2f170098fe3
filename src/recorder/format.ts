import { z } from 'zod';

/**
 * The recording's files and lines. A day is a folder `YYYYMMDD/` of
 * segments `seg-HHMMSS.ndjson` (KST start time; `.ndjson.gz` once the day's
 * sessions have ended), each opening with a keyframe: every topic's row,
 * seq, `ts` and checksum as they stood, so a replay can start in any
 * segment. After it come the changes (the exact frames live clients got) and
 * the feeds' statuses, in the order they happened. A process's first
 * keyframe says it starts the recording again, and a clean stop is a line
 * of its own, so a replay knows where nothing was recorded. One JSON object a line;
 * a torn last line (a crash mid-write) is just where the recording stops.
 * See docs/REPLAY.md.
 */

/**
 * A keyframe opens: `t` when it was taken (ms epoch). `start` marks the
 * first keyframe a process writes (or writes again after it was not the one
 * recording): nothing was recorded between the line before it and `t`.
 */
export const KeyframeStart = z.object({ k: z.literal('K'), t: z.number(), start: z.literal(true).optional() }).strict();
/** One topic's state in a keyframe. */
export const KeyframeRow = z
  .object({
    k: z.literal('r'),
    topic: z.string(),
    seq: z.number().int().positive(),
    ts: z.number(),
    row: z.record(z.string(), z.unknown()),
    crc: z.number().int(),
  })
  .strict();
/** One feed's status in a keyframe (the frame as sent). */
export const KeyframeStatus = z.object({ k: z.literal('S'), feed: z.string(), f: z.string() }).strict();
/** The keyframe is complete. */
export const KeyframeEnd = z.object({ k: z.literal('E') }).strict();
/**
 * A frame as a change line holds it: the frame itself (a JSON object), or
 * in recordings made before that, its text as a JSON string. Read as the
 * text either way: a frame is `JSON.stringify` of its message, so
 * serialising what was parsed gives back the bytes clients got.
 */
const RecordedFrame = z.union([z.string(), z.record(z.string(), z.unknown()).transform((m) => JSON.stringify(m))]);

/** A change: a `snapshot` or `patch` frame of `topic` at `seq`, observed at `t`. */
export const ChangeLine = z.object({ k: z.literal('c'), t: z.number(), topic: z.string(), seq: z.number().int().positive(), f: RecordedFrame }).strict();
/** A feed's status, observed at `t` (the frame as sent). */
export const StatusLine = z.object({ k: z.literal('s'), t: z.number(), feed: z.string(), f: z.string() }).strict();

/** The recording stops at `t` (a clean stop, or this process no longer the one recording): nothing is recorded until the next keyframe that starts one. */
export const StopLine = z.object({ k: z.literal('X'), t: z.number() }).strict();

/** Any line of a segment. */
export const RecordLine = z.discriminatedUnion('k', [KeyframeStart, KeyframeRow, KeyframeStatus, KeyframeEnd, ChangeLine, StatusLine, StopLine]);
/** Any line of a segment (type). */
export type RecordLine = z.infer<typeof RecordLine>;

/**
 * The start of a change line as the recorder writes it, up to its frame:
 * `{"k":"c","t":…,"topic":"…","seq":…,"f":` and the frame's `{`.
 */
const CHANGE_HEAD = /^\{"k":"c","t":(-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?),"topic":("(?:[^"\\]|\\.)*"),"seq":([1-9]\d*),"f":(?=\{)/;

/** What `readLine` made of a line: the line, or why it is not one. */
export type ReadLine =
  | {
      readonly ok: true;
      readonly line: RecordLine;
      /** A change line taken apart at its frame: the frame as parsed to check it, for a reader that needs its message (a replay applying it). */
      readonly message?: Readonly<Record<string, unknown>>;
    }
  | { readonly ok: false; readonly reason: 'not JSON' | 'not a recording line' };

/**
 * A line of a segment from its text. A change line as the recorder writes
 * it is taken apart where its frame begins: the frame is parsed only to
 * check that it is a JSON object, and its text is kept as it is, not
 * serialised again. Any other line (an older change line, a keyframe, a
 * status) is parsed whole and checked against `RecordLine`. Pure.
 */
export function readLine(text: string): ReadLine {
  const m = CHANGE_HEAD.exec(text);
  if (m !== null && text.charCodeAt(text.length - 1) === 0x7d) {
    const frame = text.slice(m[0].length, -1);
    const seq = Number(m[3]);
    try {
      const parsed: unknown = JSON.parse(frame);
      const topic: unknown = JSON.parse(m[2]!);
      if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) && typeof topic === 'string' && Number.isSafeInteger(seq)) {
        return { ok: true, line: { k: 'c', t: Number(m[1]), topic, seq, f: frame }, message: parsed as Record<string, unknown> };
      }
    } catch {
      // Not what the recorder writes after all: read the whole line below.
    }
  }
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'not JSON' };
  }
  const r = RecordLine.safeParse(v);
  return r.success ? { ok: true, line: r.data } : { ok: false, reason: 'not a recording line' };
}

/** Whether `YYYYMMDD` is a day of the calendar (not 20261301 or 20260230). */
export function isDay(d: string): boolean {
  const t = new Date(Date.UTC(Number(d.slice(0, 4)), Number(d.slice(4, 6)) - 1, Number(d.slice(6, 8))));
  return /^\d{8}$/.test(d) && !Number.isNaN(t.getTime()) && t.toISOString().slice(0, 10).replace(/-/g, '') === d;
}

/** The folder of a day's recording under the recordings directory. */
export function dayDir(root: string, date: string): string {
  return `${root}/${date}`;
}

/** The file name of a segment starting at `hhmmss` (KST), before compression. */
export function segmentName(hhmmss: string): string {
  return `seg-${hhmmss}.ndjson`;
}

/** The start (`HHMMSS`) of a segment file name, or undefined when it is not one. */
export function segmentStart(name: string): string | undefined {
  return /^seg-(\d{6})\.ndjson(\.gz)?$/.exec(name)?.[1];
}

/** A KST time `HHMMSS` of a day (000000–235959). */
export const TIME_OF_DAY = /^([01]\d|2[0-3])[0-5]\d[0-5]\d$/;

/** An exclusive end of a window of a day: a time of the day, or `240000`, the end of the day (its last second included). */
export const END_OF_WINDOW = /^(([01]\d|2[0-3])[0-5]\d[0-5]\d|240000)$/;

/** The exclusive end of a whole day. */
export const END_OF_DAY = '240000';

/** `HHMMSS` of seconds after midnight. */
export function hhmmss(secs: number): string {
  const s = Math.floor(secs);
  return `${String(Math.floor(s / 3600)).padStart(2, '0')}${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}${String(s % 60).padStart(2, '0')}`;
}

/** Seconds after midnight of `HHMMSS`. */
export function secondsOf(hhmmss: string): number {
  return Number(hhmmss.slice(0, 2)) * 3600 + Number(hhmmss.slice(2, 4)) * 60 + Number(hhmmss.slice(4, 6));
}

/** Epoch ms of `HHMMSS` KST on `date` (`YYYYMMDD`). */
export function kstMs(date: string, time: string): number {
  return Date.UTC(Number(date.slice(0, 4)), Number(date.slice(4, 6)) - 1, Number(date.slice(6, 8))) - 9 * 3600_000 + secondsOf(time) * 1000;
}
