import type { Bus, FeedStatus } from '../bus/bus.js';
import type { Channel, Market } from '../protocol/constants.js';
import { feedOf } from '../protocol/topics.js';

/**
 * The latest state of every feed, as published on the bus. Gateways read it
 * to send `status` on subscribe; `/status` reports it. Fed by the bus, so it
 * is the same on every process of a cluster.
 */
export class StatusBoard {
  private readonly latest = new Map<string, FeedStatus>();
  private readonly unsubscribe: () => void;

  /** A board that follows `bus` until closed. */
  constructor(bus: Bus) {
    this.unsubscribe = bus.subscribe('status', (s) => this.latest.set(feedOf(s.channel, s.market), s));
  }

  /** The latest state of a feed, if any was published. */
  get(channel: Channel, market: Market): FeedStatus | undefined {
    return this.latest.get(feedOf(channel, market));
  }

  /** Every feed's latest state. */
  all(): FeedStatus[] {
    return [...this.latest.values()];
  }

  /** Stops following the bus. */
  close(): void {
    this.unsubscribe();
  }
}
