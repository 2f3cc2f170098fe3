import { EventEmitter } from 'eventemitter3';
import { createClient } from 'redis';
import type { Logger } from '../log.js';
import type { Commander } from './scripts.js';

/**
 * The two Redis connections of a cluster process (commands, and pub/sub,
 * which needs its own) and whether both are usable. node-redis reconnects
 * by itself with the backoff below; commands fail at once while a
 * connection is down (no offline queue, so nothing stale runs later).
 */

/** Events of `Backplane`. */
export interface BackplaneEvents {
  /** Both connections are ready (first time, or after an outage). */
  up: () => void;
  /** A connection was lost; commands fail until `up`. */
  down: (reason: string) => void;
}

/** Options of `Backplane`. */
export interface BackplaneOptions {
  /** Redis URL (REDIS_URL). */
  readonly url: string;
  readonly logger: Logger;
  /** Connect timeout, ms; default 2000. */
  readonly connectTimeoutMs?: number;
  /** Longest reconnect delay, ms; default 2000. */
  readonly maxBackoffMs?: number;
}

/** Handler of pub/sub messages. */
export type MessageHandler = (message: string, channel: string) => void;

type Client = ReturnType<typeof createClient>;

/** Reconnect delay after `retries` failed attempts: exponential from 50 ms, capped, with jitter. */
export function reconnectDelay(retries: number, maxMs = 2000, random: () => number = Math.random): number {
  return Math.min(maxMs, 50 * 2 ** Math.min(retries, 10)) + Math.floor(random() * 100);
}

/** Command and subscriber connections to Redis. */
export class Backplane extends EventEmitter<BackplaneEvents> implements Commander {
  private readonly cmd: Client;
  private readonly sub: Client;
  private readonly subscriptions: [string[], MessageHandler][] = [];
  private isUp = false;
  private subscribed = false;
  private closed = false;
  private lastError = '';

  /** Unconnected clients for `opts.url`; `connect()` to start. */
  constructor(private readonly opts: BackplaneOptions) {
    super();
    const maxMs = opts.maxBackoffMs ?? 2000;
    this.cmd = createClient({
      url: opts.url,
      disableOfflineQueue: true,
      socket: { connectTimeout: opts.connectTimeoutMs ?? 2000, reconnectStrategy: (n: number) => reconnectDelay(n, maxMs) },
    });
    this.sub = this.cmd.duplicate();
    for (const c of [this.cmd, this.sub]) {
      c.on('error', (err: Error) => this.onError(err));
      c.on('ready', () => this.check());
      c.on('end', () => this.check());
      c.on('reconnecting', () => this.check());
    }
  }

  /** Whether both connections are ready. */
  get up(): boolean {
    return this.isUp;
  }

  /**
   * Starts both connections (they keep retrying in the background) and
   * resolves when both are ready or after `waitMs`, whichever is first.
   */
  async connect(waitMs: number): Promise<boolean> {
    const ready = new Promise<void>((resolve) => {
      if (this.isUp) return resolve();
      this.once('up', () => resolve());
    });
    for (const c of [this.cmd, this.sub]) c.connect().catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([ready, new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)))]);
    clearTimeout(timer);
    return this.isUp;
  }

  /** Subscribes `handler` to `channels` (kept across reconnects). */
  async subscribe(channels: string[], handler: MessageHandler): Promise<void> {
    this.subscriptions.push([channels, handler]);
    if (this.sub.isReady) await this.sub.subscribe(channels, handler);
  }

  /** Sends one command; rejects at once while disconnected, or after `timeout` ms without a reply. */
  sendCommand<T = unknown>(args: readonly string[], options?: { timeout?: number }): Promise<T> {
    return this.cmd.sendCommand<T>(args, options);
  }

  /** Closes both connections. */
  async close(): Promise<void> {
    this.closed = true;
    this.isUp = false;
    await Promise.all([this.cmd, this.sub].map((c) => (c.isOpen ? c.close().catch(() => c.destroy()) : undefined)));
  }

  private onError(err: Error): void {
    const msg = err.message || String(err);
    if (!this.closed && msg !== this.lastError) this.opts.logger.warn({ err: msg }, 'redis connection error');
    this.lastError = msg;
    this.check();
  }

  private check(): void {
    if (this.closed) return;
    const up = this.cmd.isReady && this.sub.isReady;
    if (up && !this.subscribed) return void this.subscribeAll();
    if (up === this.isUp) return;
    this.isUp = up;
    if (up) {
      this.lastError = '';
      this.opts.logger.info('redis backplane up');
      this.emit('up');
    } else {
      this.opts.logger.warn('redis backplane down; clients stay connected and are told the feeds are degraded');
      this.emit('down', this.lastError || 'connection lost');
    }
  }

  /** The first subscription happens once the subscriber is ready; node-redis renews it on every reconnect. */
  private subscribeAll(): void {
    this.subscribed = true;
    Promise.all(this.subscriptions.map(([ch, h]) => this.sub.subscribe(ch, h))).then(
      () => this.check(),
      (err: unknown) => {
        this.subscribed = false;
        this.opts.logger.warn({ err: (err as Error).message }, 'redis subscribe failed; retrying');
        setTimeout(() => this.check(), 200).unref();
      },
    );
  }
}
