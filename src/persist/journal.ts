import { mkdirSync, rmSync } from 'node:fs';
import { open, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { Bus, FeedStatus } from '../bus/bus.js';
import type { Logger } from '../log.js';
import type { Channel, Market } from '../protocol/constants.js';
import type { ChangeEvent, StateStore, TopicEntry } from '../state/store.js';
import { frameBytes } from '../state/change.js';
import { ByteBuilder } from '../bytes.js';
import { LineBuffer } from './lines.js';
import { FILES } from './load.js';
import type { FeedRecord, TopicRecord } from './records.js';

/**
 * Writes the last state of every topic and feed to the state directory, so
 * a restart, or a crash, starts from it: once a second the changes since the
 * last write (and the feeds whose status changed) are appended to the
 * journal; every `compactMs`, or once the journal is some times larger
 * than the last snapshot, the whole state is written as a new snapshot and
 * the journal starts over.
 *
 * A change that follows one the journal already holds is appended as its
 * patch frame, the very bytes clients got: the store made them, so the
 * journal serialises nothing. Anything else (a new topic, a topic whose chain was
 * broken by a failed write, a topic that changed again after being marked
 * for its row) is appended as the topic's whole row, once, however often it
 * changed. The loader applies a frame only to the seq just before it, and
 * checks its checksum.
 *
 * Writes are asynchronous and one at a time: while one is under way the
 * changes keep accumulating, frames up to `maxFrames` and then one row per
 * topic, so a slow disk costs freshness, never unbounded memory or the poll
 * cycle. A write that fails marks its topics for their rows at the next.
 * A crash loses at most the changes of the last flush period. A clean
 * `stop` writes everything and marks the epoch, so clients may resume
 * across it. See docs/OPERATIONS.md §State.
 */

/**
 * The snapshot is written in pieces of about this many bytes, each handed
 * to the file before the next is built, so building it holds the event loop
 * a few milliseconds at a time, not for the whole state.
 */
const CHUNK = 256 << 10;

/** Options of `StateJournal`. */
export interface StateJournalOptions {
  /** The state directory (created if missing). */
  readonly dir: string;
  readonly store: StateStore;
  readonly logger: Logger;
  /** Whether this process writes now (in a cluster, the poller lease holder); default always. */
  readonly enabled?: () => boolean;
  /** Flush period, ms; default 1000. */
  readonly flushMs?: number;
  /** Snapshot period, ms; default 10 min. */
  readonly compactMs?: number;
  /** A journal past this size is compacted at the next flush, bytes; default 64 MiB. */
  readonly maxJournalBytes?: number;
  /**
   * A journal past this many times the size of the last snapshot is
   * compacted at the next flush (once past `minJournalBytes`): a start reads
   * the snapshot and the whole journal, so this bounds how long a start
   * after a crash takes against how often the whole state is written.
   * Default 8.
   */
  readonly journalPerSnapshot?: number;
  /** The size below which the journal is never compacted for its size, bytes; default 4 MiB. */
  readonly minJournalBytes?: number;
  /** Clock, ms epoch; default Date.now. */
  readonly now?: () => number;
  /** Patch frames held for the next write at most; past it, changes are written as rows; default 65,536. */
  readonly maxFrames?: number;
}

/** Codes of one feed whose rows are to be written at the next write. */
interface DirtyCodes {
  readonly channel: Channel;
  readonly market: Market;
  readonly codes: Set<string>;
}

/** What `/status` shows of the state files. */
export interface StateInfo {
  readonly dir: string;
  /** When the last write finished (ms epoch), or null. */
  readonly lastWriteAt: number | null;
  /** Flushes that failed (the changes stay pending and are written at the next). */
  readonly failures: number;
  /** Changes written since start: a patch frame or a topic's row each. */
  readonly written: number;
}

/** The state journal of one process. */
export class StateJournal {
  /** The codes whose rows are to be written, per feed (`channel.market`). */
  private dirtyTopics = new Map<string, DirtyCodes>();
  /**
   * The patch frames to be written, in the order they came: their bytes
   * copied as each batch comes (a view held until the write would keep the
   * batch's whole buffer), where each ends, and the feed and code of each.
   * Their lines (checksums) are made at the write, off the poll's path.
   */
  private frames = new ByteBuilder();
  private frameEnds: number[] = [];
  private frameFeeds: DirtyCodes[] = [];
  private frameCodes: string[] = [];
  /**
   * Per topic, the seq of the last change written or to be written: a
   * patch of the next seq can go as its frame. Set by every change and
   * every snapshot of the state; a topic missing here goes as its row.
   */
  private readonly chain = new Map<string, number>();
  private readonly feeds = new Map<string, FeedRecord>();
  /** When each feed's data was last refreshed, kept also for a feed whose first status has not come yet (its answer is published before it). */
  private readonly refreshed = new Map<string, number>();
  private readonly dirtyFeeds = new Set<string>();
  private readonly now: () => number;
  private journal: FileHandle | undefined;
  private journalBytes = 0;
  private snapshotBytes = 0;
  private writing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private lastCompact = 0;
  private unsubscribe: (() => void)[] = [];
  private lastWriteAt: number | null = null;
  private failures = 0;
  private written = 0;
  private stopped = false;

  /** A journal of `opts.store`, fed by `bus`; `start` begins writing. */
  constructor(
    private readonly opts: StateJournalOptions,
    bus: Bus,
    restoredFeeds: ReadonlyMap<string, FeedRecord> = new Map(),
  ) {
    this.now = opts.now ?? Date.now;
    for (const [k, v] of restoredFeeds) {
      this.feeds.set(k, v);
      if (v.ok !== undefined) this.refreshed.set(k, v.ok);
    }
    this.unsubscribe.push(
      bus.subscribe('batch', (b) => {
        if (b.events.length > 0) this.noteChanges(b.channel, b.market, b.events);
        this.noteRefresh(b.channel, b.market, b.ts);
      }),
      bus.subscribe('status', (st) => this.noteStatus(st)),
    );
  }

  /** Queues one batch's changes: each as its frame when it follows the topic's chain, else its topic's row. */
  private noteChanges(channel: Channel, market: Market, events: readonly ChangeEvent[]): void {
    const d = this.dirty(channel, market);
    const chain = this.chain;
    const max = this.opts.maxFrames ?? 65_536;
    for (let i = 0; i < events.length; i++) {
      const e = events[i]!;
      if (e.kind === 'patch' && chain.get(e.topic) === e.seq - 1 && this.frameEnds.length < max && !d.codes.has(e.code)) {
        this.frames.bytes(frameBytes(e));
        this.frameEnds.push(this.frames.length);
        this.frameFeeds.push(d);
        this.frameCodes.push(e.code);
      } else d.codes.add(e.code);
      chain.set(e.topic, e.seq);
    }
  }

  /** The rows to be written of a feed. */
  private dirty(channel: Channel, market: Market): DirtyCodes {
    const key = `${channel}.${market}`;
    let d = this.dirtyTopics.get(key);
    if (d === undefined) this.dirtyTopics.set(key, (d = { channel, market, codes: new Set() }));
    return d;
  }

  /** Drops everything queued. */
  private clearQueued(): void {
    this.dirtyTopics = new Map();
    this.frames.take();
    this.frameEnds = [];
    this.frameFeeds = [];
    this.frameCodes = [];
    this.dirtyFeeds.clear();
  }

  /** When a feed's data was last refreshed, as written (restored at start, then as polled). */
  lastRefresh(channel: Channel, market: Market): number | undefined {
    return this.refreshed.get(`${channel}.${market}`);
  }

  /** Counts for `/status`. */
  info(): StateInfo {
    return { dir: this.opts.dir, lastWriteAt: this.lastWriteAt, failures: this.failures, written: this.written };
  }

  /** Opens the journal: the state held now becomes the snapshot, the old journal and clean mark go. */
  async start(): Promise<void> {
    mkdirSync(this.opts.dir, { recursive: true });
    // From now on a crash is not a clean stop.
    rmSync(join(this.opts.dir, FILES.clean), { force: true });
    await this.compact();
    const t = setInterval(() => void this.flush(), this.opts.flushMs ?? 1000);
    t.unref();
    this.timer = t;
  }

  /** Writes everything still pending, then a snapshot and the clean-stop mark; stops writing. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.timer);
    for (const u of this.unsubscribe) u();
    await this.writing;
    try {
      await this.compact();
      const mark = JSON.stringify({ clean: true, epoch: this.opts.store.epoch, at: this.now() });
      const fh = await open(join(this.opts.dir, `${FILES.clean}.tmp`), 'w');
      await fh.writeFile(mark);
      await fh.datasync();
      await fh.close();
      await rename(join(this.opts.dir, `${FILES.clean}.tmp`), join(this.opts.dir, FILES.clean));
    } catch (err) {
      this.opts.logger.error({ err: (err as Error).message }, 'state not written at stop; the next start resumes from the last flush');
    } finally {
      await this.journal?.close().catch(() => undefined);
      this.journal = undefined;
    }
  }

  /** Appends the changes since the last flush (skipped while a write is under way). */
  flush(): Promise<void> {
    if (this.writing || this.stopped) return this.writing ?? Promise.resolve();
    if (this.opts.enabled && !this.opts.enabled()) {
      this.clearQueued();
      // Nothing is written while disabled: once enabled again, each topic starts with its row.
      this.chain.clear();
      return Promise.resolve();
    }
    const due = this.now() - this.lastCompact >= (this.opts.compactMs ?? 600_000) || this.journalBytes > this.compactionBytes;
    if (due) return this.run(() => this.compact());
    if (this.dirtyTopics.size === 0 && this.frameEnds.length === 0 && this.dirtyFeeds.size === 0) return Promise.resolve();
    return this.run(() => this.append());
  }

  /**
   * The journal size past which the next flush compacts: `journalPerSnapshot`
   * times the last snapshot, within `minJournalBytes` and `maxJournalBytes`.
   */
  get compactionBytes(): number {
    const o = this.opts;
    return Math.min(o.maxJournalBytes ?? 64 << 20, Math.max(o.minJournalBytes ?? 4 << 20, (o.journalPerSnapshot ?? 8) * this.snapshotBytes));
  }

  private run(step: () => Promise<void>): Promise<void> {
    const p = step()
      .then(() => void (this.lastWriteAt = this.now()))
      .catch((err: unknown) => {
        this.failures++;
        if (this.failures === 1 || this.failures % 60 === 0) {
          this.opts.logger.warn({ err: (err as Error).message, failures: this.failures }, 'state not written; retrying at the next flush');
        }
      })
      .finally(() => {
        this.writing = undefined;
      });
    this.writing = p;
    return p;
  }

  private noteRefresh(channel: Channel, market: Market, ts: number): void {
    const key = `${channel}.${market}`;
    if ((this.refreshed.get(key) ?? 0) >= ts) return;
    this.refreshed.set(key, ts);
    const f = this.feeds.get(key);
    if (f !== undefined) {
      this.feeds.set(key, { ...f, ok: ts });
      this.dirtyFeeds.add(key);
    }
  }

  private noteStatus(st: FeedStatus): void {
    const key = `${st.channel}.${st.market}`;
    const ok = this.refreshed.get(key);
    const { opensAt: _o, asOf: _a, ...status } = st;
    this.feeds.set(key, { f: status, ...(ok !== undefined ? { ok } : {}) });
    this.dirtyFeeds.add(key);
  }

  private addTopic(lines: LineBuffer, e: TopicEntry, channel: Channel, market: Market): void {
    const rec: TopicRecord = { k: channel, m: market, c: e.code, r: e.row, s: e.seq, t: e.ts, x: e.crc };
    lines.add(rec);
  }

  private async append(): Promise<void> {
    const lines = new LineBuffer();
    const rows = this.dirtyTopics;
    const { frameFeeds, frameCodes, frameEnds } = this;
    let n = frameEnds.length;
    for (const { channel, market, codes } of rows.values()) {
      n += codes.size;
      for (const code of codes) {
        const e = this.opts.store.entry(channel, market, code);
        if (e !== undefined) this.addTopic(lines, e, channel, market);
      }
    }
    const raw = this.frames.take();
    for (let i = 0, s = 0; i < frameEnds.length; s = frameEnds[i++]!) lines.addJson(raw.subarray(s, frameEnds[i]));
    for (const key of this.dirtyFeeds) {
      const f = this.feeds.get(key);
      if (f !== undefined) lines.add(f);
    }
    const feeds = [...this.dirtyFeeds];
    this.clearQueued();
    const bytes = lines.take();
    try {
      this.journal ??= await open(join(this.opts.dir, FILES.journal), 'a');
      await this.journal.write(bytes);
      await this.journal.datasync();
    } catch (err) {
      // The next write opens the file again.
      await this.journal?.close().catch(() => undefined);
      this.journal = undefined;
      // What this write held is not known to be on disk: its topics go as rows at the next, and the frames that follow them are then covered by those rows.
      for (const { channel, market, codes } of rows.values()) for (const code of codes) this.dirty(channel, market).codes.add(code);
      for (let i = 0; i < frameCodes.length; i++) this.dirty(frameFeeds[i]!.channel, frameFeeds[i]!.market).codes.add(frameCodes[i]!);
      for (const key of feeds) this.dirtyFeeds.add(key);
      throw err;
    }
    this.journalBytes += bytes.length;
    this.written += n;
  }

  /** Writes the whole state as the new snapshot (temp file, then rename) and starts the journal over. */
  private async compact(): Promise<void> {
    const dir = this.opts.dir;
    // Everything is written below; what changes while it is written is queued again and goes to the new journal.
    this.clearQueued();
    const tmp = join(dir, `${FILES.snapshot}.tmp`);
    const fh = await open(tmp, 'w');
    let bytes = 0;
    try {
      const lines = new LineBuffer(CHUNK);
      lines.add({ v: 1, epoch: this.opts.store.epoch, at: this.now() });
      for (const [channel, market] of this.opts.store.heldFeeds()) {
        for (const e of this.opts.store.entries(channel, market)) {
          this.addTopic(lines, e, channel, market);
          this.chain.set(e.topic, e.seq);
          if (lines.length > CHUNK) {
            const chunk = lines.take();
            bytes += chunk.length;
            await fh.write(chunk);
          }
        }
      }
      for (const f of this.feeds.values()) lines.add(f);
      const last = lines.take();
      bytes += last.length;
      await fh.write(last);
      await fh.datasync();
    } finally {
      await fh.close();
    }
    await rename(tmp, join(dir, FILES.snapshot));
    // Lines of the old journal are older than the snapshot (the loader keeps the newer seq either way).
    await this.journal?.close().catch(() => undefined);
    this.journal = undefined;
    await rm(join(dir, FILES.journal), { force: true });
    this.journalBytes = 0;
    this.snapshotBytes = bytes;
    this.lastCompact = this.now();
  }

  /** Bytes the state files take on disk. */
  async diskBytes(): Promise<number> {
    let n = 0;
    for (const f of [FILES.snapshot, FILES.journal])
      n += await stat(join(this.opts.dir, f)).then(
        (s) => s.size,
        () => 0,
      );
    return n;
  }
}
