import type { ConnectionState, StatusMsg } from '../client/index.js';
import { el, setOneOf, setText } from './dom.js';
import { fmtDuration, fmtInt, kstClock, marketMarker } from './format.js';

/**
 * The health panel: the WebSocket connection (SDK `state` events and ping
 * round trips), each feed's upstream state (SDK `status` events, merged with
 * the bridge's `/status`), and the upstream's daily call budget with the
 * pace the poller can afford.
 */

/** The part of the bridge's `/status` body the panel reads. */
export interface ServerStatus {
  readonly budget?: { readonly limit: number | null; readonly remaining: number | null; readonly resetAt: number | null };
  readonly feeds?: readonly {
    readonly channel: string;
    readonly market: string;
    readonly state: string;
    readonly intervalMs: number;
    readonly reason?: string;
    readonly ts?: number;
    readonly calls?: number;
    readonly opensAt?: number;
    readonly asOf?: number;
  }[];
  readonly upstream?: { readonly simulated?: boolean; readonly calls?: number };
  readonly clients?: number;
}

/** One reading of the budget, for the spending rate. */
export interface BudgetSample {
  /** When it was read, ms epoch. */
  readonly at: number;
  readonly remaining: number;
}

/** What the budget card shows. */
export interface BudgetSummary {
  /** Share of the day's calls left, 0–1; undefined when the limit is unknown. */
  readonly left: number | undefined;
  /** Calls spent per minute over the samples; undefined with fewer than two. */
  readonly perMinute: number | undefined;
  /** How long the remaining calls last at that rate, ms; undefined when nothing is being spent. */
  readonly lastsMs: number | undefined;
}

/** The budget's share left, spending rate and runway from samples (oldest first) and the limit. */
export function budgetSummary(samples: readonly BudgetSample[], limit: number | null): BudgetSummary {
  const last = samples[samples.length - 1];
  const first = samples[0];
  const left = last !== undefined && limit ? Math.max(0, Math.min(1, last.remaining / limit)) : undefined;
  if (first === undefined || last === undefined || last.at - first.at < 1000) return { left, perMinute: undefined, lastsMs: undefined };
  const spent = Math.max(0, first.remaining - last.remaining);
  const perMinute = (spent / (last.at - first.at)) * 60_000;
  return { left, perMinute, lastsMs: perMinute > 0 ? (last.remaining / perMinute) * 60_000 : undefined };
}

const STATES = ['live', 'stale', 'closed', 'rate_limited', 'error', 'degraded', 'idle'] as const;
const CONN = ['connecting', 'open', 'reconnecting', 'closed'] as const;
const CONN_LABEL: Readonly<Record<ConnectionState, string>> = { connecting: 'Connecting', open: 'Connected', reconnecting: 'Reconnecting', closed: 'Closed' };
const SAMPLE_WINDOW_MS = 60_000;

interface FeedView {
  state: string;
  intervalMs: number;
  reason: string | undefined;
  ts: number;
  calls: number | undefined;
  opensAt?: number | undefined;
  asOf?: number | undefined;
}

/** Elements the panel writes to. */
export interface StatusElements {
  /** The header's connection pill. */
  readonly pill: HTMLElement;
  /** The panel body. */
  readonly panel: HTMLElement;
  /** The header's market marker (`Closed · opens Mon 09:00`), shown while every feed is closed. */
  readonly market?: HTMLElement;
}

/** The health panel. */
export class StatusPanel {
  private readonly feeds = new Map<string, FeedView>();
  private readonly samples: BudgetSample[] = [];
  private readonly connText: HTMLElement;
  private readonly rtt: HTMLElement;
  private readonly upstream: HTMLElement;
  private readonly feedList: HTMLElement;
  private readonly remaining: HTMLElement;
  private readonly meter: HTMLElement;
  private readonly budgetNote: HTMLElement;
  private readonly interval: HTMLElement;
  private readonly intervalNote: HTMLElement;
  private state: ConnectionState = 'connecting';

  /** A panel writing into `els`; `now` is the clock (ms epoch). */
  constructor(
    private readonly els: StatusElements,
    private readonly now: () => number = Date.now,
  ) {
    this.connText = el('span', { class: 'conn-state' }, 'Connecting');
    this.rtt = el('span', { class: 'muted' }, '');
    this.upstream = el('span', { class: 'muted' }, '');
    this.feedList = el('ul', { class: 'feeds', 'aria-label': 'Feeds' });
    this.remaining = el('span', { class: 'budget-remaining num' }, '–');
    this.meter = el('span', { class: 'meter-fill' });
    this.budgetNote = el('p', { class: 'muted small budget-note' }, '');
    this.interval = el('strong', { class: 'budget-interval num' }, '–');
    this.intervalNote = el('span', { class: 'muted' }, ' what the budget affords');
    els.panel.replaceChildren(
      el('div', { class: 'kv' }, el('span', { class: 'k' }, 'Connection'), el('span', { class: 'v' }, this.connText, this.rtt)),
      el('div', { class: 'kv' }, el('span', { class: 'k' }, 'Upstream'), el('span', { class: 'v' }, this.upstream)),
      el('div', { class: 'kv multi' }, el('span', { class: 'k' }, 'Feeds'), el('div', { class: 'v' }, this.feedList)),
      el(
        'div',
        { class: 'kv multi' },
        el('span', { class: 'k' }, 'Call budget'),
        el(
          'div',
          { class: 'v budget' },
          el('div', {}, this.remaining),
          el('span', { class: 'meter', role: 'img', 'aria-label': 'Share of the daily call budget left' }, this.meter),
          this.budgetNote,
        ),
      ),
      el('div', { class: 'kv' }, el('span', { class: 'k' }, 'Poll interval'), el('span', { class: 'v' }, this.interval, this.intervalNote)),
    );
    this.renderFeeds();
  }

  /** Shows a connection state. */
  connection(state: ConnectionState): void {
    this.state = state;
    const label = CONN_LABEL[state];
    setText(this.connText, label);
    setOneOf(this.connText, CONN, state);
    const pill = this.els.pill;
    setOneOf(pill, CONN, state);
    pill.dataset.state = state;
    setText(pill.querySelector('.pill-text') ?? pill, label);
    if (state !== 'open') setText(this.rtt, '');
  }

  /** Shows a measured round trip, ms. */
  roundTrip(ms: number): void {
    if (this.state === 'open') setText(this.rtt, ` · ${fmtDuration(ms)} round trip`);
  }

  /** Takes a feed status from the SDK. */
  feed(s: StatusMsg): void {
    this.mergeFeed(s.channel, s.market, {
      state: s.state,
      intervalMs: s.intervalMs,
      reason: s.reason,
      ts: s.ts,
      calls: undefined,
      opensAt: s.opensAt,
      asOf: s.asOf,
    });
    this.renderFeeds();
  }

  /** Takes a `/status` body: budget, feeds, upstream. */
  server(s: ServerStatus): void {
    for (const f of s.feeds ?? []) {
      this.mergeFeed(f.channel, f.market, {
        state: f.state,
        intervalMs: f.intervalMs,
        reason: f.reason,
        ts: f.ts ?? 0,
        calls: f.calls,
        opensAt: f.opensAt,
        asOf: f.asOf,
      });
    }
    this.renderFeeds();
    const up = s.upstream;
    if (up !== undefined)
      setText(
        this.upstream,
        `${up.simulated ? 'built-in simulator' : 'KRX API'} · ${fmtInt(up.calls ?? 0)} calls${s.clients !== undefined ? ` · ${fmtInt(s.clients)} client${s.clients === 1 ? '' : 's'}` : ''}`,
      );
    this.renderBudget(s.budget);
  }

  private mergeFeed(channel: string, market: string, v: FeedView): void {
    const key = `${channel}.${market}`;
    const old = this.feeds.get(key);
    if (old !== undefined && old.ts > v.ts) {
      if (v.calls !== undefined) old.calls = v.calls;
      return;
    }
    this.feeds.set(key, { ...v, calls: v.calls ?? old?.calls });
  }

  private renderFeeds(): void {
    // Idle feeds (nobody subscribes, nothing is polled) would only crowd the panel.
    const shown = [...this.feeds].filter(([, f]) => f.state !== 'idle');
    this.renderMarket(shown.map(([, f]) => f));
    if (shown.length === 0) {
      setText(this.interval, '–');
      this.intervalNote.hidden = false;
      this.feedList.replaceChildren(el('li', { class: 'muted' }, 'none polled'));
      return;
    }
    // A feed not polled now (closed: no data until the session opens) has no interval: its 0 is not a pace.
    const intervals = shown.map(([, f]) => f.intervalMs).filter((ms) => ms > 0);
    const lo = Math.min(...intervals);
    const hi = Math.max(...intervals);
    setText(this.interval, intervals.length === 0 ? 'not polling' : lo === hi ? fmtDuration(lo) : `${fmtDuration(lo)} – ${fmtDuration(hi)}`);
    this.intervalNote.hidden = intervals.length === 0;
    const items = shown
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([key, f]) => {
        const [channel = '', market = ''] = key.split('.');
        const badge = el('span', { class: `badge ${STATES.includes(f.state as (typeof STATES)[number]) ? f.state : 'error'}` }, f.state.replace('_', ' '));
        return el(
          'li',
          { 'data-feed': key, 'data-state': f.state, title: f.reason ?? '' },
          el('span', { class: 'feed-name' }, channel, el('span', { class: 'muted' }, ` · ${market.toUpperCase()}`)),
          badge,
          el('span', { class: 'num feed-interval' }, f.intervalMs > 0 ? fmtDuration(f.intervalMs) : '–'),
        );
      });
    this.feedList.replaceChildren(...items);
  }

  /** The feeds shown (not idle): their states and the time of their data. */
  shownFeeds(): readonly { readonly state: string; readonly asOf?: number | undefined }[] {
    return [...this.feeds.values()].filter((f) => f.state !== 'idle');
  }

  private renderMarket(feeds: readonly FeedView[]): void {
    const m = this.els.market;
    if (m === undefined) return;
    const text = marketMarker(feeds);
    m.hidden = text === undefined;
    setText(m.querySelector('.pill-text') ?? m, text ?? '');
  }

  private renderBudget(b: ServerStatus['budget']): void {
    const now = this.now();
    if (b?.remaining != null) {
      this.samples.push({ at: now, remaining: b.remaining });
      while (this.samples.length > 2 && this.samples[0]!.at < now - SAMPLE_WINDOW_MS) this.samples.shift();
    }
    const sum = budgetSummary(this.samples, b?.limit ?? null);
    setText(
      this.remaining,
      b?.remaining == null ? 'unknown until the first call' : `${fmtInt(b.remaining)} of ${b.limit == null ? '?' : fmtInt(b.limit)} calls left`,
    );
    this.meter.style.transform = `scaleX(${(sum.left ?? 0).toFixed(4)})`;
    this.meter.classList.toggle('low', sum.left !== undefined && sum.left < 0.1);
    const parts: string[] = [];
    if (sum.perMinute !== undefined) parts.push(`${fmtInt(sum.perMinute)} calls/min`);
    if (b?.resetAt != null) {
      const reset = b.resetAt - now;
      parts.push(`resets ${kstClock(b.resetAt)} KST (in ${fmtDuration(reset)})`);
      if (sum.lastsMs !== undefined) parts.push(sum.lastsMs >= reset ? 'lasts until the reset' : `runs out in ${fmtDuration(sum.lastsMs)}`);
    }
    setText(this.budgetNote, parts.join(' · '));
  }
}
