import { feedOf, parseTopic } from '../protocol/topics.js';
import type { StateStore } from '../state/store.js';
import type { SubscriptionIndex } from './index.js';
import { parseFeed } from './requests.js';
import type { Session } from './session.js';

/**
 * Snapshot frames owed to a session that fell behind and drained: of the
 * topics it marked dirty, or of everything it receives. Frames come from
 * the store's per-seq cache, so this is cheap even for a whole market.
 */

/**
 * Snapshot frames of `topics` that `s` still receives, or of every topic
 * it receives (each wildcard feed's entries, then explicit topics outside
 * those feeds) when `topics` is undefined. Topics without state are skipped.
 */
export function snapshotFrames(
  store: StateStore,
  index: SubscriptionIndex<Session>,
  s: Session,
  topics: Iterable<string> | undefined,
): string[] {
  const out: string[] = [];
  if (topics === undefined) {
    for (const feed of s.wildcards) {
      const f = parseFeed(feed);
      for (const e of store.entries(f.channel, f.market)) out.push(store.snapshot(e));
    }
  }
  const list = topics ?? [...s.explicit].filter((t) => !s.wildcards.has(t.slice(0, t.lastIndexOf('.'))));
  for (const t of list) {
    const p = parseTopic(t);
    if (p === undefined || !index.has(s, feedOf(p.channel, p.market), t)) continue;
    const e = store.entry(p.channel, p.market, p.code);
    if (e !== undefined) out.push(store.snapshot(e));
  }
  return out;
}
