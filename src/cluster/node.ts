import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { FeedStatus } from '../bus/bus.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics/metrics.js';
import type { Demand } from '../poller/demand.js';
import type { PollerHandle } from '../poller/poller.js';
import { StateStore } from '../state/store.js';
import type { Budget } from '../upstream/budget.js';
import { Backplane } from './backplane.js';
import { BudgetShare } from './budget.js';
import { SharedAllowance } from './allowance.js';
import { ClusterBus } from './bus.js';
import { RedisSharedCache } from './cache.js';
import { decodeRound, decodeStatus, decodeStatusMessage, pairs } from './codec.js';
import { ClusterDemand } from './demand.js';
import { ALL_FEEDS, clusterKeys, type ClusterKeys, type FeedRef } from './keys.js';
import { Leadership } from './leadership.js';
import { ClusterMetrics } from './metrics.js';
import { Mirror } from './mirror.js';
import { loadScripts } from './scripts.js';
import { FeedStates } from './statuses.js';
import { LeaderTerm } from './term.js';
import { LeaderWriter } from './writer.js';

/**
 * One bridge process in cluster mode (REDIS_URL set): the Redis
 * connections, the lease, the fenced writer, the mirror of the shared
 * state, shared demand, budget and on-demand cache, and the feed states
 * with `degraded` while Redis is away. The bridge hands the poller
 * `pollStore`, `union`, `bus` and `mayPoll`, and the gateway the bridge's
 * own store (the mirror), `bus` and `statuses()`.
 * See docs/DEPLOYMENT.md §Cluster mode.
 */

/** Options of `ClusterNode`. */
export interface ClusterNodeOptions {
  /** Redis URL (REDIS_URL). */
  readonly url: string;
  /** Key prefix (REDIS_PREFIX). */
  readonly prefix: string;
  /** Lease period, ms (LEASE_MS). */
  readonly leaseMs: number;
  /** Fastest poll interval, ms (POLL_BASE_MS). */
  readonly baseMs: number;
  /** Changes kept per feed stream (REDIS_STREAM_MAXLEN). */
  readonly streamMaxLen: number;
  /** Expiry of an on-demand lock, ms (longer than a call with retries). */
  readonly lockMs: number;
  /** The gateway's store: the mirror. */
  readonly store: StateStore;
  /** This process's own demand (the gateway's sink). */
  readonly demand: Demand;
  readonly budget: Budget;
  readonly metrics: Metrics;
  readonly logger: Logger;
  /** Clock, ms epoch; default Date.now. */
  readonly now?: () => number;
}

/** Cluster facts for `/status`. */
export interface ClusterInfo {
  readonly node: string;
  readonly role: 'leader' | 'follower';
  /** Whether this process calls the upstream now. */
  readonly polling: boolean;
  readonly generation: number | null;
  readonly backplane: 'up' | 'down';
  /** Whether this process's epoch is the one in Redis. */
  readonly epochConfirmed: boolean;
  readonly prefix: string;
  readonly leaseMs: number;
}

/** A cluster process. */
export class ClusterNode {
  /** This process's id (`host:pid:random`). */
  readonly id = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  /** The bus for poller and gateway. */
  readonly bus: ClusterBus;
  /** The poller's own store (diff base; loaded from Redis at every term). */
  readonly pollStore: StateStore;
  /** Cluster-wide demand, for the poller. */
  readonly union: ClusterDemand;
  /** Shared on-demand cache, for OnDemandCache. */
  readonly cache: RedisSharedCache;
  /** Cluster-wide count of on-demand calls, for OnDemandAllowance. */
  readonly allowance: SharedAllowance;
  /** Cluster metrics. */
  readonly metrics: ClusterMetrics;
  private readonly keys: ClusterKeys;
  private readonly backplane: Backplane;
  private readonly leadership: Leadership;
  private readonly term: LeaderTerm;
  private readonly mirror: Mirror;
  private readonly budgetShare: BudgetShare;
  private readonly states: FeedStates;
  private readonly channels = new Map<string, FeedRef>();
  private readonly now: () => number;
  private readonly timeoutMs: number;
  private poller: PollerHandle | undefined;
  private synced = false;
  private recovering: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;

  /** A node; nothing connects until `start()`. */
  constructor(private readonly opts: ClusterNodeOptions) {
    this.now = opts.now ?? Date.now;
    this.keys = clusterKeys(opts.prefix);
    this.timeoutMs = Math.max(500, opts.leaseMs);
    this.metrics = new ClusterMetrics(opts.metrics.registry);
    const log = opts.logger;
    const keys = this.keys;
    const redis = (this.backplane = new Backplane({ url: opts.url, logger: log, connectTimeoutMs: Math.max(1000, opts.leaseMs) }));
    this.leadership = new Leadership({
      redis,
      keys,
      node: this.id,
      logger: log,
      leaseMs: opts.leaseMs,
      baseMs: opts.baseMs,
      now: this.now,
      canContend: () => redis.up && this.synced,
    });
    const lease = this.leadership.lease;
    this.pollStore = new StateStore({ ringSize: 1, epoch: opts.store.epoch });
    const writer = new LeaderWriter({
      redis,
      keys,
      node: this.id,
      lease,
      metrics: this.metrics,
      logger: log,
      streamMaxLen: opts.streamMaxLen,
      canWrite: () => this.term.prepared && redis.up,
      epoch: () => this.term.epoch,
      onFenced: (reason) => this.leadership.lose(reason),
      onDiverged: (reason) => this.term.diverged(reason),
    });
    this.bus = new ClusterBus(writer, (err) => log.error({ err }, 'handling a cluster message failed'));
    this.mirror = new Mirror({
      redis,
      keys,
      store: opts.store,
      lease,
      logger: log,
      metrics: this.metrics,
      emit: (b) => this.bus.deliver(b),
      loadCount: Math.min(opts.streamMaxLen, 5000),
      timeoutMs: this.timeoutMs,
    });
    this.union = new ClusterDemand({
      redis,
      keys,
      node: this.id,
      local: opts.demand,
      logger: log,
      refreshMs: opts.leaseMs,
      ttlMs: 3 * opts.leaseMs,
      isUp: () => redis.up,
    });
    this.cache = new RedisSharedCache({ redis, keys, metrics: this.metrics, lockMs: opts.lockMs, timeoutMs: this.timeoutMs });
    this.allowance = new SharedAllowance({ redis, keys, timeoutMs: this.timeoutMs });
    this.budgetShare = new BudgetShare({ redis, keys, budget: opts.budget, logger: log, timeoutMs: this.timeoutMs });
    this.term = new LeaderTerm({
      backplane: redis,
      keys,
      leadership: this.leadership,
      mirror: this.mirror,
      store: opts.store,
      pollStore: this.pollStore,
      budgetShare: this.budgetShare,
      union: this.union,
      bus: this.bus,
      poller: () => this.poller,
      logger: log,
      now: this.now,
      timeoutMs: this.timeoutMs,
    });
    this.states = new FeedStates((st) => this.bus.deliverStatus(st), this.now);
    for (const f of ALL_FEEDS) this.channels.set(keys.events(f.feed), f);
  }

  /**
   * Connects (waiting at most one lease period), loads the shared state
   * and starts contending. With Redis unreachable it starts degraded and
   * catches up when Redis answers.
   */
  async start(): Promise<void> {
    const b = this.backplane;
    const k = this.keys;
    b.on('up', () => void this.recover());
    b.on('down', () => this.onDown());
    // Every message waits in the bus's inbox, in the order it came (one connection), so a round's batches are handled together.
    await b.subscribe([...this.channels.keys()], (msg, ch) => {
      const f = this.channels.get(ch);
      if (f) this.bus.receive(() => this.mirror.onMessage(f, msg), true);
    });
    await b.subscribe([k.roundChannel], (msg) => this.onRound(msg));
    await b.subscribe([k.statusChannel, k.demandChannel, k.leaseChannel], (msg, ch) => this.bus.receive(() => this.onControl(ch, msg)));
    this.union.start();
    this.budgetShare.start();
    this.leadership.on('elected', (gen) => {
      this.metrics.elections.inc();
      this.metrics.generation.set(gen);
      this.term.begin(gen);
    });
    this.leadership.on('deposed', () => this.term.end());
    if (await b.connect(this.opts.leaseMs)) {
      await this.recovering;
      await this.settleEpoch();
    } else {
      this.opts.logger.warn('redis unreachable at start: serving degraded until it answers');
      this.states.down();
    }
    this.leadership.start();
    this.timer = setInterval(() => this.tick(), Math.max(100, Math.floor(this.opts.leaseMs / 3)));
    this.timer.unref();
  }

  /** Hands over the poller (after start), to wake it and republish its states at each term. */
  attach(poller: PollerHandle): void {
    this.poller = poller;
  }

  /** Whether this process may call the upstream now (leader, state loaded, Redis up, lease valid). */
  mayPoll(): boolean {
    const ok = this.term.prepared && this.backplane.up && this.leadership.mayPoll();
    this.metrics.leader.set(ok ? 1 : 0);
    return ok;
  }

  /** Every feed's state as this process reports it (`degraded` while Redis is away). */
  statuses(): FeedStatus[] {
    return this.states.current();
  }

  /** Cluster facts for `/status`. */
  info(): ClusterInfo {
    const lease = this.leadership.lease;
    return {
      node: this.id,
      role: lease.leader ? 'leader' : 'follower',
      polling: this.mayPoll(),
      generation: lease.gen ?? (lease.maxGen || null),
      backplane: this.backplane.up ? 'up' : 'down',
      epochConfirmed: this.mirror.confirmed,
      prefix: this.opts.prefix,
      leaseMs: this.opts.leaseMs,
    };
  }

  /** Releases the lease and this process's demand, then closes Redis (call after the poller stopped). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.term.end();
    this.budgetShare.stop();
    // Redis commands fail at once while it is down (no offline queue), so both always run:
    // the demand's timer and its listener on local demand are released either way.
    if (this.backplane.up) await this.leadership.stop();
    else await this.leadership.stop().catch(() => undefined);
    await this.union.stop();
    await this.backplane.close();
  }

  /**
   * Before serving, makes sure clients are welcomed with the cluster's
   * epoch: waits one lease period for a process that holds state to
   * re-seed it (after Redis lost its data), then creates it.
   */
  private async settleEpoch(): Promise<void> {
    const end = this.now() + this.opts.leaseMs;
    try {
      while (!(await this.mirror.ensureEpoch(this.now() >= end))) await new Promise((r) => setTimeout(r, 100));
    } catch (err) {
      this.opts.logger.warn({ err: (err as Error).message }, 'cluster epoch not settled at start');
    }
  }

  private onDown(): void {
    // An announced round's other messages will not come on this connection.
    this.bus.handleReceived();
    this.synced = false;
    this.term.end();
    this.metrics.backplaneUp.set(0);
    this.states.down();
  }

  /** After (re)connecting: epoch, shared state, feed states, demand, budget; then contend again. */
  private recover(): Promise<void> {
    const run = async (): Promise<void> => {
      try {
        await loadScripts(this.backplane, this.timeoutMs);
        await this.mirror.ensureEpoch(false);
        await this.mirror.resyncAll('reconnect');
        await this.loadStates();
        await this.union.sync();
        await this.budgetShare.pull();
        this.synced = this.backplane.up;
        this.metrics.backplaneUp.set(this.synced ? 1 : 0);
        this.leadership.poke();
      } catch (err) {
        this.opts.logger.warn({ err: (err as Error).message }, 'cluster state not loaded; retrying');
      }
    };
    const p = (this.recovering ?? Promise.resolve()).then(run).finally(() => {
      if (this.recovering === p) this.recovering = undefined;
    });
    this.recovering = p;
    return p;
  }

  private async loadStates(): Promise<void> {
    const raw = await this.backplane.sendCommand<string[]>(['HGETALL', this.keys.status], { timeout: this.timeoutMs });
    const shared: FeedStatus[] = [];
    for (const [, json] of pairs(raw)) {
      const st = decodeStatus(json);
      if (st) shared.push(st);
    }
    this.states.up(shared);
  }

  /** The leader announces how many batch messages its round has; a stale leader's announcement is ignored. */
  private onRound(msg: string): void {
    const r = decodeRound(msg);
    if (r !== undefined && !this.leadership.lease.stale(r.gen)) this.bus.announce(r.batches);
  }

  private onControl(channel: string, msg: string): void {
    const k = this.keys;
    if (channel === k.statusChannel) {
      const m = decodeStatusMessage(msg);
      const lease = this.leadership.lease;
      if (!m || lease.stale(m.gen)) return;
      lease.seen(m.gen);
      this.states.record(m.status);
    } else if (channel === k.demandChannel) {
      const f = ALL_FEEDS.find((x) => x.feed === msg);
      if (f) void this.union.refresh([f]);
    } else if (channel === k.leaseChannel) this.leadership.poke();
  }

  /** Periodic: retry a failed recovery, reload after a divergence, adopt a late epoch, follow the shared budget. */
  private tick(): void {
    if (!this.backplane.up) return;
    if (!this.synced) {
      if (!this.recovering) void this.recover();
      return;
    }
    this.term.ensure();
    if (!this.mirror.confirmed) void this.mirror.ensureEpoch(false).catch(() => undefined);
    if (!this.leadership.lease.leader) void this.budgetShare.pull().catch(() => undefined);
    this.mayPoll();
  }
}
