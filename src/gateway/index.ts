/**
 * The subscription index: who receives which topic. Fan-out reads it once
 * per event, so it stores delivery lists ready to iterate:
 * - per topic, the subscribers of that topic that do NOT also hold the
 *   feed's wildcard (so nobody gets an event twice, with no check per
 *   delivery);
 * - per feed (`channel.market`), the wildcard subscribers.
 * See docs/PROTOCOL.md §Subscriptions.
 */

import type { SmallSet } from './smallset.js';

/** What the index needs of a subscriber: its own record of its subscriptions. */
export interface Subscriber {
  /** Explicit topics, of every feed. */
  readonly explicit: SmallSet;
  /** Feeds subscribed whole (wildcard). */
  readonly wildcards: SmallSet;
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

/** One explicitly subscribed topic: its one shared string, how many hold it, and who gets its events directly. */
interface TopicSlot<S> {
  /** The topic; every subscriber's record holds this same string. */
  readonly topic: string;
  /** Its feed's key. */
  readonly feed: string;
  /** Subscribers holding the topic explicitly (with or without the feed's wildcard). */
  refs: number;
  /** Those of them without the feed's wildcard: the direct delivery list. */
  readonly direct: S[];
}

/**
 * Delivery lists by topic and by feed, kept in step with each subscriber's
 * own record. Lists are arrays, iterated per event with no iterator
 * object; removal is a swap with the last element (order is irrelevant).
 */
export class SubscriptionIndex<S extends Subscriber> {
  private readonly byTopic = new Map<string, TopicSlot<S>>();
  private readonly byFeed = new Map<string, S[]>();
  private readonly explicitByFeed = new Map<string, Set<S>>();
  private readonly feedKeys = new Map<string, string>();
  /** Distinct explicit topics per feed (the slots of `byTopic`), so `/status` counts none. */
  private readonly topicsByFeed = new Map<string, number>();

  /** Subscribers to deliver a topic's events to, besides the feed's wildcard subscribers. */
  direct(topic: string): readonly S[] | undefined {
    const d = this.byTopic.get(topic)?.direct;
    return d !== undefined && d.length > 0 ? d : undefined;
  }

  /** Wildcard subscribers of a feed. */
  wildcard(feed: string): readonly S[] | undefined {
    return this.byFeed.get(feed);
  }

  /** Whether `s` receives `topic` of `feed` (explicitly or by wildcard). */
  has(s: S, feed: string, topic: string): boolean {
    return s.wildcards.has(feed) || s.explicit.has(topic);
  }

  /**
   * Adds an explicit topic; false when `s` already had it. The subscriber's
   * record gets the index's string of the topic (the first one seen), so
   * many subscribers of one topic share one string.
   */
  addTopic(s: S, feed: string, topic: string): boolean {
    if (s.explicit.has(topic)) return false;
    let slot = this.byTopic.get(topic);
    const key = this.feedKey(feed);
    if (slot === undefined) {
      slot = { topic, feed: key, refs: 0, direct: [] };
      this.byTopic.set(topic, slot);
      this.topicsByFeed.set(key, (this.topicsByFeed.get(key) ?? 0) + 1);
    }
    s.explicit.add(slot.topic);
    addToSet(this.explicitByFeed, key, s);
    slot.refs++;
    if (!s.wildcards.has(feed)) slot.direct.push(s);
    return true;
  }

  /** Removes an explicit topic; false when `s` did not have it. */
  removeTopic(s: S, feed: string, topic: string): boolean {
    if (!s.explicit.delete(topic)) return false;
    if (!holdsTopicOf(s, feed)) removeFromSet(this.explicitByFeed, feed, s);
    const slot = this.byTopic.get(topic);
    if (slot !== undefined) {
      removeFromList(slot.direct, s);
      if (--slot.refs <= 0) this.dropSlot(slot);
    }
    return true;
  }

  /** Adds a feed's wildcard; the subscriber's explicit topics of the feed stop being delivered separately. */
  addWildcard(s: S, feed: string): boolean {
    if (s.wildcards.has(feed)) return false;
    const key = this.feedKey(feed);
    s.wildcards.add(key);
    let list = this.byFeed.get(key);
    if (list === undefined) this.byFeed.set(key, (list = []));
    list.push(s);
    for (const t of topicsOf(s, feed)) {
      const slot = this.byTopic.get(t);
      if (slot !== undefined) removeFromList(slot.direct, s);
    }
    return true;
  }

  /** Removes a feed's wildcard; the subscriber's explicit topics of the feed are delivered again. */
  removeWildcard(s: S, feed: string): boolean {
    if (!s.wildcards.delete(feed)) return false;
    const list = this.byFeed.get(feed);
    if (list !== undefined) {
      removeFromList(list, s);
      if (list.length === 0) this.byFeed.delete(feed);
    }
    for (const t of topicsOf(s, feed)) this.byTopic.get(t)?.direct.push(s);
    return true;
  }

  /**
   * Removes every subscription of `s`; returns what it held (explicit
   * topics and wildcard feeds), so demand can be released.
   */
  removeAll(s: S): { topics: string[]; wildcards: string[] } {
    const wildcards = [...s.wildcards];
    for (const f of wildcards) this.removeWildcard(s, f);
    const topics = [...s.explicit];
    for (const t of topics) {
      s.explicit.delete(t);
      const slot = this.byTopic.get(t);
      if (slot === undefined) continue;
      removeFromList(slot.direct, s);
      if (--slot.refs <= 0) this.dropSlot(slot);
    }
    for (const [feed, set] of this.explicitByFeed) {
      if (set.delete(s) && set.size === 0) this.explicitByFeed.delete(feed);
    }
    return { topics, wildcards };
  }

  /** Forgets a topic no one holds explicitly any more. */
  private dropSlot(slot: TopicSlot<S>): void {
    this.byTopic.delete(slot.topic);
    const n = (this.topicsByFeed.get(slot.feed) ?? 0) - 1;
    if (n > 0) this.topicsByFeed.set(slot.feed, n);
    else this.topicsByFeed.delete(slot.feed);
  }

  /** The index's one string of a feed key, so subscribers' records share it. */
  private feedKey(feed: string): string {
    const known = this.feedKeys.get(feed);
    if (known !== undefined) return known;
    this.feedKeys.set(feed, feed);
    return feed;
  }

  /** Every subscriber of a feed (explicit or wildcard), each once. */
  *subscribersOf(feed: string): IterableIterator<S> {
    const wild = this.byFeed.get(feed);
    if (wild) yield* wild;
    for (const s of this.explicitByFeed.get(feed) ?? []) if (!s.wildcards.has(feed)) yield s;
  }

  /** Distinct subscribed topics: explicit topics plus one per wildcard-subscribed feed. */
  get topicCount(): number {
    return this.byTopic.size + this.byFeed.size;
  }

  /** Subscribers per feed: counted per feed's subscribers, whatever the number of topics. */
  feeds(): Record<string, FeedSubscribers> {
    const out: Record<string, FeedSubscribers> = {};
    const keys = new Set([...this.byFeed.keys(), ...this.explicitByFeed.keys()]);
    for (const feed of keys) {
      const topics = this.topicsByFeed.get(feed) ?? 0;
      let sessions = 0;
      for (const _ of this.subscribersOf(feed)) sessions++;
      out[feed] = { sessions, wildcards: this.byFeed.get(feed)?.length ?? 0, topics };
    }
    return out;
  }
}

function addToSet<K, V>(m: Map<K, Set<V>>, k: K, v: V): void {
  let s = m.get(k);
  if (s === undefined) {
    s = new Set();
    m.set(k, s);
  }
  s.add(v);
}

function removeFromSet<K, V>(m: Map<K, Set<V>>, k: K, v: V): void {
  const s = m.get(k);
  if (s === undefined) return;
  s.delete(v);
  if (s.size === 0) m.delete(k);
}

/** The explicit topics `s` holds of `feed` (`feed.` prefix). */
function* topicsOf(s: Subscriber, feed: string): IterableIterator<string> {
  const prefix = feed + '.';
  for (const t of [...s.explicit]) if (t.startsWith(prefix)) yield t;
}

/** Whether `s` still holds an explicit topic of `feed`. */
function holdsTopicOf(s: Subscriber, feed: string): boolean {
  const prefix = feed + '.';
  for (const t of s.explicit) if (t.startsWith(prefix)) return true;
  return false;
}

/** Removes `v` from an unordered list by moving the last element into its place. */
function removeFromList<V>(list: V[], v: V): void {
  const i = list.indexOf(v);
  if (i < 0) return;
  const last = list.pop()!;
  if (i < list.length) list[i] = last;
}
