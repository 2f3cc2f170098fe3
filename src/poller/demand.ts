import { EventEmitter } from 'eventemitter3';
import type { Channel, Market } from '../protocol/constants.js';
import { WILDCARD } from '../protocol/constants.js';
import { feedOf } from '../protocol/topics.js';

/**
 * What subscribers want: reference counts per (channel, market, code), the
 * wildcard counting as a code. The gateway adds and removes; the poller
 * reads. A feed with no demand is not polled.
 */

/** Events of `Demand`. */
export interface DemandEvents {
  /** The set of wanted codes of a feed changed (`channel.market`). */
  change: (channel: Channel, market: Market) => void;
}

/** Read side of demand, as the poller sees it (local or cluster-wide). */
export interface DemandView {
  /** Codes wanted on a feed (without the wildcard). */
  codes(channel: Channel, market: Market): ReadonlySet<string>;
  /** Whether anyone wants the whole market of a feed. */
  wildcard(channel: Channel, market: Market): boolean;
  /** Whether anyone wants anything of a feed. */
  active(channel: Channel, market: Market): boolean;
  /** Subscribe to changes; returns the remover. */
  onChange(handler: (channel: Channel, market: Market) => void): () => void;
}

interface FeedDemand {
  readonly counts: Map<string, number>;
  readonly codes: Set<string>;
  wildcards: number;
}

/** Reference-counted local demand. */
export class Demand implements DemandView {
  private readonly ee = new EventEmitter<DemandEvents>();
  private readonly feeds = new Map<string, FeedDemand>();

  /** Counts one more subscriber of `code` (or `*`) on a feed. */
  add(channel: Channel, market: Market, code: string): void {
    this.addAll(channel, market, [code]);
  }

  /** Counts one subscriber fewer; a code at zero is no longer wanted. */
  remove(channel: Channel, market: Market, code: string): void {
    this.removeAll(channel, market, [code]);
  }

  /**
   * Counts one more subscriber of each code (or `*`) on a feed; emits
   * `change` once when any became wanted (one subscribe of many codes is
   * one change).
   */
  addAll(channel: Channel, market: Market, codes: Iterable<string>): void {
    const f = this.feed(channel, market);
    let changed = false;
    for (const code of codes) {
      if (code === WILDCARD) {
        if (++f.wildcards === 1) changed = true;
        continue;
      }
      const n = (f.counts.get(code) ?? 0) + 1;
      f.counts.set(code, n);
      if (n === 1) {
        f.codes.add(code);
        changed = true;
      }
    }
    if (changed) this.ee.emit('change', channel, market);
  }

  /** Counts one subscriber fewer of each code (or `*`) on a feed; emits `change` once when any is no longer wanted. */
  removeAll(channel: Channel, market: Market, codes: Iterable<string>): void {
    const f = this.feeds.get(feedOf(channel, market));
    if (!f) return;
    let changed = false;
    for (const code of codes) {
      if (code === WILDCARD) {
        if (f.wildcards === 0) continue;
        if (--f.wildcards === 0) changed = true;
        continue;
      }
      const n = f.counts.get(code);
      if (n === undefined) continue;
      if (n > 1) f.counts.set(code, n - 1);
      else {
        f.counts.delete(code);
        f.codes.delete(code);
        changed = true;
      }
    }
    if (changed) this.ee.emit('change', channel, market);
  }

  /** Codes wanted on a feed (without the wildcard). */
  codes(channel: Channel, market: Market): ReadonlySet<string> {
    return this.feeds.get(feedOf(channel, market))?.codes ?? EMPTY;
  }

  /** Whether anyone wants the whole market of a feed. */
  wildcard(channel: Channel, market: Market): boolean {
    return (this.feeds.get(feedOf(channel, market))?.wildcards ?? 0) > 0;
  }

  /** Whether anyone wants anything of a feed. */
  active(channel: Channel, market: Market): boolean {
    const f = this.feeds.get(feedOf(channel, market));
    return f !== undefined && (f.wildcards > 0 || f.codes.size > 0);
  }

  /** Every (channel, market, code) with demand, the wildcard as `*` (for sharing across processes). */
  *entries(): IterableIterator<[string, string]> {
    for (const [feed, f] of this.feeds) {
      if (f.wildcards > 0) yield [feed, WILDCARD];
      for (const c of f.codes) yield [feed, c];
    }
  }

  /** Subscribe to changes; returns the remover. */
  onChange(handler: (channel: Channel, market: Market) => void): () => void {
    this.ee.on('change', handler);
    return () => {
      this.ee.off('change', handler);
    };
  }

  private feed(channel: Channel, market: Market): FeedDemand {
    const key = feedOf(channel, market);
    let f = this.feeds.get(key);
    if (!f) {
      f = { counts: new Map(), codes: new Set(), wildcards: 0 };
      this.feeds.set(key, f);
    }
    return f;
  }
}

const EMPTY: ReadonlySet<string> = new Set();
