import { createReadStream, createWriteStream, mkdirSync, readFileSync, type WriteStream } from 'node:fs';
import { readdir, rename, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import type { Bus, FeedStatus } from '../bus/bus.js';
import { statusFrame } from '../gateway/fanout.js';
import type { Logger } from '../log.js';
import { addDays, kstDate, kstSecondOfDay } from '../market/calendar.js';
import { feedOf } from '../protocol/topics.js';
import type { ChangeBatch, StateStore } from '../state/store.js';
import { hhmmss, segmentName, segmentStart } from './format.js';

/**
 * The recorder: every change of every polled feed (the frames live clients
 * got, with topic, seq and the time observed) and every feed status,
 * appended to the day's recording under `DATA_DIR/recordings/`. A new
 * segment starts every `segmentMs` with a keyframe (every topic as it
 * stands), so a replay can start anywhere. Writes go through a buffered
 * stream and never wait: past `maxPendingBytes` not yet on disk (a full or
 * slow disk) a batch is dropped and counted, never the live feed stalled.
 * A day's segments are compressed once the day is over; days past
 * `keepDays` are deleted. See docs/REPLAY.md.
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

/** The recorder of one process. */
export class Recorder {
  private out: WriteStream | undefined;
  private day = '';
  private segmentEnds = 0;
  private written = 0;
  private dropped = 0;
  private failed = false;
  private readonly now: () => number;
  private readonly unsubscribe: (() => void)[] = [];
  private readonly statuses = new Map<string, string>();
  private feeds = new Set<string>();
  private housekeeping: Promise<void> = Promise.resolve();
  private stopped = false;

  /** A recorder fed by `bus`; `start` begins. */
  constructor(
    private readonly opts: RecorderOptions,
    private readonly bus: Bus,
  ) {
    this.now = opts.now ?? Date.now;
  }

  /** Starts recording (and the housekeeping of old days). */
  start(): void {
    mkdirSync(this.opts.dir, { recursive: true });
    this.unsubscribe.push(
      this.bus.subscribe('batch', (b) => this.onBatch(b)),
      this.bus.subscribe('status', (st) => this.onStatus(st)),
    );
    this.housekeeping = this.housekeep();
  }

  /** Stops: the current segment is closed (and flushed). */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const u of this.unsubscribe) u();
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
      for (const f of await readdir(join(this.opts.dir, d)).catch(() => [] as string[])) diskBytes += await stat(join(this.opts.dir, d, f)).then((s) => s.size, () => 0);
    }
    return { dir: this.opts.dir, diskBytes, days, written: this.written, dropped: this.dropped };
  }

  private onStatus(st: FeedStatus): void {
    const frame = statusFrame(st);
    const feed = feedOf(st.channel, st.market);
    this.statuses.set(feed, frame);
    if (!this.recording()) return;
    this.write(`${JSON.stringify({ k: 's', t: st.ts, feed, f: frame })}\n`, 0);
  }

  private onBatch(b: ChangeBatch): void {
    if (b.events.length === 0 || !this.recording()) return;
    this.noteFeed(feedOf(b.channel, b.market));
    let text = '';
    for (const e of b.events) text += `{"k":"c","t":${b.ts},"topic":${JSON.stringify(e.topic)},"seq":${e.seq},"f":${JSON.stringify(e.frame)}}\n`;
    this.write(text, b.events.length);
  }

  /** Keeps the day's list of recorded feeds (`feeds.json`), for `/recordings`. */
  private noteFeed(feed: string): void {
    if (this.feeds.has(feed)) return;
    this.feeds.add(feed);
    const path = join(this.opts.dir, this.day, 'feeds.json');
    void writeFile(`${path}.tmp`, JSON.stringify([...this.feeds].sort()))
      .then(() => rename(`${path}.tmp`, path))
      .catch(() => undefined);
  }

  private recording(): boolean {
    if (this.stopped || (this.opts.enabled && !this.opts.enabled())) return false;
    const now = this.now();
    if (this.out === undefined || now >= this.segmentEnds) this.openSegment(now);
    return this.out !== undefined;
  }

  private write(text: string, changes: number): void {
    const out = this.out!;
    if (this.failed || out.writableLength > (this.opts.maxPendingBytes ?? 16 << 20)) {
      this.dropped += changes;
      this.opts.onDrop?.(this.failed ? 'error' : 'backlog', changes);
      return;
    }
    out.write(text);
    this.written += changes;
    this.opts.onWrite?.(Buffer.byteLength(text));
  }

  /** Closes the current segment and opens the next, beginning with a keyframe. */
  private openSegment(now: number): void {
    void this.closeSegment();
    const date = kstDate(now);
    const secs = kstSecondOfDay(now);
    const segMs = this.opts.segmentMs ?? 300_000;
    // Segments start on multiples of their length (KST), so a day's boundaries are the same whenever the process started.
    const start = Math.floor((secs * 1000) / segMs) * segMs;
    this.segmentEnds = now - secs * 1000 - (now % 1000) + start + segMs;
    const dir = join(this.opts.dir, date);
    try {
      mkdirSync(dir, { recursive: true });
    } catch (err) {
      this.fail(err);
      return;
    }
    const out = createWriteStream(join(dir, segmentName(hhmmss(start / 1000))), { flags: 'a' });
    out.on('error', (err) => this.fail(err));
    this.out = out;
    this.failed = false;
    if (date !== this.day) {
      if (this.day !== '') this.housekeeping = this.housekeeping.then(() => this.housekeep());
      this.day = date;
      this.feeds = new Set();
      this.loadFeeds(dir);
    }
    this.keyframe(now);
  }

  private keyframe(now: number): void {
    let text = `{"k":"K","t":${now}}\n`;
    for (const [channel, market] of this.opts.store.heldFeeds()) {
      for (const e of this.opts.store.entries(channel, market)) {
        text += `${JSON.stringify({ k: 'r', topic: e.topic, seq: e.seq, ts: e.ts, row: e.row, crc: e.crc })}\n`;
      }
    }
    for (const [feed, f] of this.statuses) text += `${JSON.stringify({ k: 'S', feed, f })}\n`;
    text += '{"k":"E"}\n';
    this.write(text, 0);
  }

  private closeSegment(): Promise<void> {
    const out = this.out;
    this.out = undefined;
    if (out === undefined) return Promise.resolve();
    return new Promise((resolve) => out.end(() => resolve()));
  }

  private loadFeeds(dir: string): void {
    try {
      for (const f of JSON.parse(readFileSync(join(dir, 'feeds.json'), 'utf8')) as unknown[]) if (typeof f === 'string') this.feeds.add(f);
    } catch {
      // No list yet (a new day), or a torn one: it is written again as feeds appear.
    }
  }

  private fail(err: unknown): void {
    if (!this.failed) this.opts.logger.warn({ err: (err as Error).message }, 'recording not written; changes are dropped until the next segment');
    this.failed = true;
  }

  /** Compresses the segments of past days and deletes days past `keepDays`. */
  private async housekeep(): Promise<void> {
    const today = kstDate(this.now());
    const oldest = addDays(today, -((this.opts.keepDays ?? 7) - 1));
    for (const d of (await readdir(this.opts.dir).catch(() => [] as string[])).sort()) {
      if (!/^\d{8}$/.test(d)) continue;
      const dir = join(this.opts.dir, d);
      if (d < oldest) {
        await rm(dir, { recursive: true, force: true });
        this.opts.logger.info({ day: d }, 'recording deleted (RECORD_DAYS)');
        continue;
      }
      if (d >= today) continue;
      for (const f of await readdir(dir).catch(() => [] as string[])) {
        if (segmentStart(f) === undefined || f.endsWith('.gz')) continue;
        try {
          await pipeline(createReadStream(join(dir, f)), createGzip(), createWriteStream(join(dir, `${f}.gz`)));
          await unlink(join(dir, f));
        } catch (err) {
          this.opts.logger.warn({ file: f, err: (err as Error).message }, 'recording segment not compressed');
        }
      }
    }
  }
}
