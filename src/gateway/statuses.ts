import type { FeedStatus } from '../bus/bus.js';
import type { Channel, Market } from '../protocol/constants.js';
import { feedOf } from '../protocol/topics.js';
import { statusFrame } from '../protocol/encode.js';

/**
 * The current state of each feed, for the `status` sent with a
 * subscription: from the injected provider (the poller) when there is one,
 * else the last state seen on the bus (e.g. a process that does not poll).
 */
export class StatusBoard {
  private readonly last = new Map<string, FeedStatus>();

  /** A board reading `provider` first (e.g. `() => poller.statuses()`). */
  constructor(private readonly provider?: () => Iterable<FeedStatus>) {}

  /** Records a state seen on the bus. */
  record(st: FeedStatus): void {
    this.last.set(feedOf(st.channel, st.market), st);
  }

  /**
   * The serialised `status` message of a feed, if its state is known and
   * says something to a new subscriber: not `idle` (nobody subscribed),
   * which the subscription asking for it ends; the state the feed wakes
   * into follows as soon as it does.
   */
  frame(channel: Channel, market: Market): string | undefined {
    const st = this.current(channel, market);
    return st === undefined || st.state === 'idle' ? undefined : statusFrame(st);
  }

  private current(channel: Channel, market: Market): FeedStatus | undefined {
    if (this.provider !== undefined) {
      for (const st of this.provider()) if (st.channel === channel && st.market === market) return st;
    }
    return this.last.get(feedOf(channel, market));
  }
}
