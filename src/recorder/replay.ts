import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { z } from 'zod';
import type { Logger } from '../log.js';
import { CLOSE_CODES } from '../protocol/errors.js';
import { applyOps } from '../protocol/patch.js';
import type { Row } from '../protocol/row.js';
import type { Limits, Channel, Market } from '../protocol/constants.js';
import type { PatchOp } from '../protocol/messages.js';
import { feedOf, parseTopic } from '../protocol/topics.js';
import { snapshotFrameOf, snapshotHead, snapshotTail } from '../state/frames.js';
import { errorFrame } from '../gateway/errors.js';
import { parseClientFrame, resolveTarget, wildcardTopic } from '../gateway/requests.js';
import { welcomeFrame } from '../gateway/welcome.js';
import { kstMs } from './format.js';
import { readDay, segments, type Damage } from './reader.js';

/**
 * Replay over WebSocket (`/ws/replay?date=YYYYMMDD&from=HHMMSS&to=HHMMSS&speed=N`):
 * protocol v1 unchanged, played from a recording. A subscribe gets each
 * topic's snapshot as it stood at the replay clock (recorded seq and ts);
 * then the recorded patches with `from` ≤ ts < `to` come in recorded order
 * at `speed` (1–1000, or `max`; the replay clock starts with the first
 * subscribe), byte for byte the frames live clients got,
 * and the recorded statuses too. At `to`, or at the end of the recording,
 * each subscribed feed gets `status` `closed` (`replay ended`) and the socket
 * closes with 1000. See docs/REPLAY.md.
 */

/** The replay's query, validated. */
export const ReplayQuery = z
  .object({
    date: z.string().regex(/^\d{8}$/, 'date must be YYYYMMDD'),
    from: z.string().regex(/^([01]\d|2[0-3])[0-5]\d[0-5]\d$/, 'from must be HHMMSS (KST)').default('000000'),
    to: z.string().regex(/^([01]\d|2[0-3])[0-5]\d[0-5]\d$/, 'to must be HHMMSS (KST)').default('235959'),
    speed: z
      .string()
      .default('1')
      .transform((s) => (s === 'max' ? ('max' as const) : Number(s)))
      .refine((s) => s === 'max' || (Number.isInteger(s) && s >= 1 && s <= 1000), 'speed must be an integer from 1 to 1000, or max'),
  })
  .refine((q) => q.from < q.to, 'from must be before to');
/** The replay's query (type). */
export type ReplayQuery = z.infer<typeof ReplayQuery>;

/** Options of `ReplayServer`. */
export interface ReplayServerOptions {
  /** The recordings directory. */
  readonly dir: string;
  readonly logger: Logger;
  readonly limits: Limits;
  readonly heartbeatMs: number;
  readonly server: string;
  /** Bytes waiting on a replay socket past which it is closed (4008), as for live clients. */
  readonly closeBytes: number;
  /** How long a replay may wait for its client to read before it is closed (4008), ms; default 30,000 (as behind live clients). */
  readonly maxBehindMs?: number;
  /** Counts damage found while replaying. */
  readonly onDamage?: (d: Damage) => void;
  /** Counts closes the server makes, by close code (as krx_server_closes_total). */
  readonly onClose?: (code: number) => void;
}

/** A refusal of a replay upgrade. */
export interface ReplayRefusal {
  readonly status: number;
  readonly code: string;
  readonly message: string;
}

/** Replay connections of one bridge. */
export class ReplayServer {
  private readonly wss: WebSocketServer;
  private readonly open = new Set<ReplayConnection>();

  /** A server of replays from `opts.dir`. */
  constructor(private readonly opts: ReplayServerOptions) {
    // closeTimeout: a peer that stopped reading never answers the close frame; it is cut after 5 s, as on /ws.
    const extra = { closeTimeout: 5000 };
    this.wss = new WebSocketServer({ noServer: true, maxPayload: opts.limits.maxPayloadBytes, perMessageDeflate: false, clientTracking: false, ...extra });
  }

  /** Checks a replay request: a query that is valid and a recording that covers it; the query, or why not. */
  async check(url: string | undefined): Promise<{ ok: true; query: ReplayQuery } | { ok: false; refusal: ReplayRefusal }> {
    const q = (url ?? '').indexOf('?');
    const params = Object.fromEntries(new URLSearchParams(q < 0 ? '' : (url ?? '').slice(q + 1)));
    const r = ReplayQuery.safeParse(params);
    if (!r.success) return { ok: false, refusal: { status: 400, code: 'bad_request', message: r.error.issues.map((i) => i.message).join('; ') } };
    const segs = await segments(this.opts.dir, r.data.date);
    if (segs.length === 0) return { ok: false, refusal: { status: 404, code: 'not_recorded', message: `no recording of ${r.data.date}` } };
    if (segs[0]!.start > r.data.to) return { ok: false, refusal: { status: 404, code: 'not_recorded', message: `the recording of ${r.data.date} starts at ${segs[0]!.start}, after ${r.data.to}` } };
    return { ok: true, query: r.data };
  }

  /** Completes the upgrade of a checked request and plays the replay. */
  accept(req: IncomingMessage, socket: Duplex, head: Buffer, query: ReplayQuery): void {
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      const c = new ReplayConnection(ws, query, this.opts, () => this.open.delete(c));
      this.open.add(c);
      void c.run();
    });
  }

  /** Closes every replay (1001). */
  close(): void {
    for (const c of this.open) c.stop(CLOSE_CODES.goingAway.code, CLOSE_CODES.goingAway.reason);
  }

  /** Open replay connections. */
  get size(): number {
    return this.open.size;
  }
}

interface TopicState {
  row: Row;
  seq: number;
  ts: number;
  crc: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One replay connection: reads the recording and plays it to its subscriptions. */
class ReplayConnection {
  private readonly state = new Map<string, TopicState>();
  private readonly statuses = new Map<string, string>();
  private readonly topics = new Set<string>();
  private readonly wildcards = new Set<string>();
  private clock: number;
  private ready: Promise<void>;
  private markReady!: () => void;
  private subscribed: Promise<void>;
  private markSubscribed!: () => void;
  private ended = false;
  private lastSeen = Date.now();
  private readonly beat: NodeJS.Timeout;

  constructor(
    private readonly ws: WebSocket,
    private readonly q: ReplayQuery,
    private readonly opts: ReplayServerOptions,
    private readonly onGone: () => void,
  ) {
    this.clock = kstMs(q.date, q.from);
    this.ready = new Promise((r) => (this.markReady = r));
    this.subscribed = new Promise((r) => (this.markSubscribed = r));
    ws.on('message', (data) => void this.onMessage(String(data)));
    ws.on('pong', () => (this.lastSeen = Date.now()));
    ws.on('close', () => {
      this.ended = true;
      this.markSubscribed();
      clearInterval(this.beat);
      this.onGone();
    });
    ws.on('error', () => undefined);
    this.beat = setInterval(() => {
      if (Date.now() - this.lastSeen > 2 * opts.heartbeatMs) this.ws.terminate();
      else this.ws.ping();
    }, opts.heartbeatMs);
    this.beat.unref();
    this.send(welcomeFrame(opts.server, `replay-${q.date}`, opts.heartbeatMs, opts.limits, Date.now(), { date: q.date, from: q.from, to: q.to, speed: q.speed }));
  }

  /** Ends the replay with a close code. */
  stop(code: number, reason: string): void {
    if (this.ended) return;
    this.ended = true;
    this.opts.onClose?.(code);
    this.ws.close(code, reason);
  }

  /** Reads the recording up to `from` (the state then), then plays it until `to`. */
  async run(): Promise<void> {
    const from = kstMs(this.q.date, this.q.from);
    const to = kstMs(this.q.date, this.q.to);
    let playing = false;
    let wallStart = 0;
    try {
      for await (const line of readDay(this.opts.dir, this.q.date, this.q.from, (d) => this.opts.onDamage?.(d))) {
        if (this.ended) return;
        if (line.k === 'r') {
          const had = this.state.get(line.topic);
          this.state.set(line.topic, { row: line.row as Row, seq: line.seq, ts: line.ts, crc: line.crc });
          // A keyframe while playing that differs (a process restarted meanwhile): subscribers get it as a snapshot.
          if (playing && (had === undefined || had.seq !== line.seq) && this.receives(line.topic)) this.send(this.snapshotOf(line.topic)!);
          continue;
        }
        if (line.k === 'S') {
          this.statuses.set(line.feed, line.f);
          continue;
        }
        if (line.k !== 'c' && line.k !== 's') continue;
        if (line.t >= to) break;
        if (line.t >= from && !playing) {
          playing = true;
          this.markReady();
          // The replay clock starts with the client's first subscribe: nothing plays to nobody.
          await this.subscribed;
          if (this.ended) return;
          wallStart = Date.now();
        }
        if (playing) {
          await this.pace(wallStart, from, line.t);
          if (this.ended) return;
          this.clock = line.t;
        }
        if (line.k === 'c') this.applyChange(line.topic, line.seq, line.f, playing);
        else {
          this.statuses.set(line.feed, line.f);
          if (playing && this.wantsFeed(line.feed)) this.send(line.f);
        }
      }
      this.markReady();
      this.clock = Math.max(this.clock, Math.min(to, Date.now()));
      await this.finish();
    } catch (err) {
      this.opts.logger.error({ err: (err as Error).message }, 'replay failed');
      this.markReady();
      this.stop(CLOSE_CODES.internal.code, CLOSE_CODES.internal.reason);
    }
  }

  /** Waits until the recorded moment `t` is due at the replay's speed (and the socket has room). */
  private async pace(wallStart: number, from: number, t: number): Promise<void> {
    if (this.q.speed !== 'max') {
      const due = wallStart + (t - from) / this.q.speed;
      const wait = due - Date.now();
      if (wait > 0) await sleep(wait);
    }
    // A client that does not read: wait for room, and past the live clients' limits (bytes, or time behind) close it (4008).
    const since = Date.now();
    while (!this.ended && this.ws.bufferedAmount > 1 << 20) {
      if (this.ws.bufferedAmount > this.opts.closeBytes || Date.now() - since > (this.opts.maxBehindMs ?? 30_000)) {
        return this.stop(CLOSE_CODES.slowConsumer.code, CLOSE_CODES.slowConsumer.reason);
      }
      await sleep(20);
    }
  }

  private applyChange(topic: string, seq: number, frame: string, playing: boolean): void {
    const msg = JSON.parse(frame) as { type: string; ts: number; crc: number; data?: Row; ops?: PatchOp[] };
    if (msg.type === 'snapshot' && msg.data) this.state.set(topic, { row: msg.data, seq, ts: msg.ts, crc: msg.crc });
    else if (msg.type === 'patch' && msg.ops) {
      const held = this.state.get(topic);
      const row = held ? applyOps(held.row, msg.ops) : undefined;
      if (row) this.state.set(topic, { row, seq, ts: msg.ts, crc: msg.crc });
    }
    if (playing && this.receives(topic)) this.send(frame);
  }

  private async finish(): Promise<void> {
    const feeds = new Set<string>([...this.wildcards]);
    for (const t of this.topics) {
      const p = parseTopic(t);
      if (p) feeds.add(feedOf(p.channel, p.market));
    }
    for (const feed of feeds) {
      const [channel, market] = feed.split('.') as [Channel, Market];
      this.send(JSON.stringify({ type: 'status', market, channel, state: 'closed', intervalMs: 0, reason: 'replay ended', ts: this.clock }));
    }
    while (!this.ended && this.ws.bufferedAmount > 0) await sleep(10);
    this.stop(CLOSE_CODES.normal.code, 'replay ended');
  }

  private receives(topic: string): boolean {
    if (this.topics.has(topic)) return true;
    const p = parseTopic(topic);
    return p !== undefined && this.wildcards.has(feedOf(p.channel, p.market));
  }

  private wantsFeed(feed: string): boolean {
    if (this.wildcards.has(feed)) return true;
    for (const t of this.topics) if (t.startsWith(`${feed}.`)) return true;
    return false;
  }

  private snapshotOf(topic: string): string | undefined {
    const s = this.state.get(topic);
    return s ? snapshotFrameOf(snapshotHead(topic), s.seq, s.ts, snapshotTail(s.row, s.crc)) : undefined;
  }

  private async onMessage(text: string): Promise<void> {
    this.lastSeen = Date.now();
    // Answers wait for the state at `from`: a subscribe gets the snapshots as they stood then.
    await this.ready;
    if (this.ended) return;
    const parsed = parseClientFrame(text);
    if (!parsed.ok) return this.send(errorFrame(parsed.error, parsed.id));
    const m = parsed.msg;
    if (m.op === 'ping') return this.send(JSON.stringify({ type: 'pong', id: m.id, ts: this.clock }));
    if (m.op === 'get') return this.send(errorFrame({ code: 'bad_request', message: 'lookups are not available in a replay' }, m.id));
    if (m.op === 'resync') {
      const snap = this.receives(m.topic) ? this.snapshotOf(m.topic) : undefined;
      return this.send(snap ?? errorFrame({ code: 'not_subscribed', message: 'the topic is not subscribed on this connection', topic: m.topic }, m.id));
    }
    if (m.op === 'unsubscribe') {
      const removed: string[] = [];
      for (const code of m.codes) {
        const feed = feedOf(m.channel as Channel, m.market as Market);
        if (code === '*' ? this.wildcards.delete(feed) : this.topics.delete(`${feed}.${code}`)) removed.push(code === '*' ? wildcardTopic(feed) : `${feed}.${code}`);
      }
      return this.send(JSON.stringify({ type: 'unsubscribed', id: m.id, topics: removed }));
    }
    // subscribe: any code the recording may hold (the recording is the listing).
    const r = resolveTarget(m, () => true);
    if (!r.ok) return this.send(errorFrame(r.error, m.id));
    const t = r.value;
    const frames = [JSON.stringify({ type: 'subscribed', id: m.id, topics: t.wildcard ? [wildcardTopic(t.feed)] : t.topics })];
    if (t.wildcard) {
      this.wildcards.add(t.feed);
      for (const topic of this.state.keys()) if (topic.startsWith(`${t.feed}.`)) frames.push(this.snapshotOf(topic)!);
    } else {
      for (const topic of t.topics) {
        this.topics.add(topic);
        const snap = this.snapshotOf(topic);
        if (snap) frames.push(snap);
      }
    }
    const status = this.statuses.get(t.feed);
    if (status) frames.push(status);
    this.send(frames.length === 1 ? frames[0]! : `[${frames.join(',')}]`);
    this.markSubscribed();
  }

  private send(frame: string): void {
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(frame);
  }
}
