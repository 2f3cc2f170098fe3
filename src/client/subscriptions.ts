import type { Channel, Market } from '../protocol/constants.js';
import { WILDCARD } from '../protocol/constants.js';
import { feedOf, type TopicParts } from '../protocol/topics.js';

/**
 * What the application wants to receive, per feed (channel, market): the
 * whole market and/or explicit codes. Kept across reconnects and replayed as
 * one `subscribe` per feed after each `welcome`. Pure bookkeeping, no I/O.
 * See docs/PROTOCOL.md §4 and §8 (resume).
 */

/** One feed's subscriptions. */
export interface FeedSubscription {
  readonly channel: Channel;
  readonly market: Market;
  /** Whether the whole market (`*`) is subscribed. */
  readonly wildcard: boolean;
  /** Explicitly subscribed codes. */
  readonly codes: readonly string[];
}

/** What one `add` changed, so a refused subscribe can be undone exactly. */
export interface Added {
  readonly wildcard: boolean;
  readonly codes: readonly string[];
}

/** One `subscribe` message's worth of codes. */
export interface SubscribePlan {
  readonly channel: Channel;
  readonly market: Market;
  readonly codes: readonly string[];
}

interface Feed {
  readonly channel: Channel;
  readonly market: Market;
  wildcard: boolean;
  readonly codes: Set<string>;
}

/** Most codes the protocol accepts in one `subscribe`. */
export const MAX_CODES_PER_MESSAGE = 1000;

/** The subscriptions of a client, by feed. */
export class Subscriptions {
  private readonly feeds = new Map<string, Feed>();

  /** Adds codes (or the wildcard); returns what was not already there. */
  add(channel: Channel, market: Market, codes: readonly string[]): Added {
    const f = this.feed(channel, market);
    let wildcard = false;
    const added: string[] = [];
    for (const c of codes) {
      if (c === WILDCARD) {
        if (!f.wildcard) wildcard = f.wildcard = true;
      } else if (!f.codes.has(c)) {
        f.codes.add(c);
        added.push(c);
      }
    }
    return { wildcard, codes: added };
  }

  /** Removes codes (or the wildcard); a feed left empty is forgotten. */
  remove(channel: Channel, market: Market, codes: readonly string[]): void {
    const key = feedOf(channel, market);
    const f = this.feeds.get(key);
    if (f === undefined) return;
    for (const c of codes) {
      if (c === WILDCARD) f.wildcard = false;
      else f.codes.delete(c);
    }
    if (!f.wildcard && f.codes.size === 0) this.feeds.delete(key);
  }

  /** Undoes an `add` the server refused. */
  revert(channel: Channel, market: Market, added: Added): void {
    this.remove(channel, market, added.wildcard ? [WILDCARD, ...added.codes] : added.codes);
  }

  /** Whether a topic is wanted: its feed has the wildcard or its code. */
  covers(parts: TopicParts): boolean {
    const f = this.feeds.get(feedOf(parts.channel, parts.market));
    return f !== undefined && (f.wildcard || f.codes.has(parts.code));
  }

  /** Whether anything of a feed (a code or `*`) is subscribed. */
  holds(channel: Channel, market: Market): boolean {
    return this.feeds.has(feedOf(channel, market));
  }

  /** Whether a code (or `*`) of a feed is subscribed. */
  has(channel: Channel, market: Market, code: string): boolean {
    const f = this.feeds.get(feedOf(channel, market));
    if (f === undefined) return false;
    return code === WILDCARD ? f.wildcard : f.codes.has(code);
  }

  /** Every feed's subscriptions. */
  list(): FeedSubscription[] {
    return [...this.feeds.values()].map((f) => ({
      channel: f.channel,
      market: f.market,
      wildcard: f.wildcard,
      codes: [...f.codes],
    }));
  }

  /**
   * The `subscribe` messages that restore every feed after a reconnect: per
   * feed, one for the wildcard and one per 1000 explicit codes (one message
   * for a typical feed). `skip` leaves out what requests still in flight
   * will subscribe themselves.
   */
  plan(skip: (channel: Channel, market: Market, code: string) => boolean = () => false): SubscribePlan[] {
    const out: SubscribePlan[] = [];
    for (const f of this.feeds.values()) {
      if (f.wildcard && !skip(f.channel, f.market, WILDCARD)) out.push({ channel: f.channel, market: f.market, codes: [WILDCARD] });
      const codes = [...f.codes].filter((c) => !skip(f.channel, f.market, c));
      for (let i = 0; i < codes.length; i += MAX_CODES_PER_MESSAGE) {
        out.push({ channel: f.channel, market: f.market, codes: codes.slice(i, i + MAX_CODES_PER_MESSAGE) });
      }
    }
    return out;
  }

  private feed(channel: Channel, market: Market): Feed {
    const key = feedOf(channel, market);
    let f = this.feeds.get(key);
    if (f === undefined) {
      f = { channel, market, wildcard: false, codes: new Set() };
      this.feeds.set(key, f);
    }
    return f;
  }
}
