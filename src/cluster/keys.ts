import { CHANNELS, MARKETS, type Channel, type Market } from '../protocol/constants.js';
import { feedOf } from '../protocol/topics.js';

/**
 * Names of every Redis key and pub/sub channel a cluster uses, all under
 * one prefix (REDIS_PREFIX, default `krx:`) so several clusters (or test
 * runs) can share one Redis. See docs/DEPLOYMENT.md §Redis keys.
 */

/** The key and channel names of one cluster. */
export interface ClusterKeys {
  readonly prefix: string;
  /** String: the cluster-wide epoch (SET NX once). */
  readonly epoch: string;
  /** String: the poller lease, holding the owner's node id (PX). */
  readonly lease: string;
  /** Integer: the fencing generation (INCR on every acquisition). */
  readonly gen: string;
  /** Hash: latest state of every feed, `channel.market` → FeedStatus JSON. */
  readonly status: string;
  /** Hash: the shared daily call budget (limit, remaining, resetAt, observedAt). */
  readonly budget: string;
  /** Channel: feed states published by the leader. */
  readonly statusChannel: string;
  /** Channel: a process changed its demand of a feed (message: `channel.market`). */
  readonly demandChannel: string;
  /** Channel: the lease was released (graceful stop), contenders may try at once. */
  readonly leaseChannel: string;
  /** Channel: a poll round's batch messages follow (message: `gen n`, published just before the round's `n` batches). */
  readonly roundChannel: string;
  /** Hash per feed: code → `seq ts crc rowJSON`, plus `~id`, the last stream id. */
  state(feed: string): string;
  /** Stream per feed: one entry per change (`c` code, `s` seq, `f` frame), capped. */
  log(feed: string): string;
  /** Channel per feed: change batches. */
  events(feed: string): string;
  /** Sorted set per feed: `code\tnode` members scored by their expiry (Redis time, ms). */
  demand(feed: string): string;
  /** String: a shared on-demand result (PX). */
  cache(key: string): string;
  /** String: the single-flight lock of an on-demand key (PX). */
  lock(key: string): string;
  /** Integer: on-demand calls of the budget day ending at `dayEnd` (ms epoch), cluster-wide (PEXPIREAT). */
  allowance(dayEnd: number): string;
}

/** The names under `prefix`. */
export function clusterKeys(prefix: string): ClusterKeys {
  const p = prefix;
  return {
    prefix: p,
    epoch: `${p}epoch`,
    lease: `${p}lease`,
    gen: `${p}gen`,
    status: `${p}status`,
    budget: `${p}budget`,
    statusChannel: `${p}ch:status`,
    demandChannel: `${p}ch:demand`,
    leaseChannel: `${p}ch:lease`,
    roundChannel: `${p}ch:round`,
    state: (feed) => `${p}state:${feed}`,
    log: (feed) => `${p}log:${feed}`,
    events: (feed) => `${p}ch:ev:${feed}`,
    demand: (feed) => `${p}demand:${feed}`,
    cache: (key) => `${p}cache:${key}`,
    lock: (key) => `${p}lock:${key}`,
    allowance: (dayEnd) => `${p}allowance:${dayEnd}`,
  };
}

/** One feed: its channel, market and `channel.market` key. */
export interface FeedRef {
  readonly channel: Channel;
  readonly market: Market;
  readonly feed: string;
}

/** Every feed (channel × market), in a fixed order. */
export const ALL_FEEDS: readonly FeedRef[] = CHANNELS.flatMap((channel) => MARKETS.map((market) => ({ channel, market, feed: feedOf(channel, market) })));
