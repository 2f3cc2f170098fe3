import type { Logger } from '../log.js';
import type { Bus, FeedStatus } from '../bus/bus.js';
import { CHANNELS, MARKETS, type Channel, type Market } from '../protocol/constants.js';
import type { StateStore } from '../state/store.js';
import type { Metrics } from '../metrics/metrics.js';
import type { DemandView } from './demand.js';
import type { MarketClock } from '../market/clock.js';
import { CHANNEL_WEIGHTS, DEFAULT_FAMILIES, callsPerCycle, type Families } from './feeds.js';
import { planIntervals } from './pacer.js';
import { Feed, type BudgetView, type FeedAnswer, type FeedCaller } from './feed.js';
import { ClosingAnswers } from './closed.js';
import { Rounds } from './rounds.js';

/** A budget day: the span paced over before the first response says when the budget resets. */
const DAY_MS = 86_400_000;

/**
 * The demand-driven poller: one `Feed` per (channel, market) that someone
 * subscribes to, paced together so the day's remaining upstream calls last
 * until the trading window ends.
 */

/** Options of `Poller`. */
export interface PollerOptions {
  readonly caller: FeedCaller;
  readonly budget: BudgetView;
  readonly store: StateStore;
  readonly bus: Bus;
  readonly demand: DemandView;
  readonly clock: MarketClock;
  readonly logger: Logger;
  readonly metrics?: Metrics;
  /** API family per market; default KOSPI v2, KOSDAQ v3. */
  readonly families?: Families;
  /** Fastest poll interval, ms; default 1000 (the upstream refresh period). */
  readonly baseMs?: number;
  /**
   * Longest a feed's answer waits for the other feeds polled at the same
   * instant, so that they are published (and written to each client)
   * together, ms; default 50, at most half of `baseMs`; 0 publishes each
   * answer as it comes.
   */
  readonly roundHoldMs?: number;
  /** How long a feed keeps polling after its last subscriber left, ms; default 5000. */
  readonly idleGraceMs?: number;
  /** Share of the daily budget kept for on-demand lookups, used while `lookupsLeft` is unknown (of the calls remaining); default 0.1. */
  readonly reserve?: number;
  /**
   * Calls the on-demand lookups may still spend this budget day (their
   * share's cap less what they used), which the poller leaves aside; null
   * while the daily limit is unknown. Default: `reserve` of the calls remaining.
   */
  readonly lookupsLeft?: () => number | null;
  /** How often a closed feed looks at the clock again, ms; default 30000. */
  readonly closedCheckMs?: number;
  /** Retry period after the upstream refused the credentials, ms; default 60000. */
  readonly authRetryMs?: number;
  /** Longest backoff after failures, ms; default 30000. */
  readonly maxBackoffMs?: number;
  /** Randomness for jitter; default Math.random. */
  readonly random?: () => number;
  /** Whether this process may poll now (cluster leadership); default always. */
  readonly mayPoll?: () => boolean;
  /** When a feed's data was last refreshed before this process started (the state files). */
  readonly lastRefresh?: (channel: Channel, market: Market) => number | undefined;
}

/** What a topology uses of the poller: waking its feeds (a new cluster leader), and their states. */
export interface PollerHandle {
  wakeAll(): void;
  statuses(): FeedStatus[];
}

/** The set of feeds and their shared pacing. */
export class Poller {
  private readonly feeds = new Map<string, Feed>();
  private readonly families: Families;
  private readonly baseMs: number;
  private unsubscribe: (() => void) | undefined;
  private paced: { at: number; intervals: Map<string, number> } | undefined;
  private readonly rounds: Rounds;
  /** Closing-data answers the feeds share while the market is closed. */
  private readonly closing = new ClosingAnswers<FeedAnswer>();

  /** A stopped poller; its poll grid has the phase of its first cycle. */
  constructor(private readonly opts: PollerOptions) {
    this.families = opts.families ?? DEFAULT_FAMILIES;
    this.baseMs = opts.baseMs ?? 1000;
    const holdMs = Math.min(this.baseMs / 2, Math.max(0, opts.roundHoldMs ?? 50));
    this.rounds = new Rounds({ bus: opts.bus, logger: opts.logger, baseMs: this.baseMs, holdMs });
  }

  /** Starts following demand; feeds start as subscribers appear. */
  start(): void {
    this.unsubscribe = this.opts.demand.onChange((channel, market) => this.touch(channel, market));
    for (const channel of CHANNELS) for (const market of MARKETS) if (this.opts.demand.active(channel, market)) this.touch(channel, market);
  }

  /** Stops every feed. In-flight calls finish; nothing new starts. */
  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    for (const f of this.feeds.values()) f.stop();
    this.rounds.releaseAll();
  }

  /** Every feed's current status (idle feeds included once created). */
  statuses(): FeedStatus[] {
    return [...this.feeds.values()].map((f) => f.status());
  }

  /** The feed of a channel and market, if created. */
  feed(channel: Channel, market: Market): Feed | undefined {
    return this.feeds.get(`${channel}.${market}`);
  }

  /** Upstream calls made by all feeds. */
  get calls(): number {
    let n = 0;
    for (const f of this.feeds.values()) n += f.calls;
    return n;
  }

  /** Wakes every feed with demand (e.g. after this process became the cluster leader). */
  wakeAll(): void {
    for (const channel of CHANNELS) for (const market of MARKETS) if (this.opts.demand.active(channel, market)) this.touch(channel, market);
  }

  private touch(channel: Channel, market: Market): void {
    const key = `${channel}.${market}`;
    let f = this.feeds.get(key);
    if (!f) {
      f = new Feed(channel, market, this.families[market], this.context());
      this.feeds.set(key, f);
    }
    this.paced = undefined;
    if (this.opts.demand.active(channel, market)) f.wake();
  }

  private context() {
    const o = this.opts;
    return {
      caller: o.caller,
      budget: o.budget,
      store: o.store,
      bus: o.bus,
      demand: o.demand,
      clock: o.clock,
      logger: o.logger,
      ...(o.metrics ? { metrics: o.metrics } : {}),
      random: o.random ?? Math.random,
      mayPoll: o.mayPoll ?? (() => true),
      intervalFor: (feed: Feed) => this.intervalFor(feed),
      rounds: this.rounds,
      baseMs: this.baseMs,
      idleGraceMs: o.idleGraceMs ?? 5000,
      closedCheckMs: o.closedCheckMs ?? 30_000,
      closing: this.closing,
      ...(o.lastRefresh ? { lastRefresh: o.lastRefresh } : {}),
      authRetryMs: o.authRetryMs ?? 60_000,
      maxBackoffMs: o.maxBackoffMs ?? 30_000,
    };
  }

  /** The interval the budget affords a feed now; recomputed at most every base interval. */
  private intervalFor(feed: Feed): number {
    const now = this.opts.clock.now();
    if (!this.paced || now - this.paced.at >= this.baseMs) {
      const loads = [...this.feeds.values()].map((f) => {
        const w = f.wanted();
        return { key: f.key, weight: CHANNEL_WEIGHTS[f.channel], callsPerCycle: callsPerCycle(f.channel, w.codes.size, w.wildcard) };
      });
      const b = this.opts.budget;
      // The calls must last through the polling time until the reset: the rest of today's sessions and, before
      // the 09:00 KST reset, the next morning's pre-market.
      const windowMs = this.opts.clock.openMsUntil(b.resetAt ?? now + DAY_MS);
      const reserved = this.opts.lookupsLeft?.() ?? (b.remaining ?? 0) * (this.opts.reserve ?? 0.1);
      const intervals = planIntervals({ feeds: loads, remaining: b.remaining, windowMs, baseMs: this.baseMs, reserved });
      this.paced = { at: now, intervals };
    }
    return this.paced.intervals.get(feed.key) ?? this.baseMs;
  }
}
