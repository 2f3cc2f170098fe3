import { mkdirSync, rmSync } from 'node:fs';
import { open, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { Bus, FeedStatus } from '../bus/bus.js';
import type { Logger } from '../log.js';
import type { Channel, Market } from '../protocol/constants.js';
import type { StateStore, TopicEntry } from '../state/store.js';
import { LineBuffer } from './lines.js';
import { FILES } from './load.js';
import type { FeedRecord, TopicRecord } from './records.js';

/**
 * Writes the last state of every topic and feed to the state directory, so
 * a restart, or a crash, starts from it: once a second the topics that
 * changed (and the feeds whose status did) are appended to the journal; every
 * `compactMs` the whole state is written as a new snapshot and the journal
 * starts over. Writes are asynchronous and one at a time: while one is under
 * way the changes keep accumulating (one line per topic, however often it
 * changed), so a slow disk costs freshness, never memory or the poll cycle.
 * A crash loses at most the changes of the last flush period. A clean `stop`
 * writes everything and marks the epoch, so clients may resume across it.
 * See docs/OPERATIONS.md §State.
 */

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
  /** Clock, ms epoch; default Date.now. */
  readonly now?: () => number;
}

/** Codes of one feed changed since the last write. */
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
  /** Topics written since start. */
  readonly written: number;
}

/** The state journal of one process. */
export class StateJournal {
  /** The codes changed since the last write, per feed (`channel.market`). */
  private readonly dirtyTopics = new Map<string, DirtyCodes>();
  private readonly feeds = new Map<string, FeedRecord>();
  private readonly dirtyFeeds = new Set<string>();
  private readonly now: () => number;
  private journal: FileHandle | undefined;
  private journalBytes = 0;
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
    for (const [k, v] of restoredFeeds) this.feeds.set(k, v);
    this.unsubscribe.push(
      bus.subscribe('batch', (b) => {
        if (b.events.length === 0 && !this.feeds.has(`${b.channel}.${b.market}`)) return;
        if (b.events.length > 0) {
          const key = `${b.channel}.${b.market}`;
          let d = this.dirtyTopics.get(key);
          if (d === undefined) this.dirtyTopics.set(key, (d = { channel: b.channel, market: b.market, codes: new Set() }));
          for (const e of b.events) d.codes.add(e.code);
        }
        this.noteRefresh(b.channel, b.market, b.ts);
      }),
      bus.subscribe('status', (st) => this.noteStatus(st)),
    );
  }

  /** When a feed's data was last refreshed, as written (restored at start, then as polled). */
  lastRefresh(channel: Channel, market: Market): number | undefined {
    return this.feeds.get(`${channel}.${market}`)?.ok;
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
      this.dirtyTopics.clear();
      this.dirtyFeeds.clear();
      return Promise.resolve();
    }
    const due = this.now() - this.lastCompact >= (this.opts.compactMs ?? 600_000) || this.journalBytes > (this.opts.maxJournalBytes ?? 64 << 20);
    if (due) return this.run(() => this.compact());
    if (this.dirtyTopics.size === 0 && this.dirtyFeeds.size === 0) return Promise.resolve();
    return this.run(() => this.append());
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
    const f = this.feeds.get(key);
    if (f !== undefined && (f.ok ?? 0) < ts) {
      this.feeds.set(key, { ...f, ok: ts });
      this.dirtyFeeds.add(key);
    }
  }

  private noteStatus(st: FeedStatus): void {
    const key = `${st.channel}.${st.market}`;
    const ok = this.feeds.get(key)?.ok;
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
    let n = 0;
    for (const { channel, market, codes } of this.dirtyTopics.values()) {
      n += codes.size;
      for (const code of codes) {
        const e = this.opts.store.entry(channel, market, code);
        if (e !== undefined) this.addTopic(lines, e, channel, market);
      }
    }
    for (const key of this.dirtyFeeds) {
      const f = this.feeds.get(key);
      if (f !== undefined) lines.add(f);
    }
    this.dirtyTopics.clear();
    this.dirtyFeeds.clear();
    const bytes = lines.take();
    this.journal ??= await open(join(this.opts.dir, FILES.journal), 'a');
    await this.journal.write(bytes);
    await this.journal.datasync();
    this.journalBytes += bytes.length;
    this.written += n;
  }

  /** Writes the whole state as the new snapshot (temp file, then rename) and starts the journal over. */
  private async compact(): Promise<void> {
    const dir = this.opts.dir;
    // Everything is written below; what changes while it is written is marked again and goes to the new journal.
    this.dirtyTopics.clear();
    this.dirtyFeeds.clear();
    const tmp = join(dir, `${FILES.snapshot}.tmp`);
    const fh = await open(tmp, 'w');
    try {
      const lines = new LineBuffer(1 << 20);
      lines.add({ v: 1, epoch: this.opts.store.epoch, at: this.now() });
      for (const [channel, market] of this.opts.store.heldFeeds()) {
        for (const e of this.opts.store.entries(channel, market)) {
          this.addTopic(lines, e, channel, market);
          if (lines.length > 1 << 20) await fh.write(lines.take());
        }
      }
      for (const f of this.feeds.values()) lines.add(f);
      await fh.write(lines.take());
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
