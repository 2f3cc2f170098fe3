import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import WebSocket from 'ws';
import { cpuMicros, serve } from '../lib/child.js';
import { wallMs } from '../lib/market.js';
import { LatencyHistogram } from '../lib/stats.js';
import { STALLED_FEEDS } from '../scenarios/stalled.js';

/**
 * The load process of the stalled scenario (bench/scenarios/stalled.ts):
 * one normal client subscribed to every feed whole, which parses every
 * message, checks each topic's seq and records each patch's latency; and
 * bare TCP WebSocket clients that connect and then read nothing: told to
 * stall, they subscribe to every feed whole, still reading nothing; told to
 * resume, they read (and discard) everything.
 */

type Msg = { type?: string; topic?: string; seq?: number; ts?: number; id?: unknown };

/** The messages of the subscribes to every feed whole. */
const SUBSCRIBES = STALLED_FEEDS.map(([channel, market], id) => JSON.stringify({ op: 'subscribe', id, channel, market, codes: ['*'] }));

/** A masked client text frame (RFC 6455 §5.2). */
function clientFrame(text: string): Buffer {
  const payload = Buffer.from(text);
  const n = payload.length;
  const head = n < 126 ? Buffer.from([0x81, 0x80 | n]) : Buffer.from([0x81, 0x80 | 126, n >> 8, n & 0xff]);
  const mask = randomBytes(4);
  for (let i = 0; i < n; i++) payload[i]! ^= mask[i & 3]!;
  return Buffer.concat([head, mask, payload]);
}

/** A bare WebSocket client: the handshake, then nothing read until it is resumed. */
function rawClient(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    let head = '';
    socket.once('error', reject);
    socket.once('connect', () =>
      socket.write(
        `GET /ws HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
      ),
    );
    const onHead = (d: Buffer): void => {
      head += d.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      socket.off('data', onHead);
      socket.pause();
      if (!head.startsWith('HTTP/1.1 101')) return reject(new Error(head.split('\r\n')[0]));
      // Read when resumed: every byte discarded.
      socket.on('data', () => undefined);
      socket.pause();
      resolve(socket);
    };
    socket.on('data', onHead);
  });
}

/** The normal client: every message parsed, seq continuity and latency of each patch. */
class NormalClient {
  readonly latency = new LatencyHistogram();
  readonly seqs = new Map<string, number>();
  patches = 0;
  /** Snapshots after the subscribe's: fresh snapshots of a client that fell behind. */
  snapshots = 0;
  lost = 0;
  outOfOrder = 0;
  closed: number | undefined;
  private subscribed = 0;
  private readonly ws: WebSocket;

  constructor(port: number) {
    this.ws = new WebSocket(`ws://127.0.0.1:${port}/ws`, { perMessageDeflate: false });
    this.ws.on('message', (data: Buffer) => this.onFrame(data));
    this.ws.on('close', (code) => (this.closed = code));
    this.ws.on('error', () => undefined);
  }

  /** Subscribes to every feed; resolves once every topic's snapshot is in. */
  async subscribe(topics: number): Promise<void> {
    await new Promise<void>((r, j) => {
      this.ws.once('open', () => r());
      this.ws.once('error', j);
    });
    for (const m of SUBSCRIBES) this.ws.send(m);
    const end = Date.now() + 60_000;
    while (this.subscribed < SUBSCRIBES.length || this.seqs.size < topics) {
      if (Date.now() > end) throw new Error(`normal client: ${this.seqs.size} of ${topics} snapshots`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  close(): void {
    this.ws.close();
  }

  private onFrame(data: Buffer): void {
    const at = wallMs();
    const parsed = JSON.parse(data.toString()) as Msg | Msg[];
    for (const m of Array.isArray(parsed) ? parsed : [parsed]) {
      if (m.type === 'subscribed') this.subscribed++;
      else if (m.type === 'snapshot') {
        if (this.seqs.has(m.topic!)) this.snapshots++;
        this.seqs.set(m.topic!, m.seq!);
      } else if (m.type === 'patch') {
        const last = this.seqs.get(m.topic!) ?? 0;
        if (m.seq! === last + 1) this.seqs.set(m.topic!, m.seq!);
        else if (m.seq! > last) {
          this.lost += m.seq! - last - 1;
          this.seqs.set(m.topic!, m.seq!);
        } else this.outOfOrder++;
        this.patches++;
        this.latency.record(at - m.ts!);
      }
    }
  }
}

let normal: NormalClient | undefined;
let port = 0;
const stalled: Socket[] = [];

serve(
  {
    /** The normal client, subscribed to every feed whole once every snapshot is in. */
    async connect(a: { port: number; topics: number }) {
      port = a.port;
      normal = new NormalClient(a.port);
      await normal.subscribe(a.topics);
      return true;
    },
    /** `n` more bare clients, connected and idle. */
    async open(a: { n: number }) {
      for (let i = 0; i < a.n; i++) stalled.push(await rawClient(port));
      return stalled.length;
    },
    /** The normal client's figures since the previous mark. */
    mark() {
      const n = normal!;
      const out = {
        cpuUs: cpuMicros(),
        patches: n.patches,
        snapshots: n.snapshots,
        p50Ms: n.latency.percentile(50),
        p99Ms: n.latency.percentile(99),
        lost: n.lost,
        outOfOrder: n.outOfOrder,
        closed: n.closed,
      };
      n.latency.reset();
      return out;
    },
    /** The bare clients subscribe to every feed whole, and go on reading nothing. */
    stall() {
      const subscribes = Buffer.concat(SUBSCRIBES.map(clientFrame));
      for (const s of stalled) s.write(subscribes);
      return true;
    },
    /** The bare clients read (and discard) everything. */
    resume() {
      for (const s of stalled) s.resume();
      return true;
    },
    closeStalled() {
      for (const s of stalled.splice(0)) s.destroy();
      return true;
    },
  },
  () => {
    normal?.close();
    for (const s of stalled) s.destroy();
  },
);
