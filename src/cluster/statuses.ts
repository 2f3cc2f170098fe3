import type { FeedStatus } from '../bus/bus.js';
import type { Channel, Market } from '../protocol/constants.js';
import { feedOf } from '../protocol/topics.js';
import { ALL_FEEDS } from './keys.js';

/**
 * Feed states in a cluster process: the latest the leader published, or
 * `degraded` for every feed while its backplane is down (clients are told
 * once when it goes down, on subscribe while it stays down, and get the
 * real states back when it returns).
 */

/** Reason carried by `degraded` states. */
export const DEGRADED_REASON = 'cluster backplane (Redis) unavailable; data may lag';

/** The `degraded` state of a feed at `ts`. */
export function degradedStatus(channel: Channel, market: Market, ts: number): FeedStatus {
  return { channel, market, state: 'degraded', intervalMs: 0, reason: DEGRADED_REASON, ts };
}

/** Latest feed states, with the backplane's health laid over them. */
export class FeedStates {
  private readonly latest = new Map<string, FeedStatus>();
  private degradedAt: number | undefined;

  /** States delivered through `deliver`. */
  constructor(
    private readonly deliver: (status: FeedStatus) => void,
    private readonly now: () => number,
  ) {}

  /** Whether the backplane is reported down. */
  get degraded(): boolean {
    return this.degradedAt !== undefined;
  }

  /** A state the leader published: kept, and delivered unless degraded. */
  record(status: FeedStatus): void {
    this.latest.set(feedOf(status.channel, status.market), status);
    if (this.degradedAt === undefined) this.deliver(status);
  }

  /** The backplane went down: every feed is delivered as degraded (to its subscribers). */
  down(): void {
    if (this.degradedAt !== undefined) return;
    this.degradedAt = this.now();
    for (const s of this.current()) this.deliver(s);
  }

  /** The backplane is back with `shared` states (from Redis): they replace the degraded ones. */
  up(shared: readonly FeedStatus[]): void {
    for (const s of shared) this.latest.set(feedOf(s.channel, s.market), s);
    if (this.degradedAt === undefined) return;
    this.degradedAt = undefined;
    for (const s of shared) this.deliver(s);
  }

  /** Every feed's current state as this process reports it (every feed, while degraded). */
  current(): FeedStatus[] {
    const at = this.degradedAt;
    if (at === undefined) return [...this.latest.values()];
    return ALL_FEEDS.map((f) => degradedStatus(f.channel, f.market, at));
  }
}
