import WebSocket from 'ws';
import { io, type Socket } from 'socket.io-client';
import { FEED, marketTopics, wallMs } from '../lib/market.js';
import { LatencyHistogram, SeqTracker, emptyTotals, summarise, type ContinuityTotals, type LatencySummary } from '../lib/stats.js';
import { bounded } from '../lib/bounded.js';
import { clientSymbols, type SubsLayout } from '../lib/subs.js';
import { sourceAddress } from '../lib/addresses.js';
import { feedsOf } from '../lib/listing.js';
import type { PeerName } from '../server/peer.js';
import { TopicSlots, scanUpdates, type FrameSink } from './scan.js';

/**
 * The load generator's clients: N connections to one peer in this
 * process, each subscribed to its layout's topics, checking every
 * update's `seq` and recording its latency. Kept cheap: frames of
 * updates are scanned rather than parsed (see scan.ts; one frame in
 * `VERIFY_EVERY` is also parsed with `JSON.parse` and compared, and any
 * difference turns scanning off), one clock read per frame, no allocation
 * per update. socket.io-client parses its own packets.
 *
 * With a `stampField` (the end-to-end scenario) latency runs from the
 * value of that row field in each patch's operations rather than from the
 * message's `ts` (the scanner reads it too).
 */

/** One scanned frame in this many is checked against `JSON.parse`. */
export const VERIFY_EVERY = 64;

/** How long a subscription may take to be confirmed before its client counts as failed, ms. */
const SUBSCRIBE_TIMEOUT_MS = 60_000;

/** What a client reads off a message; every peer's messages carry these. */
interface Msg {
  type?: string;
  topic?: string;
  seq?: number;
  ts?: number;
  ok?: number;
  message?: string;
  code?: string;
  ops?: { path?: string; value?: unknown }[];
}

interface Client {
  /** Index in the layout (it picks the source address). */
  readonly index: number;
  readonly symbols: Int32Array;
  readonly tracker: SeqTracker;
  readonly sink: FrameSink;
  ws?: WebSocket;
  sio?: Socket;
  /** The connection opened (a failed one is not subscribed). */
  open: boolean;
  /** Snapshots still owed before the subscription counts as done (bridge). */
  owed: number;
  /** Subscribe requests not yet confirmed. */
  pending: number;
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
  /** Topic of each symbol index; default the synthetic market's (`quote.kospi.<code>`). */
  readonly topics?: readonly string[];
  /**
   * A row field whose value, in µs since the epoch, is when the change left
   * its origin: latency is measured from it (not from `ts`), and a patch
   * without it counts as `unstamped`.
   */
  readonly stampField?: string;
  /** Clients per loopback source address (127.0.0.2, 127.0.0.3, …); default the system's choice for all. */
  readonly perAddress?: number;
}

/** Which clients of a layout a pool runs: `count` of them from index `first`. */
export interface ClientRange {
  readonly first: number;
  readonly count: number;
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
  /** Connections that closed without being asked to, and the last reason. */
  disconnects = 0;
  lastDisconnect = '';
  /** Patches without a latency origin: no stamp field (with a `stampField`), or no `ts`. */
  unstamped = 0;
  private closing = false;
  /** Scanned frames checked against JSON.parse, and how many disagreed. */
  verified = 0;
  scanMismatches = 0;
  private scanning = true;
  private scannedFrames = 0;
  private now = 0;
  // The frame being scanned, for messages the scanner hands back by range.
  private frame: Buffer = Buffer.alloc(0);
  private readonly slots: TopicSlots;
  private readonly topics: readonly string[];
  private readonly clients: Client[] = [];
  private readonly stampPath: string;
  /** What precedes the stamp's value in a patch's operations, for the scanner. */
  private readonly stampKey: string | undefined;

  /** A pool for `target`; nothing connects until `connect`. */
  constructor(readonly target: Target) {
    this.topics = target.topics ?? marketTopics(target.symbols, target.seed);
    this.slots = new TopicSlots(this.topics, `${FEED.channel}.${FEED.market}.`);
    this.stampPath = target.stampField === undefined ? '' : '/' + target.stampField;
    this.stampKey = target.stampField === undefined ? undefined : `"path":${JSON.stringify(this.stampPath)},"value":`;
  }

  /** The URL clients connect to. */
  get url(): string {
    const base = `ws://127.0.0.1:${this.target.port}`;
    return this.target.peer === 'bridge' ? `${base}/ws` : this.target.peer === 'socketio' ? `http://127.0.0.1:${this.target.port}` : `${base}/`;
  }

  /**
   * Opens one connection per client of `layout` in `range` (default all; at
   * most `concurrency` handshakes at a time), then subscribes them all (same
   * bound).
   */
  async connect(layout: SubsLayout, concurrency: number, range: ClientRange = { first: 0, count: layout.clients }): Promise<ConnectResult> {
    for (let c = range.first; c < range.first + range.count; c++) {
      this.clients.push(this.client(clientSymbols(layout, c), c));
    }
    let failed = 0;
    const t0 = performance.now();
    await bounded(this.clients, concurrency, (c) => this.open(c).catch(() => void failed++));
    const t1 = performance.now();
    await bounded(
      this.clients.filter((c) => c.open),
      concurrency,
      (c) => this.subscribe(c).catch(() => void failed++),
    );
    const t2 = performance.now();
    return { clients: this.clients.length, openMs: t1 - t0, subscribeMs: t2 - t1, failed };
  }

  /** Cumulative figures; the latency histogram covers the time since the previous mark and is reset. */
  mark(): LoadCounts {
    const latency = summarise(this.latency);
    this.latency.reset();
    return {
      received: this.received,
      snapshots: this.snapshots,
      frames: this.frames,
      errors: this.errors,
      verified: this.verified,
      scanMismatches: this.scanMismatches,
      unstamped: this.unstamped,
      totals: { ...this.totals },
      latency,
    };
  }

  /** Updates published (final seq per symbol) but not received by some subscriber. */
  tailLoss(finalSeqs: readonly number[]): number {
    let n = 0;
    for (const c of this.clients) n += c.tracker.tailLoss((i) => finalSeqs[i] ?? 0);
    return n;
  }

  /** Closes every connection. */
  close(): void {
    this.closing = true;
    for (const c of this.clients) {
      c.ws?.terminate();
      c.sio?.disconnect();
    }
    this.clients.length = 0;
  }

  private open(c: Client): Promise<void> {
    const localAddress = this.target.perAddress ? sourceAddress(c.index, this.target.perAddress) : undefined;
    if (this.target.peer === 'socketio') {
      // engine.io-client hands `localAddress` to ws, though its types do not list it.
      const opts = { transports: ['websocket'], forceNew: true, reconnection: false, timeout: 60_000, ...(localAddress ? { localAddress } : {}) };
      const s = io(this.url, opts);
      c.sio = s;
      s.on('disconnect', (reason) => this.lost(`socket.io: ${reason}`));
      s.on('m', (m: Msg) => {
        this.now = wallMs();
        this.frames++;
        this.onMsg(c, m);
      });
      return new Promise((resolve, reject) => {
        s.once('connect', () => {
          c.open = true;
          resolve();
        });
        s.once('connect_error', (e) => reject(e));
      });
    }
    const ws = new WebSocket(this.url, { perMessageDeflate: false, skipUTF8Validation: true, ...(localAddress ? { localAddress } : {}) });
    c.ws = ws;
    ws.on('message', (data: Buffer) => this.onFrame(c, data));
    ws.on('close', (code, reason) => {
      if (c.open) this.lost(`close ${code} ${reason.toString()}`);
    });
    return new Promise((resolve, reject) => {
      ws.once('open', () => {
        c.open = true;
        resolve();
      });
      ws.once('error', (e) => reject(e));
    });
  }

  private subscribe(c: Client): Promise<void> {
    const topics = Array.from(c.symbols, (i) => this.topics[i]!);
    const done = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('subscription not confirmed')), SUBSCRIBE_TIMEOUT_MS);
      c.done = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    if (this.target.peer === 'bridge') {
      for (const i of c.symbols) c.tracker.baseline(i, 0);
      c.owed = topics.length;
      const feeds = feedsOf(topics);
      c.pending = feeds.length;
      feeds.forEach((f, i) => c.ws!.send(JSON.stringify({ op: 'subscribe', id: i + 1, ...f })));
    } else {
      // Ticks start after every client subscribed, so every topic is at seq 1.
      for (const i of c.symbols) c.tracker.baseline(i, 1);
      if (c.sio) c.sio.emit('sub', topics, () => this.acked(c));
      else c.ws!.send(JSON.stringify({ sub: topics }));
    }
    return done;
  }

  private lost(reason: string): void {
    if (this.closing) return;
    this.disconnects++;
    this.lastDisconnect = reason;
  }

  private acked(c: Client): void {
    if (--c.pending > 0) return;
    c.acked = true;
    if (c.owed <= 0) c.done?.();
  }

  private client(symbols: Int32Array, index: number): Client {
    const c: Client = {
      index,
      symbols,
      tracker: new SeqTracker(this.target.symbols, this.totals),
      open: false,
      owed: 0,
      pending: 1,
      acked: false,
      sink: {
        patch: (slot, seq, ts) => this.onPatch(c, slot, seq, ts),
        snapshot: (slot, seq) => this.onSnapshot(c, slot, seq),
        unknown: () => void this.totals.unexpected++,
        other: (start, end) => this.onMsg(c, JSON.parse(this.frame.toString('utf8', start, end)) as Msg),
      },
    };
    return c;
  }

  private onFrame(c: Client, data: Buffer): void {
    this.now = wallMs();
    this.frames++;
    if (this.scanning) {
      const text = data.toString('latin1');
      this.frame = data;
      if (++this.scannedFrames % VERIFY_EVERY !== 0) {
        if (scanUpdates(text, this.slots, c.sink, this.stampKey) > 0) return;
      } else {
        const msgs = this.verify(text, data);
        if (msgs) {
          for (const m of msgs) this.onMsg(c, m);
          return;
        }
      }
    }
    const v = JSON.parse(data.toString()) as Msg | Msg[];
    if (Array.isArray(v)) for (let i = 0; i < v.length; i++) this.onMsg(c, v[i]!);
    else this.onMsg(c, v);
  }

  /**
   * Scans a frame into a recorder and compares it with what JSON.parse
   * makes of it; returns the parsed messages (undefined when the scanner
   * found no message, and the frame is left to the plain parse).
   */
  private verify(text: string, data: Buffer): Msg[] | undefined {
    type Rec = [string, number, number, number];
    const seen: Rec[] = [];
    const n = scanUpdates(
      text,
      this.slots,
      {
        patch: (slot, seq, ts) => seen.push(['patch', slot, seq, ts]),
        snapshot: (slot, seq) => seen.push(['snapshot', slot, seq, 0]),
        unknown: () => seen.push(['unknown', -1, -1, 0]),
        other: () => seen.push(['other', -1, -1, 0]),
      },
      this.stampKey,
    );
    if (n === 0) return undefined;
    const v = JSON.parse(data.toString()) as Msg | Msg[];
    const msgs = Array.isArray(v) ? v : [v];
    const parsed = msgs.map((m): Rec => {
      if (m.type !== 'patch' && m.type !== 'snapshot') return ['other', -1, -1, 0];
      return [m.type, this.slots.get(m.topic ?? ''), m.seq ?? -1, m.type === 'patch' ? this.originOf(m) : 0];
    });
    this.verified++;
    const same =
      seen.length === parsed.length &&
      seen.every((a, i) => {
        const b = parsed[i]!;
        const ts = Math.abs(a[3] - b[3]) < 1e-6 || (Number.isNaN(a[3]) && Number.isNaN(b[3]));
        return a[0] === b[0] && a[1] === b[1] && a[2] === b[2] && ts;
      });
    if (!same) {
      this.scanMismatches++;
      this.scanning = false;
    }
    return msgs;
  }

  /** Where a parsed patch's latency starts, ms: its stamp field's value with a `stampField` (NaN when missing), else its `ts`. */
  private originOf(m: Msg): number {
    if (!this.stampPath) return m.ts ?? NaN;
    const op = m.ops?.find((o) => o.path === this.stampPath);
    return typeof op?.value === 'number' ? op.value / 1000 : NaN;
  }

  private onPatch(c: Client, slot: number, seq: number, ts: number): void {
    c.tracker.update(slot, seq);
    this.received++;
    if (Number.isNaN(ts)) this.unstamped++;
    else this.latency.record(this.now - ts);
  }

  private onSnapshot(c: Client, slot: number, seq: number): void {
    c.tracker.snapshot(slot, seq);
    this.snapshots++;
    if (--c.owed === 0 && c.acked) c.done?.();
  }

  private onMsg(c: Client, m: Msg): void {
    switch (m.type) {
      case 'patch':
      case 'snapshot': {
        const slot = this.slots.get(m.topic ?? '');
        if (slot < 0) this.totals.unexpected++;
        else if (m.type === 'patch') this.onPatch(c, slot, m.seq!, this.originOf(m));
        else this.onSnapshot(c, slot, m.seq!);
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

/** Cumulative counters of a pool. */
export interface LoadCounts {
  readonly received: number;
  readonly snapshots: number;
  readonly frames: number;
  readonly errors: number;
  readonly verified: number;
  readonly scanMismatches: number;
  readonly unstamped: number;
  readonly totals: ContinuityTotals;
  readonly latency: LatencySummary;
}
