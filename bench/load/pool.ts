import WebSocket from 'ws';
import { io, type Socket } from 'socket.io-client';
import { marketTopics, wallMs } from '../lib/market.js';
import { LatencyHistogram, SeqTracker, emptyTotals, type ContinuityTotals } from '../lib/stats.js';
import { clientSymbols, type SubsLayout } from '../lib/subs.js';
import type { PeerName } from '../server/peer.js';

/**
 * The load generator's clients: N connections to one peer in this
 * process, each subscribed to its layout's topics, checking every
 * update's `seq` and recording its latency. Kept cheap: one `JSON.parse`
 * per frame (socket.io-client parses its own packets), one clock read per
 * frame, no other allocation per update.
 */

/** What a client reads off a message; every peer's messages carry these. */
interface Msg {
  type?: string;
  topic?: string;
  seq?: number;
  ts?: number;
  ok?: number;
  message?: string;
  code?: string;
}

interface Client {
  readonly symbols: Int32Array;
  readonly tracker: SeqTracker;
  ws?: WebSocket;
  sio?: Socket;
  /** Snapshots still owed before the subscription counts as done (bridge). */
  owed: number;
  acked: boolean;
  done?: () => void;
}

/** Where the peer listens and how the clients speak to it. */
export interface Target {
  readonly peer: PeerName;
  readonly port: number;
  /** Symbols of the market and its seed (for topic slots). */
  readonly symbols: number;
  readonly seed: number;
}

/** Phases of connecting a pool, ms. */
export interface ConnectResult {
  readonly clients: number;
  /** From the first connection attempt until every connection was open. */
  readonly openMs: number;
  /** From the first subscription request until every subscription was confirmed (and its snapshots in). */
  readonly subscribeMs: number;
  readonly failed: number;
}

/** A pool of load clients against one peer. */
export class LoadPool {
  readonly totals: ContinuityTotals = emptyTotals();
  readonly latency = new LatencyHistogram();
  /** Updates (patches) received. */
  received = 0;
  /** Snapshots received. */
  snapshots = 0;
  /** WebSocket frames (socket.io: packets) received. */
  frames = 0;
  /** Error messages received, and the last one. */
  errors = 0;
  lastError = '';
  private readonly slot = new Map<string, number>();
  private readonly topics: readonly string[];
  private readonly clients: Client[] = [];

  /** A pool for `target`; nothing connects until `connect`. */
  constructor(readonly target: Target) {
    this.topics = marketTopics(target.symbols, target.seed);
    this.topics.forEach((t, i) => this.slot.set(t, i));
  }

  /** The URL clients connect to. */
  get url(): string {
    const base = `ws://127.0.0.1:${this.target.port}`;
    return this.target.peer === 'bridge' ? `${base}/ws` : this.target.peer === 'socketio' ? `http://127.0.0.1:${this.target.port}` : `${base}/`;
  }

  /**
   * Opens one connection per client of `layout` (at most `concurrency`
   * handshakes at a time), then subscribes them all (same bound).
   */
  async connect(layout: SubsLayout, concurrency: number): Promise<ConnectResult> {
    for (let c = 0; c < layout.clients; c++) {
      const symbols = clientSymbols(layout, c);
      this.clients.push({ symbols, tracker: new SeqTracker(this.target.symbols, this.totals), owed: 0, acked: false });
    }
    let failed = 0;
    const t0 = performance.now();
    await bounded(this.clients, concurrency, (c) => this.open(c).catch(() => void failed++));
    const t1 = performance.now();
    await bounded(
      this.clients.filter((c) => c.ws !== undefined || c.sio !== undefined),
      concurrency,
      (c) => this.subscribe(c).catch(() => void failed++),
    );
    const t2 = performance.now();
    return { clients: this.clients.length, openMs: t1 - t0, subscribeMs: t2 - t1, failed };
  }

  /** Cumulative figures; the latency histogram covers the time since the previous mark and is reset. */
  mark(): { received: number; snapshots: number; frames: number; errors: number; totals: ContinuityTotals; latency: LatencySummary } {
    const latency = summarise(this.latency);
    this.latency.reset();
    return { received: this.received, snapshots: this.snapshots, frames: this.frames, errors: this.errors, totals: { ...this.totals }, latency };
  }

  /** Updates published (final seq per symbol) but not received by some subscriber. */
  tailLoss(finalSeqs: readonly number[]): number {
    let n = 0;
    for (const c of this.clients) n += c.tracker.tailLoss((i) => finalSeqs[i] ?? 0);
    return n;
  }

  /** Closes every connection. */
  close(): void {
    for (const c of this.clients) {
      c.ws?.terminate();
      c.sio?.disconnect();
    }
    this.clients.length = 0;
  }

  private open(c: Client): Promise<void> {
    if (this.target.peer === 'socketio') {
      const s = io(this.url, { transports: ['websocket'], forceNew: true, reconnection: false, timeout: 60_000 });
      c.sio = s;
      s.on('m', (m: Msg) => {
        this.frames++;
        this.onMsg(c, m, wallMs());
      });
      return new Promise((resolve, reject) => {
        s.once('connect', () => resolve());
        s.once('connect_error', (e) => reject(e));
      });
    }
    const ws = new WebSocket(this.url, { perMessageDeflate: false, skipUTF8Validation: true });
    c.ws = ws;
    ws.on('message', (data: Buffer) => this.onFrame(c, data));
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', (e) => reject(e));
    });
  }

  private subscribe(c: Client): Promise<void> {
    const topics = Array.from(c.symbols, (i) => this.topicOfSlot(i));
    const done = new Promise<void>((resolve) => (c.done = resolve));
    if (this.target.peer === 'bridge') {
      for (const i of c.symbols) c.tracker.baseline(i, 0);
      c.owed = topics.length;
      const codes = topics.map((t) => t.slice(t.lastIndexOf('.') + 1));
      c.ws!.send(JSON.stringify({ op: 'subscribe', id: 1, channel: 'quote', market: 'kospi', codes }));
    } else {
      // Ticks start after every client subscribed, so every topic is at seq 1.
      for (const i of c.symbols) c.tracker.baseline(i, 1);
      if (c.sio) c.sio.emit('sub', topics, () => this.acked(c));
      else c.ws!.send(JSON.stringify({ sub: topics }));
    }
    return done;
  }

  private topicOfSlot(i: number): string {
    return this.topics[i]!;
  }

  private acked(c: Client): void {
    c.acked = true;
    if (c.owed <= 0) c.done?.();
  }

  private onFrame(c: Client, data: Buffer): void {
    const now = wallMs();
    this.frames++;
    const v = JSON.parse(data.toString()) as Msg | Msg[];
    if (Array.isArray(v)) for (let i = 0; i < v.length; i++) this.onMsg(c, v[i]!, now);
    else this.onMsg(c, v, now);
  }

  private onMsg(c: Client, m: Msg, now: number): void {
    switch (m.type) {
      case 'patch': {
        const slot = this.slot.get(m.topic!);
        if (slot === undefined) {
          this.totals.unexpected++;
          return;
        }
        c.tracker.update(slot, m.seq!);
        this.received++;
        this.latency.record(now - m.ts!);
        return;
      }
      case 'snapshot': {
        const slot = this.slot.get(m.topic!);
        if (slot === undefined) {
          this.totals.unexpected++;
          return;
        }
        c.tracker.snapshot(slot, m.seq!);
        this.snapshots++;
        if (--c.owed === 0 && c.acked) c.done?.();
        return;
      }
      case 'subscribed':
        this.acked(c);
        return;
      case 'error':
        this.errors++;
        this.lastError = `${m.code}: ${m.message}`;
        return;
      case undefined:
        if (m.ok !== undefined) this.acked(c);
        return;
      default:
        // welcome, status, pong: not part of the measurement.
        return;
    }
  }
}

/** Latency percentiles of a window, ms. */
export interface LatencySummary {
  readonly count: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly p999: number;
  readonly max: number;
  readonly mean: number;
  readonly negative: number;
}

/** The percentiles of a histogram (NaN when empty). */
export function summarise(h: LatencyHistogram): LatencySummary {
  return {
    count: h.count,
    p50: h.percentile(50),
    p90: h.percentile(90),
    p99: h.percentile(99),
    p999: h.percentile(99.9),
    max: h.count ? h.max : NaN,
    mean: h.mean,
    negative: h.negative,
  };
}

/** Runs `fn` over `items` with at most `limit` in flight. */
export async function bounded<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
}
