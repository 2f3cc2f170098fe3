import type { FeedStatus } from '../bus/bus.js';
import type { Logger } from '../log.js';
import { rowChecksum } from '../protocol/crc32.js';
import { feedOf } from '../protocol/topics.js';
import type { ChangeBatch, StateStore } from '../state/store.js';
import type { BusWriter } from './bus.js';
import { decodeEntry, encodeEntry, pairs } from './codec.js';
import { ALL_FEEDS, type ClusterKeys } from './keys.js';
import type { LeaseState } from './lease.js';
import type { ClusterMetrics } from './metrics.js';
import { WRITE_BATCH, WRITE_STATUS, type Commander } from './scripts.js';

/**
 * The leader's side of the shared state: fenced writes of each batch and
 * feed state (the write script refuses an older generation or epoch), and
 * loading the shared rows and seqs into the poller's own store before a
 * term starts, so the first diff continues every topic's seq.
 */

/** Options of `LeaderWriter`. */
export interface LeaderWriterOptions {
  readonly redis: Commander;
  readonly keys: ClusterKeys;
  /** This process's id (the lease owner value). */
  readonly node: string;
  readonly lease: LeaseState;
  readonly metrics: ClusterMetrics;
  readonly logger: Logger;
  /** Stream cap per feed (XADD MAXLEN ~). */
  readonly streamMaxLen: number;
  /** Whether writes may go out now (leader, state loaded, backplane up). */
  readonly canWrite: () => boolean;
  /** The epoch of this term's writes. */
  readonly epoch: () => string;
  /** A write was refused for an older generation: the lease is gone. */
  readonly onFenced: (reason: string) => void;
  /** A write failed or was dropped: the poller's store no longer matches Redis. */
  readonly onDiverged: (reason: string) => void;
}

/** Fenced writes of the leader. */
export class LeaderWriter implements BusWriter {
  /** Writes of `opts.node`. */
  constructor(private readonly opts: LeaderWriterOptions) {}

  /**
   * Writes the batches of one poll round (one per feed) in one fenced
   * script, which announces them on the round channel and publishes them
   * one right after the other once all are stored; not awaited by the
   * poller.
   */
  writeRound(batches: readonly ChangeBatch[]): void {
    const o = this.opts;
    if (batches.length === 0) return;
    const gen = o.lease.gen;
    const feeds = batches.map((b) => feedOf(b.channel, b.market)).join(',');
    if (gen === undefined || !o.canWrite()) {
      o.metrics.writes.inc({ kind: 'batch', outcome: 'dropped' }, batches.length);
      if (gen !== undefined) o.onDiverged(`${batches.length === 1 ? 'batch' : 'round'} dropped while not writable`);
      return;
    }
    const keys = [o.keys.lease, o.keys.gen, o.keys.epoch];
    const args = [o.node, String(gen), o.epoch(), String(o.streamMaxLen), String(batches.length)];
    for (const batch of batches) {
      const feed = feedOf(batch.channel, batch.market);
      keys.push(o.keys.state(feed), o.keys.log(feed));
      const frames: string[] = [];
      const at = args.length + 2;
      args.push(o.keys.events(feed), String(batch.ts), '', String(batch.events.length));
      for (const ev of batch.events) {
        frames.push(ev.frame);
        // The store's events carry their checksum; one from elsewhere is computed.
        args.push(ev.code, String(ev.seq), encodeEntry({ row: ev.row, seq: ev.seq, ts: batch.ts, crc: ev.crc ?? rowChecksum(ev.row) }), ev.frame);
      }
      args[at] = frames.join('\n');
    }
    args.push(o.keys.roundChannel);
    WRITE_BATCH.run<string>(o.redis, keys, args).then(
      (r) => this.settled('batch', r, feeds, batches.length),
      (err: unknown) => this.failed('batch', err, feeds, batches.length),
    );
  }

  /** Writes a feed state in one fenced script (leader only; others drop it). */
  writeStatus(status: FeedStatus): void {
    const o = this.opts;
    const gen = o.lease.gen;
    if (gen === undefined || !o.canWrite()) return;
    const feed = feedOf(status.channel, status.market);
    const args = [o.node, String(gen), feed, JSON.stringify(status), o.keys.statusChannel];
    WRITE_STATUS.run<string>(o.redis, [o.keys.lease, o.keys.gen, o.keys.status], args).then(
      (r) => this.settled('status', r, feed),
      (err: unknown) => this.failed('status', err, feed),
    );
  }

  /** A write's reply; `count` writes (a round's batches) counted. */
  private settled(kind: 'batch' | 'status', r: string, feed: string, count = 1): void {
    this.opts.metrics.writes.inc({ kind, outcome: r === 'ok' || r === 'fenced' || r === 'epoch' ? r : 'error' }, count);
    if (r === 'ok') return;
    if (r === 'fenced') this.opts.onFenced(`${kind} write of ${feed} fenced: another process holds the lease`);
    else this.opts.onDiverged(`${kind} write of ${feed} refused (${r})`);
  }

  private failed(kind: 'batch' | 'status', err: unknown, feed: string, count = 1): void {
    this.opts.metrics.writes.inc({ kind, outcome: 'error' }, count);
    this.opts.logger.warn({ feed, err: (err as Error).message }, `${kind} write failed`);
    if (kind === 'batch') this.opts.onDiverged(`batch write of ${feed} failed`);
  }
}

/**
 * Replaces `store`'s content with the shared rows and seqs of every feed
 * under `epoch`. All feeds are read first and swapped in one step, so no
 * poll cycle applies to a half-loaded store. Returns the topics loaded.
 */
export async function loadShared(redis: Commander, keys: ClusterKeys, store: StateStore, epoch: string, timeoutMs: number): Promise<number> {
  const hashes = await Promise.all(ALL_FEEDS.map((f) => redis.sendCommand<string[]>(['HGETALL', keys.state(f.feed)], { timeout: timeoutMs })));
  store.resetEpoch(epoch);
  let n = 0;
  ALL_FEEDS.forEach((f, i) => {
    for (const [code, v] of pairs(hashes[i] ?? [])) {
      const p = code === '~id' ? undefined : decodeEntry(v);
      if (p === undefined) continue;
      store.load(f.channel, f.market, code, p);
      n++;
    }
  });
  return n;
}
