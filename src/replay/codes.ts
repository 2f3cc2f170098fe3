import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { dayDir } from '../recorder/format.js';
import { segments } from '../recorder/reader.js';

/**
 * The codes a day's recording holds, per market: with the bridge's own
 * listing, what a replay of that day takes in a `subscribe` (a code neither
 * listed nor recorded is `invalid_code`, as on `/ws`). The recording keeps
 * no symbol list, but every change line and every keyframe row names its
 * topic at its start (`{"k":"c","t":…,"topic":"…"` and `{"k":"r","topic":"…"`),
 * so the codes are read from the lines' heads without parsing them. Read
 * only when the listing does not know a code (a code since delisted, or
 * not a code at all), once per segment, and for the segment still being
 * written from where the last read stopped; kept in memory for the last
 * `DAYS_KEPT` days asked about. See docs/REPLAY.md.
 */

/** Days whose codes are kept. */
const DAYS_KEPT = 8;

/** The head of a change line or keyframe row, up to its topic's market and code (`m` flag: at every line start). */
const TOPIC_HEAD = /^\{"k":"[cr]",(?:"t":[^,\n]*,)?"topic":"[a-z]+\.([a-z]+)\.([^"\\\n]+)"/gm;

/** What has been read of one segment file. */
interface SegmentRead {
  /** Bytes read, up to the end of the last whole line. */
  offset: number;
  /** Read to its end for good (a compressed segment does not grow). */
  done: boolean;
}

/** The codes of one day, and how far each of its segments has been read. */
class DayCodes {
  readonly codes = new Set<string>();
  readonly read = new Map<string, SegmentRead>();
  /** The read under way, which later questions wait for. */
  reading: Promise<void> | undefined;
}

/** The codes held by the recordings under one directory, by day. */
export class RecordedCodes {
  private readonly days = new Map<string, DayCodes>();

  /** The codes of the recordings under `dir` (the recorder's `DATA_DIR/recordings`). */
  constructor(private readonly dir: string) {}

  /**
   * Whether the recording of `date` holds a topic (of any channel) of
   * `code` on `market`, as recorded so far: what the day's segments hold
   * that was not read yet is read first.
   */
  async has(date: string, market: string, code: string): Promise<boolean> {
    const day = this.day(date);
    const key = keyOf(market, code);
    if (day.codes.has(key)) return true;
    // A read under way may already be past the code; if not, one more from where it stops.
    if (day.reading !== undefined) await day.reading;
    if (day.codes.has(key)) return true;
    // A day that cannot be listed (its folder gone meanwhile) holds no more than was read.
    day.reading ??= this.readNew(date, day)
      .catch(() => undefined)
      .finally(() => (day.reading = undefined));
    await day.reading;
    return day.codes.has(key);
  }

  /** The day's entry, kept as the most recently asked about. */
  private day(date: string): DayCodes {
    let d = this.days.get(date);
    if (d !== undefined) this.days.delete(date);
    else d = new DayCodes();
    this.days.set(date, d);
    if (this.days.size > DAYS_KEPT) this.days.delete(this.days.keys().next().value!);
    return d;
  }

  /** Reads what the day's segments hold past what was read of them. */
  private async readNew(date: string, day: DayCodes): Promise<void> {
    const dir = dayDir(this.dir, date);
    for (const seg of await segments(this.dir, date)) {
      const had = day.read.get(seg.file) ?? { offset: 0, done: false };
      if (had.done || (!seg.compressed && had.offset >= seg.bytes)) continue;
      day.read.set(seg.file, had);
      const path = join(dir, seg.file);
      const ok = await scanFile(path, seg.compressed ? 0 : had.offset, seg.compressed, day.codes).then(
        (offset) => ((had.offset = offset), (had.done = seg.compressed), true),
        () => false,
      );
      // Compressed since it was listed (the raw file goes once its `.gz` is complete): the whole `.gz`.
      if (!ok && !seg.compressed) {
        const gz = { offset: 0, done: false };
        day.read.set(`${seg.file}.gz`, gz);
        await scanFile(`${path}.gz`, 0, true, day.codes).then(
          () => ((had.done = true), (gz.done = true)),
          () => undefined,
        );
      }
    }
  }
}

function keyOf(market: string, code: string): string {
  return `${market}.${code}`;
}

/**
 * Adds the market and code of every change line and keyframe row of a
 * segment file, from byte `start` (of an uncompressed file), to `codes`.
 * Resolves with the offset after its last whole line (a line still being
 * written is read next time). Rejects when the file cannot be read.
 */
function scanFile(path: string, start: number, compressed: boolean, codes: Set<string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const file = createReadStream(path, compressed ? {} : { start });
    const input: Readable = compressed ? file.pipe(createGunzip()) : file;
    let rest: Buffer = Buffer.alloc(0);
    let offset = start;
    const fail = (err: Error): void => {
      file.destroy();
      reject(err);
    };
    file.on('error', fail);
    if (compressed) input.on('error', fail);
    input.on('data', (chunk: Buffer) => {
      const buf = rest.length === 0 ? chunk : Buffer.concat([rest, chunk]);
      const nl = buf.lastIndexOf(0x0a);
      if (nl < 0) {
        rest = buf;
        return;
      }
      addCodes(buf.toString('utf8', 0, nl + 1), codes);
      offset += nl + 1;
      rest = buf.subarray(nl + 1);
    });
    input.on('end', () => {
      // A compressed segment is complete: its last line counts even without a newline.
      if (compressed && rest.length > 0) addCodes(rest.toString('utf8'), codes);
      resolve(offset);
    });
  });
}

function addCodes(text: string, codes: Set<string>): void {
  TOPIC_HEAD.lastIndex = 0;
  for (let m = TOPIC_HEAD.exec(text); m !== null; m = TOPIC_HEAD.exec(text)) codes.add(keyOf(m[1]!, m[2]!));
}
