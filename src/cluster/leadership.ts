import { EventEmitter } from 'eventemitter3';
import type { Logger } from '../log.js';
import type { ClusterKeys } from './keys.js';
import { LeaseState, type LeaseTiming } from './lease.js';
import { ACQUIRE, RELEASE, RENEW, type Commander } from './scripts.js';

/**
 * Contends for the poller lease in Redis and keeps it: SET NX PX to
 * acquire (with a fencing generation from INCR), a compare-and-extend
 * script every third of the period to renew, compare-and-delete on stop.
 * The pure rules are in lease.ts.
 */

/** Events of `Leadership`. */
export interface LeadershipEvents {
  /** This process acquired the lease under generation `gen`. */
  elected: (gen: number, wiped: boolean) => void;
  /** This process lost the lease (`reason` for logs). */
  deposed: (reason: string) => void;
}

/** Options of `Leadership`. */
export interface LeadershipOptions extends LeaseTiming {
  readonly redis: Commander;
  readonly keys: ClusterKeys;
  /** This process's id in the lease. */
  readonly node: string;
  readonly logger: Logger;
  /** Whether this process may contend now (backplane up and state loaded). */
  readonly canContend: () => boolean;
  /** Clock, ms epoch; default Date.now. */
  readonly now?: () => number;
}

/** The lease loop of one process. */
export class Leadership extends EventEmitter<LeadershipEvents> {
  /** The lease state. */
  readonly lease: LeaseState;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private stopped = true;
  private fencedLogged = false;

  /** A stopped loop. */
  constructor(private readonly opts: LeadershipOptions) {
    super();
    this.lease = new LeaseState(opts);
    this.now = opts.now ?? Date.now;
  }

  /** Starts contending. */
  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  /** Tries again at once (e.g. the holder announced its release). */
  poke(): void {
    if (!this.stopped && !this.lease.leader) this.schedule(0);
  }

  /** Whether this process may call the upstream now. */
  mayPoll(): boolean {
    return this.lease.mayPoll(this.now());
  }

  /** The lease is gone for a reason found elsewhere (a fenced write). */
  lose(reason: string): void {
    if (!this.lease.leader) return;
    this.lease.lost();
    this.opts.logger.warn({ reason }, 'lost the poller lease');
    this.emit('deposed', reason);
    this.schedule(0);
  }

  /** Stops the loop and releases the lease if held. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.lease.leader) return;
    this.lease.lost();
    const k = this.opts.keys;
    await RELEASE.run(this.opts.redis, [k.lease], [this.opts.node, k.leaseChannel], this.opts.leaseMs).catch(() => undefined);
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.tick(), delayMs);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    if (this.stopped || this.running) return;
    this.running = true;
    let pttl: number | undefined;
    try {
      if (this.lease.leader) await this.renew();
      else if (this.opts.canContend()) pttl = await this.acquire();
    } catch (err) {
      this.opts.logger.debug({ err: (err as Error).message }, 'lease request failed');
    } finally {
      this.running = false;
    }
    this.noteSelfFence();
    this.schedule(this.lease.nextDelay(pttl));
  }

  private async acquire(): Promise<number | undefined> {
    const k = this.opts.keys;
    const sentAt = this.now();
    const args = [this.opts.node, String(this.opts.leaseMs), String(this.lease.maxGen + 1)];
    const r = await ACQUIRE.run<number[]>(this.opts.redis, [k.lease, k.gen], args, this.timeout());
    if (r[0] !== 1) return r[1];
    const gen = Number(r[1]);
    const wiped = r[2] === 1;
    this.lease.acquired(gen, sentAt, this.now(), wiped);
    this.fencedLogged = false;
    this.opts.logger.info({ gen, wiped }, 'acquired the poller lease');
    this.emit('elected', gen, wiped);
    return undefined;
  }

  private async renew(): Promise<void> {
    const k = this.opts.keys;
    const gen = this.lease.gen!;
    const sentAt = this.now();
    const ok = await RENEW.run<number>(this.opts.redis, [k.lease, k.gen], [this.opts.node, String(this.opts.leaseMs), String(gen)], this.timeout());
    if (this.lease.gen !== gen) return;
    if (ok === 1) {
      this.lease.renewed(sentAt);
      this.fencedLogged = false;
    } else this.lose('renewal refused: the lease expired or another process holds it');
  }

  private noteSelfFence(): void {
    if (this.fencedLogged || !this.lease.selfFenced(this.now())) return;
    this.fencedLogged = true;
    this.opts.logger.warn('cannot renew the poller lease: stopped polling until it is renewed or lost');
  }

  private timeout(): number {
    return Math.max(100, Math.floor(this.opts.leaseMs / 3));
  }
}
