/**
 * Pacing of outgoing messages: a token bucket that keeps the client under the
 * server's message rate limit (`welcome.limits.maxMessagesPerSecond`), so a
 * burst of resyncs or queued requests is spread out instead of getting the
 * connection closed with 1008. See docs/PROTOCOL.md §7.
 */

/** Options of `Outbox`. */
export interface OutboxOptions {
  /** Messages per second sustained. */
  readonly rate: number;
  /** Messages that may go at once after a quiet spell. */
  readonly burst: number;
  /** Monotonic clock, ms; default `performance.now`. */
  readonly now?: () => number;
}

/** Share of the server's sustained rate the client allows itself. */
export const RATE_SHARE = 0.8;

/** A paced queue in front of one connection's `send`. */
export class Outbox {
  private readonly queue: string[] = [];
  private readonly now: () => number;
  private rate: number;
  private burst: number;
  private tokens: number;
  private last: number;
  private timer: ReturnType<typeof setTimeout> | undefined;

  /** An outbox writing to `send`; the bucket starts full. */
  constructor(
    private readonly send: (text: string) => void,
    opts: OutboxOptions,
  ) {
    this.now = opts.now ?? (() => performance.now());
    this.rate = Math.max(0.1, opts.rate);
    this.burst = Math.max(1, opts.burst);
    this.tokens = this.burst;
    this.last = this.now();
  }

  /** Messages waiting for their turn. */
  get size(): number {
    return this.queue.length;
  }

  /** Changes the rate (e.g. to the limits announced by `welcome`). */
  setRate(rate: number, burst: number): void {
    this.refill();
    this.rate = Math.max(0.1, rate);
    this.burst = Math.max(1, burst);
    this.tokens = Math.min(this.tokens, this.burst);
  }

  /** Sends now if the bucket allows and nothing waits; otherwise queues in order. */
  push(text: string): void {
    this.refill();
    if (this.queue.length === 0 && this.tokens >= 1) {
      this.tokens -= 1;
      this.send(text);
      return;
    }
    this.queue.push(text);
    this.schedule();
  }

  /** Drops every queued message (their connection is gone) and refills the bucket. */
  clear(): void {
    this.queue.length = 0;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.tokens = this.burst;
    this.last = this.now();
  }

  private refill(): void {
    const t = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((t - this.last) * this.rate) / 1000);
    this.last = t;
  }

  private schedule(): void {
    if (this.timer !== undefined) return;
    const wait = Math.max(1, Math.ceil(((1 - this.tokens) * 1000) / this.rate));
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.drain();
    }, wait);
  }

  private drain(): void {
    this.refill();
    while (this.queue.length > 0 && this.tokens >= 1) {
      this.tokens -= 1;
      this.send(this.queue.shift()!);
    }
    if (this.queue.length > 0) this.schedule();
  }
}
