import { EventEmitter } from 'eventemitter3';
import type { Logger } from '../log.js';
import type { Demand, DemandEvents, DemandView } from '../poller/demand.js';
import { WILDCARD, type Channel, type Market } from '../protocol/constants.js';
import { feedOf } from '../protocol/topics.js';
import { demandMember } from './codec.js';
import { ALL_FEEDS, type ClusterKeys, type FeedRef } from './keys.js';
import { READ_DEMAND, REGISTER_DEMAND, type Commander } from './scripts.js';
import { NO_WANT, demandDelta, sameWant, unionOf, type FeedWant } from './union.js';

/**
 * Cluster-wide demand. Each process registers its own subscriptions in one
 * sorted set per feed (members `code\tnode`, scored by an expiry in Redis
 * time, refreshed every period so a dead process's demand lapses), and
 * announces changes on the demand channel. The union of every process's
 * members and the local demand is the DemandView the leader's poller
 * follows: when the last subscriber anywhere leaves, the feed goes idle.
 */

/** Options of `ClusterDemand`. */
export interface ClusterDemandOptions {
  readonly redis: Commander;
  readonly keys: ClusterKeys;
  /** This process's id. */
  readonly node: string;
  /** This process's own demand (the gateway's sink). */
  readonly local: Demand;
  readonly logger: Logger;
  /** Re-registration and union refresh period, ms. */
  readonly refreshMs: number;
  /** Expiry of a registration, ms (a few refresh periods). */
  readonly ttlMs: number;
  /** Whether Redis is reachable now. */
  readonly isUp: () => boolean;
}

/** Registers local demand and follows the cluster's union. */
export class ClusterDemand implements DemandView {
  private readonly ee = new EventEmitter<DemandEvents>();
  private readonly want = new Map<string, FeedWant>();
  private readonly remote = new Map<string, readonly string[]>();
  private readonly registered = new Map<string, Set<string>>();
  private readonly dirty = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;
  private flushing: Promise<void> | undefined;

  /** A view that follows nothing until `start()`. */
  constructor(private readonly opts: ClusterDemandOptions) {}

  /** Follows local changes and refreshes every period. */
  start(): void {
    this.unsubscribe = this.opts.local.onChange((channel, market) => this.localChanged(channel, market));
    for (const f of ALL_FEEDS) this.recompute(f);
    this.timer = setInterval(() => void this.sync(), this.opts.refreshMs);
    this.timer.unref();
  }

  /** Stops following and withdraws this process's registrations. */
  async stop(): Promise<void> {
    this.unsubscribe?.();
    if (this.timer) clearInterval(this.timer);
    await this.flushing?.catch(() => undefined);
    const r = this.opts.redis;
    await Promise.all(
      [...this.registered]
        .filter(([, s]) => s.size > 0)
        .map(([feed, s]) => r.sendCommand(['ZREM', this.opts.keys.demand(feed), ...[...s].map((c) => demandMember(c, this.opts.node))]).catch(() => undefined)),
    );
    await this.announce([...this.registered.keys()]);
    this.registered.clear();
  }

  /** Codes wanted on a feed anywhere in the cluster (without the wildcard). */
  codes(channel: Channel, market: Market): ReadonlySet<string> {
    return (this.want.get(feedOf(channel, market)) ?? NO_WANT).codes;
  }

  /** Whether any process wants the whole market of a feed. */
  wildcard(channel: Channel, market: Market): boolean {
    return (this.want.get(feedOf(channel, market)) ?? NO_WANT).wildcard;
  }

  /** Whether any process wants anything of a feed. */
  active(channel: Channel, market: Market): boolean {
    const w = this.want.get(feedOf(channel, market)) ?? NO_WANT;
    return w.wildcard || w.codes.size > 0;
  }

  /** Subscribe to changes of the union; returns the remover. */
  onChange(handler: (channel: Channel, market: Market) => void): () => void {
    this.ee.on('change', handler);
    return () => void this.ee.off('change', handler);
  }

  /** Re-registers everything and re-reads the union (every period, and after Redis came back). */
  async sync(): Promise<void> {
    if (!this.opts.isUp()) return;
    for (const f of ALL_FEEDS) this.dirty.add(f.feed);
    await this.flush(true);
    await this.refresh();
  }

  /**
   * Re-reads the union of some feeds (default all), e.g. after another
   * process announced a change. Resolves whether the read succeeded (a
   * failed one keeps the last union until the next period).
   */
  async refresh(feeds: readonly FeedRef[] = ALL_FEEDS): Promise<boolean> {
    if (!this.opts.isUp()) return false;
    try {
      const keys = feeds.map((f) => this.opts.keys.demand(f.feed));
      const lists = await READ_DEMAND.run<string[][]>(this.opts.redis, keys, []);
      feeds.forEach((f, i) => {
        this.remote.set(f.feed, lists[i] ?? []);
        this.recompute(f);
      });
      return true;
    } catch (err) {
      this.opts.logger.debug({ err: (err as Error).message }, 'demand read failed');
      return false;
    }
  }

  private localChanged(channel: Channel, market: Market): void {
    const feed = feedOf(channel, market);
    this.dirty.add(feed);
    this.recompute({ channel, market, feed });
    void this.flush();
  }

  /** Codes this process wants on a feed, the wildcard as `*`. */
  private localWant(channel: Channel, market: Market): Set<string> {
    const s = new Set(this.opts.local.codes(channel, market));
    if (this.opts.local.wildcard(channel, market)) s.add(WILDCARD);
    return s;
  }

  private recompute(f: FeedRef): void {
    const local = { codes: this.opts.local.codes(f.channel, f.market), wildcard: this.opts.local.wildcard(f.channel, f.market) };
    const next = unionOf(this.remote.get(f.feed) ?? [], local);
    if (sameWant(next, this.want.get(f.feed) ?? NO_WANT)) return;
    this.want.set(f.feed, next);
    this.ee.emit('change', f.channel, f.market);
  }

  /** Writes the dirty feeds' registrations (`all`: every wanted member again, renewing expiries). */
  private flush(all = false): Promise<void> {
    const run = async (): Promise<void> => {
      await this.flushing?.catch(() => undefined);
      const changed: string[] = [];
      for (const f of ALL_FEEDS) {
        if (!this.dirty.has(f.feed)) continue;
        this.dirty.delete(f.feed);
        try {
          if (await this.write(f, all)) changed.push(f.feed);
        } catch (err) {
          this.dirty.add(f.feed);
          this.opts.logger.debug({ err: (err as Error).message, feed: f.feed }, 'demand registration failed');
        }
      }
      if (changed.length) await this.announce(changed);
    };
    const p = run();
    this.flushing = p;
    return p;
  }

  private async write(f: FeedRef, all: boolean): Promise<boolean> {
    const wanted = this.localWant(f.channel, f.market);
    const had = this.registered.get(f.feed) ?? new Set<string>();
    const { add, remove } = demandDelta(had, wanted);
    const key = this.opts.keys.demand(f.feed);
    const member = (c: string) => demandMember(c, this.opts.node);
    if (remove.length) await this.opts.redis.sendCommand(['ZREM', key, ...remove.map(member)]);
    const put = all ? [...wanted] : add;
    if (put.length) await REGISTER_DEMAND.run(this.opts.redis, [key], [String(this.opts.ttlMs), ...put.map(member)]);
    this.registered.set(f.feed, wanted);
    return add.length > 0 || remove.length > 0;
  }

  private async announce(feeds: string[]): Promise<void> {
    await Promise.all(feeds.map((feed) => this.opts.redis.sendCommand(['PUBLISH', this.opts.keys.demandChannel, feed]).catch(() => undefined)));
  }
}
