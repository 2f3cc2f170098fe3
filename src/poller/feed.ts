import type { Logger } from '../log.js';
import type { Bus, FeedStatus } from '../bus/bus.js';
import type { Channel, ChannelState, Market } from '../protocol/constants.js';
import type { ChangeBatch, StateStore } from '../state/store.js';
import type { Row } from '../upstream/normalise.js';
import { ListReader, type ListDelta } from '../upstream/listread.js';
import type { Metrics } from '../metrics/metrics.js';
import type { DemandView } from './demand.js';
import type { MarketClock } from '../market/clock.js';
import { isListChannel, planCycle, type Family, type PlannedCall } from './feeds.js';
import { closingRow, isClosingCall, planClosed, type ClosingAnswers, type Missing } from './closed.js';
import type { RoundTicket, Rounds } from './rounds.js';

/**
 * One feed (channel, market): a sequential poll loop that calls the upstream
 * for what is wanted, applies each answer to the state store, publishes the
 * changes, and keeps the feed's state. Never two cycles (so never two
 * requests for the same resource) in flight.
 */

/** What a feed gets back from a call. */
export interface FeedAnswer {
  readonly data: Record<string, unknown>;
  readonly rows: Row[];
  readonly dropped: number;
  readonly receivedAt: number;
  /** How `rows` relate to the reader's last read (see `ListReader`). */
  readonly delta?: ListDelta;
}

/** The upstream call a feed makes (UpstreamClient.call); `opts.list` is the reader of that call's list bodies. */
export interface FeedCaller {
  call(id: string, params: Record<string, unknown>, opts?: { list?: ListReader }): Promise<FeedAnswer>;
}

/** The budget as a feed sees it. */
export interface BudgetView {
  readonly remaining: number | null;
  readonly resetAt: number | null;
  isExhausted(now: number): boolean;
}

/** Shared dependencies and settings of every feed. */
export interface FeedContext {
  readonly caller: FeedCaller;
  readonly budget: BudgetView;
  readonly store: StateStore;
  readonly bus: Bus;
  readonly demand: DemandView;
  readonly clock: MarketClock;
  readonly logger: Logger;
  readonly metrics?: Metrics;
  readonly random: () => number;
  /** Whether this process may poll now (cluster leadership); default always. */
  readonly mayPoll: () => boolean;
  /** Interval the pacer grants this feed now, ms. */
  readonly intervalFor: (feed: Feed) => number;
  /** The poll grid and the rounds whose answers are published together. */
  readonly rounds: Rounds;
  readonly baseMs: number;
  readonly idleGraceMs: number;
  readonly closedCheckMs: number;
  /** When a feed's data was last refreshed before this process started (the state files), if known. */
  readonly lastRefresh?: (channel: Channel, market: Market) => number | undefined;
  readonly authRetryMs: number;
  readonly maxBackoffMs: number;
  /** The closing-data answers the feeds share while the market is closed; default each feed asks its own. */
  readonly closing?: ClosingAnswers<FeedAnswer>;
}

interface ErrorLike {
  readonly code?: unknown;
  readonly message?: unknown;
  readonly resetAt?: unknown;
}

const MAX_INTERVAL_MS = 10 * 60_000;

/**
 * How long after the market closes a closed feed fetches the last state:
 * the closing auction's result (15:30) and the day's last after-hours match
 * (18:00) reach the upstream's snapshots within seconds of the close.
 */
export const CLOSE_SETTLE_MS = 10_000;

/**
 * A change of a live feed's paced interval smaller than this share of the
 * one announced is not announced: under budget pressure the pacer's plan
 * moves by a few tens of ms on every cycle, and each move was a `status`
 * to every subscriber.
 */
const INTERVAL_NOISE = 0.05;

/** Longest wait before a closed-market fetch that failed in passing is tried again. */
const CLOSED_RETRY_MAX_MS = 30 * 60_000;

/** Failures of a closed-market call that a later call may not meet (not the hour's refusal, not the code's). */
const TRANSIENT: ReadonlySet<string> = new Set(['network', 'timeout', 'upstream_error', 'malformed_body']);

/** The poll loop of one feed. */
export class Feed {
  /** Current state, as last published. */
  state: ChannelState = 'idle';
  /** Reason of the current state. */
  reason: string | undefined;
  /** Interval in effect, ms. */
  intervalMs = 0;
  /**
   * How fresh what this feed holds of what it is asked for is (ms epoch):
   * when the last successful poll arrived, or, after a closed market's
   * fetch of some codes, the oldest of the wanted rows' times (`asOf`).
   */
  lastOkTs: number | undefined;
  /** When an answer of the whole market's list last arrived (ms epoch): how fresh a whole-market subscription is. */
  private wholeTs: number | undefined;
  /** Upstream calls made by this feed. */
  calls = 0;
  /** Poll cycles this feed started (cycles that called the upstream). */
  cycles = 0;
  /**
   * While the market is closed: the codes (`*` for the whole market) whose
   * last state this feed already tried to fetch, so each is fetched at most
   * once until the session opens. Undefined while the market is open.
   */
  private closedFetched: Set<string> | undefined;
  /** Why the last closed-market fetch got nothing (kept until the session opens, so later checks still say it). */
  private closedWhy: string | undefined;
  /** The close (`MarketClock.closedSince`) that `closedFetched` and `closedWhy` are of. */
  private closedFor: number | undefined;
  /** No closed-market fetch before this (ms epoch): the last one failed and is retried later. */
  private closedRetryAt = 0;
  /** Closed-market fetches in a row that failed in passing. */
  private closedFailures = 0;
  /** When the current state (with its reason and interval) was entered, ms epoch; 0 before the first. */
  private stateTs = 0;
  private failures = 0;
  private timer: NodeJS.Timeout | undefined;
  private nextAt = 0;
  private lastStart = 0;
  private running = false;
  private stopped = true;
  private idleSince: number | undefined;
  /** When the market opens, as of entering `closed`. */
  private opensAt: number | undefined;
  /** The `asOf` of the last `closed` status published. */
  private statusAsOf: number | undefined;
  /** The list reader of each call this feed makes (by endpoint and parameters): the same call returns mostly the same rows. */
  private readers = new Map<string, ListReader>();
  /** The round of the cycle under way, until it holds its publish or leaves. */
  private ticket: RoundTicket | undefined;

  /** A stopped feed of `channel` on `market`, polling the `family` endpoints. */
  constructor(
    readonly channel: Channel,
    readonly market: Market,
    readonly family: Family,
    private readonly ctx: FeedContext,
  ) {
    this.lastOkTs = ctx.lastRefresh?.(channel, market);
    this.wholeTs = this.lastOkTs;
  }

  /** `channel.market`. */
  get key(): string {
    return `${this.channel}.${this.market}`;
  }

  /** Codes and wildcard currently wanted. */
  wanted(): { codes: ReadonlySet<string>; wildcard: boolean } {
    return { codes: this.ctx.demand.codes(this.channel, this.market), wildcard: this.ctx.demand.wildcard(this.channel, this.market) };
  }

  /** The calls the next cycle would make. */
  plan(): PlannedCall[] {
    const w = this.wanted();
    return planCycle(this.channel, this.market, this.family, w.codes, w.wildcard);
  }

  /** When the last cycle started (clock ms; 0 before the first). */
  get lastCycleAt(): number {
    return this.lastStart;
  }

  /** Whether a cycle is under way (its calls may be in flight). */
  get busy(): boolean {
    return this.running;
  }

  /** Starts (or wakes) the loop: the next cycle runs as soon as spacing allows. */
  wake(): void {
    this.stopped = false;
    if (this.running) return;
    const now = this.ctx.clock.now();
    // A closed feed looks at once: a new subscriber may want a row it does not hold (a closed cycle calls only then).
    const earliest = this.state === 'live' || this.state === 'idle' || this.state === 'closed' ? this.lastStart + this.ctx.baseMs : this.nextAt;
    this.schedule(Math.max(0, earliest - now));
  }

  /** Stops the loop; an in-flight cycle finishes but schedules nothing. */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** The feed's status as published; `ts` is when its state was entered (not when it is asked). */
  status(): FeedStatus {
    const closed = this.state === 'closed';
    const opensAt = closed ? this.opensAt : undefined;
    return {
      channel: this.channel,
      market: this.market,
      state: this.state,
      intervalMs: this.intervalMs,
      ...(this.reason ? { reason: this.reason } : {}),
      ts: this.stateTs || this.ctx.clock.now(),
      ...(opensAt !== undefined ? { opensAt } : {}),
      ...(closed && this.lastOkTs !== undefined ? { asOf: this.lastOkTs } : {}),
    };
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.nextAt = this.ctx.clock.now() + delayMs;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.cycle();
    }, delayMs);
    this.timer.unref?.();
  }

  private async cycle(): Promise<void> {
    if (this.stopped || this.running) return;
    this.running = true;
    try {
      this.schedule(await this.step());
    } catch (err) {
      this.ctx.logger.error({ err, feed: this.key }, 'poll cycle failed unexpectedly');
      this.schedule(this.backoff());
    } finally {
      // A cycle that threw before it settled: its round stops waiting for it.
      this.ticket?.leave();
      this.ticket = undefined;
      this.running = false;
    }
  }

  /** One cycle; returns the delay before the next, ms. */
  private async step(): Promise<number> {
    const { ctx } = this;
    const now = ctx.clock.now();
    const calls = this.plan();
    if (calls.length === 0) {
      this.idleSince ??= now;
      if (now - this.idleSince >= ctx.idleGraceMs) {
        this.setState('idle', undefined, 0);
        this.stopped = true;
        return 0;
      }
      return ctx.idleGraceMs - (now - this.idleSince);
    }
    this.idleSince = undefined;
    if (!ctx.mayPoll()) return ctx.baseMs;
    // One instant for every question to the clock in this cycle: a boundary between two of them would mix two phases.
    if (ctx.clock.session(now) === 'closed') return this.closedStep(now);
    this.closedFetched = undefined;
    this.closedWhy = undefined;
    if (ctx.budget.isExhausted(now)) return this.rateLimited(ctx.budget.resetAt);
    const interval = Math.min(MAX_INTERVAL_MS, ctx.intervalFor(this));
    this.lastStart = now;
    this.cycles++;
    this.ticket = ctx.rounds.join(now);
    const results = await this.callAll(calls);
    this.calls += calls.length;
    return this.settle(calls, results, now, interval);
  }

  /** Makes a cycle's calls, each with its list reader; readers of calls no longer planned are let go. */
  private callAll(calls: PlannedCall[]): Promise<PromiseSettledResult<FeedAnswer>[]> {
    const readers = new Map<string, ListReader>();
    const mine = calls.map((c) => {
      const key = `${c.endpointId} ${JSON.stringify(c.params)}`;
      const r = readers.get(key) ?? this.readers.get(key) ?? new ListReader();
      readers.set(key, r);
      return r;
    });
    this.readers = readers;
    return Promise.allSettled(calls.map((c, i) => this.ctx.caller.call(c.endpointId, { ...c.params }, { list: mine[i]! })));
  }

  /**
   * A cycle while the market is closed: the feed holds its last state and
   * says `closed`. What it holds no row for, or only a row seen before the
   * market closed (the closing auction's result comes at the close; a
   * restart or a stepped clock brings rows of an earlier session), it fetches
   * once, `CLOSE_SETTLE_MS` after the close, from the endpoint that serves
   * the last state at this hour (closed.ts), and then makes no call until
   * the session opens.
   */
  private async closedStep(now: number): Promise<number> {
    const { ctx } = this;
    const since = ctx.clock.closedSince(now);
    if (since !== this.closedFor) {
      // Another closed stretch (the clock passed a session without this feed polling it): fetch again.
      this.closedFor = since;
      this.closedFetched = undefined;
      this.closedWhy = undefined;
      this.closedRetryAt = 0;
      this.closedFailures = 0;
    }
    const settled = since === undefined ? 0 : since + CLOSE_SETTLE_MS;
    // Until the close has settled, only what it holds nothing of (fetched again once settled); then what it saw before.
    const early = now < settled;
    const missing = this.missingCodes(early ? undefined : settled);
    if ((missing.codes.length > 0 || missing.wildcard) && !ctx.budget.isExhausted(now) && now >= this.closedRetryAt) {
      if (!early) {
        const fetched = (this.closedFetched ??= new Set());
        for (const c of missing.codes) fetched.add(c);
        if (missing.wildcard) fetched.add('*');
      }
      const plan = planClosed(this.channel, this.market, this.family, missing, (p) => ctx.clock.provides(p, now));
      this.closedWhy = plan.why;
      if (plan.calls.length > 0) {
        this.lastStart = now;
        this.cycles++;
        let asked = 0;
        const ask = (c: PlannedCall) => () => {
          asked++;
          return ctx.caller.call(c.endpointId, { ...c.params });
        };
        // Another feed's answer to the same closing-data call in this stretch is this one's too (quote and price of a code).
        const results = await Promise.allSettled(
          plan.calls.map((c) => (ctx.closing && isClosingCall(c) ? ctx.closing.get(c, since, !early, ask(c)) : ask(c)())),
        );
        this.calls += asked;
        this.closedWhy = this.settleClosed(plan.calls, results);
        this.retryClosed(results, now);
      }
    }
    const why = this.closedWhy;
    const reason = this.holdsRows() ? 'market closed' : `market closed; no data to show until the session opens${why ? ` (${why})` : ''}`;
    this.setState('closed', reason, 0, now);
    // Look again when the close has settled, and when the market leaves `closed` (the pre-market, after-hours), before the open that `opensAt` announces.
    const resumesAt = ctx.clock.resumesAt(now);
    let wake = early ? Math.min(ctx.closedCheckMs, settled - now) : ctx.closedCheckMs;
    if (this.closedRetryAt > now) wake = Math.min(wake, this.closedRetryAt - now);
    return resumesAt === undefined ? wake : Math.max(0, Math.min(wake, resumesAt - ctx.clock.now()));
  }

  /**
   * After a closed-market fetch: when a call failed in a way a later call
   * may not (the network, a timeout, a 5xx; not a refusal of the hour or of
   * the code), what is still missing is asked for again, after 30 s, then
   * twice as long each time up to `CLOSED_RETRY_MAX_MS`; one failed call
   * left a code blank for a whole weekend.
   */
  private retryClosed(results: PromiseSettledResult<FeedAnswer>[], now: number): void {
    const passing = results.some((r) => r.status === 'rejected' && TRANSIENT.has(String((r.reason as ErrorLike | undefined)?.code ?? 'network')));
    if (!passing) {
      this.closedFailures = 0;
      return;
    }
    const settled = (this.closedFor ?? 0) + CLOSE_SETTLE_MS;
    const still = this.missingCodes(now < settled ? undefined : settled, true);
    for (const c of still.codes) this.closedFetched?.delete(c);
    if (still.wildcard) this.closedFetched?.delete('*');
    this.closedRetryAt = now + Math.min(CLOSED_RETRY_MAX_MS, this.ctx.closedCheckMs * 2 ** this.closedFailures++);
  }

  /** Applies what a closed-market fetch got (its rows are the last state, published as usual); returns the first failure's code. */
  private settleClosed(calls: PlannedCall[], results: PromiseSettledResult<FeedAnswer>[]): string | undefined {
    let failure: string | undefined;
    const applyMs: number[] = [];
    const batches: ChangeBatch[] = [];
    let latest: number | undefined;
    for (let i = 0; i < results.length; i++) {
      const r = results[i]!;
      if (r.status === 'rejected') {
        const code = (r.reason as ErrorLike | undefined)?.code;
        failure ??= typeof code === 'string' ? code : 'network';
        continue;
      }
      const rows = this.rowsOf(r.value, calls[i]!);
      if (rows.length === 0) continue;
      // The closing data is the state at the close, whenever it was asked for (a Saturday's fetch shows Friday's close, as of then).
      const closing = isClosingCall(calls[i]!);
      const ts = closing && this.closedFor !== undefined ? Math.min(r.value.receivedAt, this.closedFor + CLOSE_SETTLE_MS) : r.value.receivedAt;
      if (!closing && isListChannel(this.channel)) this.wholeTs = ts;
      batches.push(this.apply(rows, ts, rows === r.value.rows ? r.value.delta : undefined, applyMs));
      latest = ts;
    }
    // A fetch of some codes does not make the rows it did not bring fresher: asOf is the oldest of what is wanted.
    if (latest !== undefined) this.lastOkTs = this.oldestWanted() ?? latest;
    this.ctx.rounds.publishNow(batches, (publishMs) => {
      for (const ms of applyMs) this.ctx.metrics?.diffTime.observe({ feed: this.key }, (ms + publishMs) / 1000);
    });
    return failure;
  }

  /**
   * The wanted codes, and the whole market, this feed holds no row for, or
   * only one last seen before `settled` (the close, settled; undefined: no
   * row only), and has not fetched since the close.
   */
  private missingCodes(settled: number | undefined, evenFetched = false): Missing {
    const w = this.wanted();
    const done = evenFetched ? undefined : this.closedFetched;
    const seenBefore = (ts: number | undefined): boolean => settled !== undefined && (ts ?? 0) < settled;
    const codes: string[] = [];
    for (const code of w.codes) {
      const e = this.ctx.store.entry(this.channel, this.market, code);
      if ((e === undefined || seenBefore(e.seenTs)) && !done?.has(code)) codes.push(code);
    }
    return { codes, wildcard: w.wildcard && (!this.holdsRows() || seenBefore(this.wholeTs)) && !done?.has('*') };
  }

  /**
   * The oldest time a wanted row was last seen at: of each wanted code the
   * store holds, and of the whole market when it is wanted (its list's
   * last answer). Undefined when nothing wanted is held.
   */
  private oldestWanted(): number | undefined {
    const w = this.wanted();
    let oldest = w.wildcard && this.holdsRows() ? this.wholeTs : undefined;
    for (const code of w.codes) {
      const e = this.ctx.store.entry(this.channel, this.market, code);
      if (e !== undefined && (oldest === undefined || e.seenTs < oldest)) oldest = e.seenTs;
    }
    return oldest;
  }

  /** Whether the store holds any row of this feed. */
  private holdsRows(): boolean {
    return !this.ctx.store.entries(this.channel, this.market).next().done;
  }

  private settle(calls: PlannedCall[], results: PromiseSettledResult<FeedAnswer>[], started: number, interval: number): number {
    let firstError: ErrorLike | undefined;
    let drift: string | undefined;
    const usable: { rows: Row[]; ts: number; delta: ListDelta | undefined }[] = [];
    for (let i = 0; i < results.length; i++) {
      const r = results[i]!;
      if (r.status === 'rejected') {
        firstError ??= (r.reason ?? {}) as ErrorLike;
        continue;
      }
      const rows = this.rowsOf(r.value, calls[i]!);
      if (rows.length === 0 && r.value.dropped > 0) {
        drift = `schema drift: all ${r.value.dropped} rows unusable`;
        continue;
      }
      usable.push({ rows, ts: r.value.receivedAt, delta: rows === r.value.rows ? r.value.delta : undefined });
    }
    // A recovered feed says `live` before its first fresh data, so no client sees fresh rows under a stale status.
    const ok = firstError === undefined && drift === undefined;
    if (ok) {
      this.failures = 0;
      this.lastOkTs = this.ctx.clock.now();
      if (isListChannel(this.channel)) this.wholeTs = this.lastOkTs;
      this.setState('live', undefined, interval);
    }
    const ticket = this.ticket;
    this.ticket = undefined;
    const applyMs: number[] = [];
    // Applied to the store when published: in a round, once the round is complete.
    const make = (): ChangeBatch[] => usable.map((u) => this.apply(u.rows, u.ts, u.delta, applyMs));
    const after = (publishMs: number): void => {
      const m = this.ctx.metrics;
      if (m === undefined) return;
      for (const ms of applyMs) m.diffTime.observe({ feed: this.key }, (ms + publishMs) / 1000);
      m.cycleTime.observe({ feed: this.key }, (this.ctx.clock.now() - started) / 1000);
    };
    // Only a cycle that succeeded waits for its round: a failing one's rows go out before its `stale` status.
    if (ok && ticket !== undefined) ticket.hold(make, after);
    else {
      ticket?.leave();
      this.ctx.rounds.publishNow(make(), after);
    }
    if (firstError) return this.failed(firstError);
    if (drift) return this.failed({ code: 'malformed_body', message: drift });
    return Math.max(0, this.ctx.rounds.next(started, interval) - this.ctx.clock.now());
  }

  private rowsOf(value: { data: Record<string, unknown>; rows: Row[] }, call: PlannedCall): Row[] {
    if (isClosingCall(call)) return [closingRow(this.channel, this.family, value.data, String(call.params.issuecode))];
    if (isListChannel(this.channel) || this.channel === 'price' || this.channel === 'book') return value.rows;
    // Per-issue responses (index) are one object; key it by the code asked for.
    const row = value.data as Row;
    const code = call.params.issuecode;
    return [typeof row.isuSrtCd === 'string' && row.isuSrtCd ? row : { ...row, isuSrtCd: code as string }];
  }

  /** Applies one answer's rows to the store; its time is added to `applyMs`. */
  private apply(rows: Row[], ts: number, delta: ListDelta | undefined, applyMs: number[]): ChangeBatch {
    const t0 = performance.now();
    const batch = this.ctx.store.apply(this.channel, this.market, rows, ts, undefined, delta);
    applyMs.push(performance.now() - t0);
    if (batch.events.length > 0) this.ctx.metrics?.changes.inc({ feed: this.key }, batch.events.length);
    return batch;
  }

  private failed(err: ErrorLike): number {
    const code = typeof err.code === 'string' ? err.code : 'network';
    const msg = typeof err.message === 'string' ? err.message : code;
    if (code === 'rate_limited') {
      return this.rateLimited(typeof err.resetAt === 'number' ? err.resetAt : this.ctx.budget.resetAt);
    }
    if (code === 'unauthorized') {
      if (this.state !== 'error') this.ctx.logger.error({ feed: this.key }, 'upstream refused the bridge credentials (401); check UPSTREAM_API_KEY');
      this.setState('error', 'upstream refused the credentials (401)', 0);
      return this.ctx.authRetryMs;
    }
    if (code === 'not_provided_now') {
      this.setState('closed', 'not provided at this time', 0);
      return this.ctx.closedCheckMs;
    }
    this.failures++;
    const delay = this.backoff();
    if (this.failures === 1 || this.state !== 'stale') this.ctx.logger.warn({ feed: this.key, code, err: msg }, 'poll failed; data is stale');
    this.setState('stale', `${code}: ${msg}`.slice(0, 200), delay);
    return delay;
  }

  private rateLimited(resetAt: number | null): number {
    const now = this.ctx.clock.now();
    const until = resetAt && resetAt > now ? resetAt : now + 60_000;
    this.setState('rate_limited', `daily call budget spent until ${new Date(until).toISOString()}`, 0);
    // Wake just after the reset (with jitter, so a cluster does not stampede); on the KRX clock, also as often as a
    // closed feed looks, so that a market closing meanwhile says `closed` with its `opensAt`. A wake before the
    // reset calls nothing: the budget says it is spent (a 429 spends it).
    const wake = Math.min(until - now + Math.floor(this.ctx.random() * 5000), 24 * 3600_000);
    return this.ctx.clock.opensAt() === undefined ? wake : Math.min(wake, this.ctx.closedCheckMs);
  }

  private backoff(): number {
    const exp = Math.min(this.ctx.maxBackoffMs, this.ctx.baseMs * 2 ** Math.min(10, this.failures));
    return Math.max(this.ctx.baseMs, Math.floor(exp / 2 + (this.ctx.random() * exp) / 2));
  }

  private setState(state: ChannelState, reason: string | undefined, intervalMs: number, at?: number): void {
    const opensAt = state === 'closed' ? this.ctx.clock.opensAt(at) : undefined;
    // A stale feed's backoff changes every attempt; report it without a status flood. A closed feed whose next open
    // moved (the clock passed a whole session: a stepped clock, a resumed VM) says so.
    // A closed feed that fetched the close says when (its asOf).
    const asOf = state === 'closed' ? this.lastOkTs : undefined;
    if (
      state === this.state &&
      reason === this.reason &&
      opensAt === this.opensAt &&
      asOf === this.statusAsOf &&
      (state === 'stale' || Math.abs(intervalMs - this.intervalMs) <= this.intervalMs * INTERVAL_NOISE)
    )
      return;
    const m = this.ctx.metrics;
    if (m) {
      if (state !== this.state) {
        m.feedState.set({ feed: this.key, state: this.state }, 0);
        m.feedState.set({ feed: this.key, state }, 1);
      }
      m.pollInterval.set({ feed: this.key }, intervalMs / 1000);
    }
    this.state = state;
    this.reason = reason;
    this.intervalMs = intervalMs;
    this.stateTs = this.ctx.clock.now();
    this.opensAt = opensAt;
    this.statusAsOf = asOf;
    this.ctx.bus.publishStatus(this.status());
  }
}
