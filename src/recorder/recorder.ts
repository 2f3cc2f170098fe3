import { createWriteStream, existsSync, mkdirSync, rmSync, statSync, type WriteStream } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Bus, FeedStatus } from '../bus/bus.js';
import { ByteBuilder } from '../bytes.js';
import { statusFrame } from '../protocol/encode.js';
import type { Logger } from '../log.js';
import { kstDate, kstSecondOfDay } from '../market/calendar.js';
import { feedOf } from '../protocol/topics.js';
import { frameBytes } from '../state/change.js';
import type { ChangeBatch, StateStore } from '../state/store.js';
import { scanSegment, writeSummary, type LiveSegment } from './catalog.js';
import { hhmmss, segmentName } from './format.js';
import { compressAt, housekeep, nextHousekeeping } from './housekeeping.js';
import { SummaryBuilder, summaryName } from './summary.js';

/**
 * The recorder: every change of every polled feed (the frames live clients
 * got, with topic, seq and the time observed) and every feed status,
 * appended to the day's recording under `DATA_DIR/recordings/`. A new
 * segment starts every `segmentMs` with a keyframe (every topic as it
 * stands), so a replay can start anywhere; the first keyframe of a process
 * says it starts the recording again, and a stop (or, in a cluster, the
 * poller moving away) writes a stop line, so what was not recorded shows as
 * such (docs/REPLAY.md §Gaps). A closed segment gets a summary
 * (its feeds' time ranges and sizes). Writes go through a buffered stream
 * and never wait: past `maxPendingBytes` not yet on disk (a full or slow
 * disk) a batch is dropped and counted, never the live feed stalled.
 * A day's segments are compressed once its sessions are over (a timer at
 * 18:00 KST and at midnight, and any segment closing after that); days
 * past `keepDays` are deleted. See docs/REPLAY.md.
 */

/** Options of `Recorder`. */
export interface RecorderOptions {
  /** The recordings directory (`DATA_DIR/recordings`). */
  readonly dir: string;
  readonly store: StateStore;
  readonly logger: Logger;
  /** Whether this process records now (in a cluster, the poller lease holder); default always. */
  readonly enabled?: () => boolean;
  /** Segment length, ms; default 5 minutes. */
  readonly segmentMs?: number;
  /** Days kept (today included); default 7. */
  readonly keepDays?: number;
  /** Bytes written but not yet on disk past which batches are dropped; default 16 MiB. */
  readonly maxPendingBytes?: number;
  /** Counts bytes written and batches dropped. */
  readonly onWrite?: (bytes: number) => void;
  readonly onDrop?: (reason: 'backlog' | 'error', changes: number) => void;
  /** Clock, ms epoch; default Date.now. The housekeeping timer is set from it. */
  readonly now?: () => number;
}

/** What `/status` shows of the recorder. */
export interface RecorderInfo {
  readonly dir: string;
  /** Bytes of every recorded day on disk. */
  readonly diskBytes: number;
  readonly days: number;
  /** Changes written since start, and changes dropped. */
  readonly written: number;
  readonly dropped: number;
}

/** The segment being written. */
interface OpenSegment {
  readonly out: WriteStream;
  readonly date: string;
  readonly start: string;
  readonly file: string;
  /** Ends at (ms epoch). */
  readonly ends: number;
  /** Its summary as written by this process. */
  readonly summary: SummaryBuilder;
  /** The file held lines of an earlier process: its summary is read from the file when it closes. */
  readonly appended: boolean;
}

/** The recorder of one process. */
export class Recorder {
  private seg: OpenSegment | undefined;
  private day = '';
  private written = 0;
  private dropped = 0;
  private failed = false;
  private readonly now: () => number;
  private readonly unsubscribe: (() => void)[] = [];
  private readonly statuses = new Map<string, string>();
  private closing: Promise<void> = Promise.resolve();
  private housekeeping: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** Whether this process has recorded without a break since its last keyframe that says `start`. */
  private continuous = false;
  /** Where a batch's change lines are built (made on the first batch recorded). */
  private lines: ByteBuilder | undefined;

  /** A recorder fed by `bus`; `start` begins. */
  constructor(
    private readonly opts: RecorderOptions,
    private readonly bus: Bus,
  ) {
    this.now = opts.now ?? Date.now;
  }

  /** Starts recording, and the housekeeping of past days (now, and by a timer). */
  start(): void {
    mkdirSync(this.opts.dir, { recursive: true });
    this.unsubscribe.push(
      this.bus.subscribe('batch', (b) => this.onBatch(b)),
      this.bus.subscribe('status', (st) => this.onStatus(st)),
    );
    this.housekeepSoon();
  }

  /** Stops: the current segment is closed (flushed, summarised). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    for (const u of this.unsubscribe) u();
    this.stopLine(this.now());
    await this.closeSegment();
    await this.housekeeping;
  }

  /** Counts and sizes for `/status`. */
  async info(): Promise<RecorderInfo> {
    let diskBytes = 0;
    let days = 0;
    for (const d of await readdir(this.opts.dir).catch(() => [] as string[])) {
      if (!/^\d{8}$/.test(d)) continue;
      days++;
      for (const f of await readdir(join(this.opts.dir, d)).catch(() => [] as string[]))
        diskBytes += await stat(join(this.opts.dir, d, f)).then(
          (s) => s.size,
          () => 0,
        );
    }
    return { dir: this.opts.dir, diskBytes, days, written: this.written, dropped: this.dropped };
  }

  /** The segment being written and its summary so far (for `/recordings` and the replay's checks). */
  readonly live = (): LiveSegment | undefined => {
    const s = this.seg;
    // A segment continued from an earlier process is summarised from its file (the catalog reads it).
    return s === undefined || s.appended ? undefined : { date: s.date, file: s.file, summary: s.summary.result() };
  };

  /** Settles once the housekeeping under way (compression, retention) is done. */
  async settled(): Promise<void> {
    await this.closing;
    await this.housekeeping;
  }

  private onStatus(st: FeedStatus): void {
    const frame = statusFrame(st);
    const feed = feedOf(st.channel, st.market);
    this.statuses.set(feed, frame);
    if (!this.recording()) return;
    // `t` is when the status was observed; the frame carries when the state began.
    const t = this.now();
    this.write(`${JSON.stringify({ k: 's', t, feed, f: frame })}\n`, 0, t, feed);
  }

  private onBatch(b: ChangeBatch): void {
    if (b.events.length === 0 || !this.recording()) return;
    // Each line straight into the bytes written: one long string joined and then encoded would be copied twice more.
    const out = (this.lines ??= new ByteBuilder(256 << 10));
    const head = `{"k":"c","t":${b.ts},"topic":`;
    // The frame is JSON: it goes in as the line's `f` object, its bytes as they are. Escaped as a string, its quotes cost more than the rest of the line.
    for (const e of b.events) {
      out.text(`${head}${JSON.stringify(e.topic)},"seq":${e.seq},"f":`);
      out.bytes(frameBytes(e));
      const end = out.skip(2);
      out.set(end, 0x7d);
      out.set(end + 1, 0x0a);
    }
    this.write(out.take(), b.events.length, b.ts, feedOf(b.channel, b.market));
  }

  private recording(): boolean {
    if (this.stopped) return false;
    const now = this.now();
    if (this.opts.enabled && !this.opts.enabled()) {
      // No longer the process that records (a cluster's poller moved): the recording says where it stops here.
      this.stopLine(now);
      return false;
    }
    if (this.seg === undefined || now >= this.seg.ends) this.openSegment(now);
    else if (!this.continuous) {
      // Recording again after a stop, in the segment still open (its stream, not a second one on the file, whose writes
      // could land before the first one's last): a keyframe that says so, since what happened meanwhile is not here.
      this.keyframe(now, true);
      this.continuous = true;
    }
    return this.seg !== undefined;
  }

  /** Ends what this process has recorded continuously with a stop line (in the segment still open). */
  private stopLine(now: number): void {
    if (this.continuous && this.seg !== undefined && now < this.seg.ends) {
      this.seg.summary.stops(now);
      this.write(`{"k":"X","t":${now}}\n`, 0, now);
    }
    this.continuous = false;
  }

  /** Appends `text` (`changes` changes of `feed`, at `t`; `held`: a keyframe's lines of it), or drops and counts it when the disk is behind or failing. */
  private write(data: string | Buffer, changes: number, t: number, feed?: string, held = false): void {
    const seg = this.seg!;
    if (this.failed || seg.out.writableLength > (this.opts.maxPendingBytes ?? 16 << 20)) {
      this.dropped += changes;
      this.opts.onDrop?.(this.failed ? 'error' : 'backlog', changes);
      return;
    }
    // Encoded once: the stream writes these bytes, and they are what is counted.
    const buf = typeof data === 'string' ? Buffer.from(data) : data;
    seg.out.write(buf);
    const bytes = buf.length;
    if (held) seg.summary.held(t, bytes, feed);
    else seg.summary.add(t, bytes, feed, changes);
    this.written += changes;
    this.opts.onWrite?.(bytes);
  }

  /** Closes the current segment and opens the next, beginning with a keyframe. */
  private openSegment(now: number): void {
    void this.closeSegment();
    const date = kstDate(now);
    const secs = kstSecondOfDay(now);
    const segMs = this.opts.segmentMs ?? 300_000;
    // Segments start on multiples of their length (KST), so a day's boundaries are the same whenever the process started.
    const startMs = Math.floor((secs * 1000) / segMs) * segMs;
    const dir = join(this.opts.dir, date);
    // A segment already compressed (a restart after the sessions ended) is not reopened: this one is named for now.
    const start = existsSync(join(dir, `${segmentName(hhmmss(startMs / 1000))}.gz`)) ? hhmmss(secs) : hhmmss(startMs / 1000);
    const file = segmentName(start);
    try {
      mkdirSync(dir, { recursive: true });
    } catch (err) {
      this.fail(err);
      return;
    }
    const path = join(dir, file);
    const appended = existsSync(path) && statSync(path).size > 0;
    // A segment continued (a restart within its five minutes): the summary its first writer left says where that one
    // stopped; without it the segment is read from its file until this process closes it and summarises all of it.
    if (appended) rmSync(join(dir, summaryName(start)), { force: true });
    const out = createWriteStream(path, { flags: 'a' });
    out.on('error', (err) => this.fail(err));
    const ends = now - secs * 1000 - (now % 1000) + startMs + segMs;
    this.seg = { out, date, start, file, ends, summary: new SummaryBuilder(), appended };
    this.failed = false;
    const dayChanged = this.day !== '' && date !== this.day;
    this.day = date;
    // A new day, or a segment closed once the sessions are over: compress what is done.
    if (dayChanged || now >= compressAt(date)) this.housekeepSoon();
    this.keyframe(now, !this.continuous);
    this.continuous = true;
  }

  /** Every topic and status as they stand; `start`: the first since this process began recording (again). */
  private keyframe(now: number, start: boolean): void {
    if (start) this.seg!.summary.starts(now);
    this.write(`{"k":"K","t":${now}${start ? ',"start":true' : ''}}\n`, 0, now);
    for (const [channel, market] of this.opts.store.heldFeeds()) {
      let text = '';
      for (const e of this.opts.store.entries(channel, market)) {
        text += `${JSON.stringify({ k: 'r', topic: e.topic, seq: e.seq, ts: e.ts, row: e.row, crc: e.crc })}\n`;
      }
      if (text !== '') this.write(text, 0, now, feedOf(channel, market), true);
    }
    for (const [feed, f] of this.statuses) this.write(`${JSON.stringify({ k: 'S', feed, f })}\n`, 0, now, feed, true);
    this.write('{"k":"E"}\n', 0, now);
  }

  /** Ends the segment being written and stores its summary beside it. */
  private closeSegment(): Promise<void> {
    const seg = this.seg;
    this.seg = undefined;
    if (seg === undefined) return this.closing;
    const closed = new Promise<void>((resolve) => seg.out.end(() => resolve()))
      .then(async () => {
        const path = join(this.opts.dir, seg.date, seg.file);
        const summary = seg.appended ? await scanSegment(path) : seg.summary.result();
        if (summary !== undefined) await writeSummary(this.opts.dir, seg.date, seg.start, summary);
      })
      .catch((err: unknown) => this.opts.logger.warn({ file: seg.file, err: (err as Error).message }, 'recording summary not written'));
    this.closing = this.closing.then(() => closed);
    return this.closing;
  }

  private fail(err: unknown): void {
    if (!this.failed) this.opts.logger.warn({ err: (err as Error).message }, 'recording not written; changes are dropped until the next segment');
    this.failed = true;
  }

  /** Runs the housekeeping after the segments being closed are, then sets the timer for the next run. */
  private housekeepSoon(): void {
    this.housekeeping = this.housekeeping.then(() => this.closing).then(() => this.housekeep());
  }

  private async housekeep(): Promise<void> {
    const now = this.now();
    // A segment whose time is over is closed, though no event came to rotate it (a quiet evening).
    if (this.seg !== undefined && now >= this.seg.ends) await this.closeSegment();
    const open = this.seg;
    await housekeep({
      dir: this.opts.dir,
      today: kstDate(now),
      now,
      keepDays: this.opts.keepDays ?? 7,
      ...(open ? { open: { date: open.date, file: open.file } } : {}),
      logger: this.opts.logger,
    });
    this.schedule();
  }

  /** Sets the timer of the next housekeeping: the end of today's sessions, or the next midnight (KST). */
  private schedule(): void {
    clearTimeout(this.timer);
    if (this.stopped) return;
    const now = this.now();
    // A little after the moment, so the clock has passed it when the timer fires.
    const delay = Math.min(nextHousekeeping(kstDate(now), now) - now + 100, 2 ** 31 - 1);
    this.timer = setTimeout(() => this.housekeepSoon(), delay);
    this.timer.unref();
  }
}
