import type { Logger } from '../log.js';
import type { ChangeBatch, ChangeEvent, StateStore, TopicEntry } from '../state/store.js';
import { compareIds, decodeBatch, decodeEntry, decodeFrame, decodeStream, encodeEntry, pairs, type BatchMessage, type StreamChange } from './codec.js';
import { ALL_FEEDS, type ClusterKeys, type FeedRef } from './keys.js';
import type { LeaseState } from './lease.js';
import type { ClusterMetrics } from './metrics.js';
import { RESEED, type Commander } from './scripts.js';

/**
 * Every process's copy of the cluster's topic state: the gateway's
 * StateStore, kept current from the batches the leader publishes (rows,
 * seqs and the very frames it built), and filled from Redis (state hash and
 * stream) on start, after a reconnect and whenever a gap shows: a batch
 * whose `prev` stream id is not the last one applied, or a patch that does
 * not follow its topic's seq or checksum. Batches of one feed are handled
 * strictly in order.
 */

/** Options of `Mirror`. */
export interface MirrorOptions {
  readonly redis: Commander;
  readonly keys: ClusterKeys;
  /** The store the gateway serves from. */
  readonly store: StateStore;
  /** Generations seen (follower-side fencing). */
  readonly lease: LeaseState;
  readonly logger: Logger;
  readonly metrics: ClusterMetrics;
  /** Hands changes to the local gateway. */
  readonly emit: (batch: ChangeBatch) => void;
  /** Stream entries read to refill replay rings when a feed is loaded. */
  readonly loadCount: number;
  /** Timeout of each Redis read, ms. */
  readonly timeoutMs: number;
}

/** The mirror of the shared state in this process. */
export class Mirror {
  /** Whether the store's epoch is the one in Redis. */
  confirmed = false;
  private readonly lastId = new Map<string, string>();
  private readonly chains = new Map<string, Promise<void>>();

  /** A mirror into `opts.store`. */
  constructor(private readonly opts: MirrorOptions) {}

  /**
   * Handles a batch published on a feed's channel: at once when the feed
   * has no earlier work under way (its changes reach the store and `emit`
   * before this returns), else queued behind that work.
   */
  onMessage(f: FeedRef, text: string): void {
    const m = decodeBatch(text);
    if (m === undefined) {
      this.opts.logger.warn({ feed: f.feed }, 'malformed cluster batch ignored');
      return;
    }
    if (this.chains.has(f.feed)) void this.enqueue(f.feed, () => this.handle(f, m) ?? Promise.resolve());
    else {
      const rest = this.handle(f, m);
      if (rest !== undefined) void this.follow(f.feed, rest);
    }
  }

  /** Reloads every feed from Redis (start, reconnect, new epoch); resolves when done. */
  async resyncAll(reason: string): Promise<void> {
    await Promise.all(ALL_FEEDS.map((f) => this.enqueue(f.feed, () => this.resync(f, reason))));
  }

  /**
   * Makes the store's epoch the cluster's: adopts the one in Redis, or,
   * when Redis has none, creates it from this store's (when the store holds
   * state, which is then re-seeded, or when `create`, i.e. as the new
   * leader). Returns whether the epoch is confirmed.
   */
  async ensureEpoch(create: boolean): Promise<boolean> {
    const r = this.opts.redis;
    const k = this.opts.keys.epoch;
    let e = await r.sendCommand<string | null>(['GET', k], { timeout: this.opts.timeoutMs });
    if (e === null && (create || this.opts.store.size > 0)) {
      await r.sendCommand(['SET', k, this.opts.store.epoch, 'NX'], { timeout: this.opts.timeoutMs });
      e = await r.sendCommand<string | null>(['GET', k], { timeout: this.opts.timeoutMs });
      if (e === this.opts.store.epoch) this.opts.logger.info({ epoch: e, topics: this.opts.store.size }, 'cluster epoch set from this process');
    }
    if (e === null) return (this.confirmed = false);
    if (e !== this.opts.store.epoch) this.adopt(e);
    return (this.confirmed = true);
  }

  /** Resolves when every queued message and resync has been handled. */
  async idle(): Promise<void> {
    await Promise.all([...this.chains.values()]);
  }

  /** Runs `fn` after the feed's work under way (at once when there is none). */
  private enqueue(feed: string, fn: () => Promise<void>): Promise<void> {
    const prev = this.chains.get(feed);
    return this.follow(feed, prev === undefined ? fn() : prev.then(fn));
  }

  /** Makes `work` the feed's work under way until it settles; a failure is logged. */
  private follow(feed: string, work: Promise<void>): Promise<void> {
    const next: Promise<void> = work
      .catch((err: unknown) => {
        this.opts.logger.warn({ feed, err: (err as Error).message }, 'cluster mirror step failed; the next batch retries');
      })
      .finally(() => {
        if (this.chains.get(feed) === next) this.chains.delete(feed);
      });
    this.chains.set(feed, next);
    return next;
  }

  /** Switches to the cluster's epoch: the old seqs mean nothing there, so every feed reloads. */
  private adopt(epoch: string): void {
    this.opts.logger.info({ from: this.opts.store.epoch, to: epoch }, 'adopting the cluster epoch');
    this.opts.store.resetEpoch(epoch);
    this.lastId.clear();
    this.opts.metrics.resyncs.inc({ reason: 'epoch' });
    for (const f of ALL_FEEDS) void this.enqueue(f.feed, () => this.resync(f, 'epoch'));
  }

  /**
   * Applies a batch and emits its changes, in this call; what must wait for
   * Redis (an epoch to confirm, a gap to fill) is the promise returned.
   */
  private handle(f: FeedRef, m: BatchMessage): Promise<void> | undefined {
    const lease = this.opts.lease;
    if (lease.stale(m.gen)) {
      this.opts.metrics.events.inc({ outcome: 'fenced' }, m.frames.length);
      return undefined;
    }
    lease.seen(m.gen);
    if (m.epoch !== this.opts.store.epoch) {
      // A new epoch is adopted only when Redis holds it: a late batch of an old epoch is dropped.
      return this.ensureEpoch(false).then(() => undefined);
    }
    const last = this.lastId.get(f.feed);
    if (last !== undefined && m.prev !== last && compareIds(m.prev, last) > 0) return this.resync(f, 'gap');
    const prefix = f.feed.length + 1;
    const events: ChangeEvent[] = [];
    let gap = false;
    for (const frame of m.frames) {
      const c = decodeFrame(frame, prefix);
      const o = c === undefined ? ({ kind: 'gap' } as const) : this.opts.store.mirror(f.channel, f.market, c);
      this.opts.metrics.events.inc({ outcome: o.kind });
      if (o.kind === 'applied') events.push(o.event);
      else if (o.kind === 'gap') gap = true;
    }
    if (last === undefined || compareIds(m.last, last) > 0) this.lastId.set(f.feed, m.last);
    if (events.length) this.opts.emit({ channel: f.channel, market: f.market, ts: m.ts, events });
    if (!gap) return undefined;
    if (last !== undefined) this.lastId.set(f.feed, last);
    return this.resync(f, 'gap');
  }

  /**
   * Brings a feed up to Redis: replays the stream after the last applied
   * id (or, without one, reads the recent stream to refill rings), then
   * loads every topic the hash holds at a higher seq, announcing it with a
   * fresh snapshot. Topics this store holds at a higher seq than Redis
   * (Redis lost them) are written back under the same epoch.
   */
  private async resync(f: FeedRef, reason: string): Promise<void> {
    const r = this.opts.redis;
    const t = this.opts.timeoutMs;
    const hash = pairs(await r.sendCommand<string[]>(['HGETALL', this.opts.keys.state(f.feed)], { timeout: t }));
    const head = hash.get('~id') ?? '0-0';
    const from = this.lastId.get(f.feed);
    const log = this.opts.keys.log(f.feed);
    const changes =
      from !== undefined
        ? decodeStream(await r.sendCommand(['XRANGE', log, `(${from}`, head], { timeout: t }))
        : decodeStream(await r.sendCommand(['XREVRANGE', log, head, '-', 'COUNT', String(this.opts.loadCount)], { timeout: t })).reverse();
    const events: ChangeEvent[] = [];
    if (from !== undefined) this.replay(f, changes, events);
    const ahead = this.reconcile(f, hash, changes, events);
    this.lastId.set(f.feed, head);
    if (events.length) this.opts.emit({ channel: f.channel, market: f.market, ts: Date.now(), events });
    if (reason === 'gap') this.opts.metrics.resyncs.inc({ reason });
    if (ahead.length && this.confirmed) await this.reseed(f, ahead);
  }

  private replay(f: FeedRef, changes: readonly StreamChange[], events: ChangeEvent[]): void {
    const prefix = f.feed.length + 1;
    for (const s of changes) {
      const c = decodeFrame(s.frame, prefix);
      if (c === undefined) continue;
      const o = this.opts.store.mirror(f.channel, f.market, c);
      if (o.kind === 'applied') events.push(o.event);
    }
  }

  /** Loads topics Redis holds newer; returns the entries this store holds newer than Redis. */
  private reconcile(f: FeedRef, hash: ReadonlyMap<string, string>, changes: readonly StreamChange[], events: ChangeEvent[]): TopicEntry[] {
    const store = this.opts.store;
    const frames = new Map<string, [number, string][]>();
    for (const s of changes) {
      let list = frames.get(s.code);
      if (!list) frames.set(s.code, (list = []));
      list.push([s.seq, s.frame]);
    }
    for (const [code, v] of hash) {
      if (code === '~id') continue;
      const p = decodeEntry(v);
      if (p === undefined) continue;
      const e = store.entry(f.channel, f.market, code);
      if (e !== undefined && e.seq >= p.seq) continue;
      const n = store.load(f.channel, f.market, code, p, frames.get(code));
      events.push({ topic: n.topic, code, seq: n.seq, kind: 'snapshot', frame: store.snapshot(n), row: n.row });
    }
    const ahead: TopicEntry[] = [];
    for (const e of store.entries(f.channel, f.market)) {
      const v = hash.get(e.code);
      const p = v === undefined ? undefined : decodeEntry(v);
      if (p === undefined || p.seq < e.seq) ahead.push(e);
    }
    return ahead;
  }

  private async reseed(f: FeedRef, entries: readonly TopicEntry[]): Promise<void> {
    const args = [this.opts.store.epoch];
    for (const e of entries) args.push(e.code, String(e.seq), encodeEntry(e));
    const n = await RESEED.run<number>(this.opts.redis, [this.opts.keys.epoch, this.opts.keys.state(f.feed)], args, this.opts.timeoutMs * 4);
    if (n > 0) this.opts.logger.info({ feed: f.feed, topics: n }, 're-seeded shared state from memory');
  }
}
