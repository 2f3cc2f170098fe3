/**
 * The subscription index: who receives which topic. Fan-out reads it once
 * per event, so it stores delivery sets ready to iterate:
 * - per topic, the subscribers of that topic that do NOT also hold the
 *   feed's wildcard (so nobody gets an event twice, with no check per
 *   delivery);
 * - per feed (`channel.market`), the wildcard subscribers.
 * See docs/PROTOCOL.md §Subscriptions.
 */

/** What the index needs of a subscriber: its own record of its subscriptions. */
export interface Subscriber {
  /** Explicit topics per feed. */
  readonly explicit: Map<string, Set<string>>;
  /** Feeds subscribed whole (wildcard). */
  readonly wildcards: Set<string>;
}

/** Subscribers of one feed, for `/status`. */
export interface FeedSubscribers {
  /** Connections subscribed to the feed (explicitly or by wildcard). */
  readonly sessions: number;
  /** Connections holding the feed's wildcard. */
  readonly wildcards: number;
  /** Distinct explicit topics of the feed. */
  readonly topics: number;
}

/** Delivery sets by topic and by feed, kept in step with each subscriber's own record. */
export class SubscriptionIndex<S extends Subscriber> {
  private readonly byTopic = new Map<string, Set<S>>();
  private readonly byFeed = new Map<string, Set<S>>();
  private readonly explicitByFeed = new Map<string, Set<S>>();
  private readonly topicRefs = new Map<string, number>();

  /** Subscribers to deliver a topic's events to, besides the feed's wildcard subscribers. */
  direct(topic: string): ReadonlySet<S> | undefined {
    return this.byTopic.get(topic);
  }

  /** Wildcard subscribers of a feed. */
  wildcard(feed: string): ReadonlySet<S> | undefined {
    return this.byFeed.get(feed);
  }

  /** Whether `s` receives `topic` of `feed` (explicitly or by wildcard). */
  has(s: S, feed: string, topic: string): boolean {
    return s.wildcards.has(feed) || (s.explicit.get(feed)?.has(topic) ?? false);
  }

  /** Adds an explicit topic; false when `s` already had it. */
  addTopic(s: S, feed: string, topic: string): boolean {
    let mine = s.explicit.get(feed);
    if (mine === undefined) {
      mine = new Set();
      s.explicit.set(feed, mine);
      add(this.explicitByFeed, feed, s);
    }
    if (mine.has(topic)) return false;
    mine.add(topic);
    this.topicRefs.set(topic, (this.topicRefs.get(topic) ?? 0) + 1);
    if (!s.wildcards.has(feed)) add(this.byTopic, topic, s);
    return true;
  }

  /** Removes an explicit topic; false when `s` did not have it. */
  removeTopic(s: S, feed: string, topic: string): boolean {
    const mine = s.explicit.get(feed);
    if (mine === undefined || !mine.delete(topic)) return false;
    if (mine.size === 0) {
      s.explicit.delete(feed);
      remove(this.explicitByFeed, feed, s);
    }
    const n = this.topicRefs.get(topic) ?? 0;
    if (n <= 1) this.topicRefs.delete(topic);
    else this.topicRefs.set(topic, n - 1);
    remove(this.byTopic, topic, s);
    return true;
  }

  /** Adds a feed's wildcard; the subscriber's explicit topics of the feed stop being delivered separately. */
  addWildcard(s: S, feed: string): boolean {
    if (s.wildcards.has(feed)) return false;
    s.wildcards.add(feed);
    add(this.byFeed, feed, s);
    for (const t of s.explicit.get(feed) ?? []) remove(this.byTopic, t, s);
    return true;
  }

  /** Removes a feed's wildcard; the subscriber's explicit topics of the feed are delivered again. */
  removeWildcard(s: S, feed: string): boolean {
    if (!s.wildcards.delete(feed)) return false;
    remove(this.byFeed, feed, s);
    for (const t of s.explicit.get(feed) ?? []) add(this.byTopic, t, s);
    return true;
  }

  /**
   * Removes every subscription of `s`; returns what it held (explicit
   * topics and wildcard feeds), so demand can be released.
   */
  removeAll(s: S): { topics: string[]; wildcards: string[] } {
    const wildcards = [...s.wildcards];
    for (const f of wildcards) this.removeWildcard(s, f);
    const topics: string[] = [];
    for (const [feed, set] of [...s.explicit]) {
      for (const t of [...set]) {
        this.removeTopic(s, feed, t);
        topics.push(t);
      }
    }
    return { topics, wildcards };
  }

  /** Every subscriber of a feed (explicit or wildcard), each once. */
  *subscribersOf(feed: string): IterableIterator<S> {
    const wild = this.byFeed.get(feed);
    if (wild) yield* wild;
    for (const s of this.explicitByFeed.get(feed) ?? []) if (!wild?.has(s)) yield s;
  }

  /** Distinct subscribed topics: explicit topics plus one per wildcard-subscribed feed. */
  get topicCount(): number {
    return this.topicRefs.size + this.byFeed.size;
  }

  /** Subscribers per feed. */
  feeds(): Record<string, FeedSubscribers> {
    const out: Record<string, FeedSubscribers> = {};
    const keys = new Set([...this.byFeed.keys(), ...this.explicitByFeed.keys()]);
    for (const feed of keys) {
      let topics = 0;
      const prefix = feed + '.';
      for (const t of this.topicRefs.keys()) if (t.startsWith(prefix)) topics++;
      let sessions = 0;
      for (const _ of this.subscribersOf(feed)) sessions++;
      out[feed] = { sessions, wildcards: this.byFeed.get(feed)?.size ?? 0, topics };
    }
    return out;
  }
}

function add<K, V>(m: Map<K, Set<V>>, k: K, v: V): void {
  let s = m.get(k);
  if (s === undefined) {
    s = new Set();
    m.set(k, s);
  }
  s.add(v);
}

function remove<K, V>(m: Map<K, Set<V>>, k: K, v: V): void {
  const s = m.get(k);
  if (s === undefined) return;
  s.delete(v);
  if (s.size === 0) m.delete(k);
}
