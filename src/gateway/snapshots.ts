import type { Channel, Market } from '../protocol/constants.js';
import { feedOf, parseTopic } from '../protocol/topics.js';
import type { StateStore, TopicEntry } from '../state/store.js';
import type { ChangeClock } from './clock.js';
import type { SubscriptionIndex } from './index.js';
import { parseFeed } from './requests.js';
import type { Session } from './session.js';

/**
 * Messages made one by one as a connection's socket takes them, so a whole
 * market is never held for one connection: the snapshots a behind
 * connection is owed (computed from the change clock), and the state sent
 * after `subscribed`. Frames come from the store's per-seq cache, so this
 * is cheap even for a whole market. See docs/PROTOCOL.md §7.
 */

/**
 * How many seqs a resuming client may be ahead of this process's state of
 * a topic and still be sent only the patches after its own seq. In a
 * cluster a client can move to a process that has not yet received the
 * last rounds the one it left had sent it; further ahead, a fresh
 * snapshot follows instead.
 */
export const MAX_AHEAD = 3;

/** Whether a client resuming a topic at seq `held` is ahead of this process's entry by at most `MAX_AHEAD`. */
export function aheadOf(e: TopicEntry, held: number): boolean {
  return held > e.seq && held - e.seq <= MAX_AHEAD;
}

/**
 * Fresh snapshots of the topics `s` receives whose last change is in batch
 * `since` or later: each wildcard feed's entries, then explicit topics
 * outside those feeds. A subscription dropped meanwhile is skipped from
 * then on; topics without state are skipped.
 */
export function* owedSnapshots(
  store: StateStore,
  index: SubscriptionIndex<Session>,
  clock: ChangeClock,
  s: Session,
  since: number,
): Generator<string, void, undefined> {
  // Copies: the subscriptions may change between two messages (at most maxWildcards and maxTopics entries).
  const feeds = [...s.wildcards];
  for (const feed of feeds) {
    const f = parseFeed(feed);
    for (const e of store.entries(f.channel, f.market)) {
      if (!clock.changedSince(e.topic, since)) continue;
      if (!s.wildcards.has(feed)) break;
      yield store.snapshot(e);
    }
  }
  if (s.explicit.size === 0) return;
  for (const t of [...s.explicit]) {
    if (!clock.changedSince(t, since)) continue;
    const p = parseTopic(t);
    if (p === undefined) continue;
    const feed = feedOf(p.channel, p.market);
    if (s.wildcards.has(feed) || !index.has(s, feed, t)) continue;
    const e = store.entry(p.channel, p.market, p.code);
    if (e !== undefined) yield store.snapshot(e);
  }
}

/** What `subscribeState` sends after `subscribed`. */
export interface SubscribeState {
  readonly session: Session;
  readonly store: StateStore;
  readonly index: SubscriptionIndex<Session>;
  readonly channel: Channel;
  readonly market: Market;
  /** Codes subscribed explicitly; undefined for the whole feed. */
  readonly codes: readonly string[] | undefined;
  /** Per topic, the seq the client holds (a resume in this server's epoch). */
  readonly since: Readonly<Record<string, number>> | undefined;
  /** The feed's `status` message when the client subscribed, if known then. */
  readonly status: string | undefined;
  /** Counts messages sent, by type. */
  sent(type: string, n: number): void;
}

/** The entries a subscription names: the whole feed's, or those of its codes (undefined where the store has none). */
function* entriesOf(a: SubscribeState): Generator<TopicEntry | undefined, void, undefined> {
  if (a.codes === undefined) yield* a.store.entries(a.channel, a.market);
  else for (const c of a.codes) yield a.store.entry(a.channel, a.market, c);
}

/**
 * `subscribed`, then per topic the patches it missed (a resume whose
 * patches are still buffered), nothing (a resume at or a little ahead of
 * this process's seq: the patches after it follow live) or a fresh
 * snapshot, then the feed's status: each made when the connection is ready
 * to write it, from the state of that moment. A topic unsubscribed
 * meanwhile is skipped.
 */
export function* subscribeState(first: string, a: SubscribeState): Generator<string, void, undefined> {
  let snapshots = 0;
  let patches = 0;
  let statuses = 0;
  try {
    yield first;
    const feed = feedOf(a.channel, a.market);
    for (const e of entriesOf(a)) {
      if (e === undefined || !a.index.has(a.session, feed, e.topic)) continue;
      const held = a.since?.[e.topic];
      const missed = held === undefined ? undefined : aheadOf(e, held) ? [] : a.store.replay(e, held);
      if (missed === undefined) {
        // The snapshot is the client's state from now on, whatever seq a resume said it held.
        if (a.session.ahead !== undefined) a.session.forgetAhead(e.topic);
        snapshots++;
        yield a.store.snapshot(e);
      } else
        for (const f of missed) {
          patches++;
          yield f;
        }
    }
    if (a.status !== undefined) {
      statuses++;
      yield a.status;
    }
  } finally {
    a.sent('subscribed', 1);
    if (snapshots) a.sent('snapshot', snapshots);
    if (patches) a.sent('patch', patches);
    if (statuses) a.sent('status', statuses);
  }
}
