import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from 'socket.io';
import { endpoint } from '../../src/upstream/catalogue.js';
import { LISTING_MARKETS, type ListingMarket } from '../lib/listing.js';
import { patchMessage } from './peer.js';
import type { PollingPeer, UpstreamTarget } from './polling.js';

/**
 * The socket.io 4 server one would write for the same job: it fetches both
 * markets' whole quote lists from the upstream once a second (`fetch`,
 * `res.json()`), compares each row field by field with the previous list's,
 * and emits each changed row's fields to the topic's room, as the fan-out
 * peer does (socketio.ts). One room per topic, joined with an acknowledged
 * `sub` event; WebSocket transport only, no compression.
 */

/** Interval between polls of each market, ms. */
const POLL_MS = 1_000;

type Row = Record<string, unknown>;

/** RFC 6902 `replace` operations of every field of `row` whose value differs from `prev`'s. */
export function fieldOps(prev: Row, row: Row): { op: 'replace'; path: string; value: unknown }[] {
  const ops: { op: 'replace'; path: string; value: unknown }[] = [];
  for (const k in row) if (prev[k] !== row[k]) ops.push({ op: 'replace', path: '/' + k, value: row[k] });
  return ops;
}

/** The socket.io peer, polling the upstream itself. */
export class SocketIoPollingPeer implements PollingPeer {
  private readonly http: HttpServer = createServer();
  private readonly io: Server;
  private readonly rows = new Map<string, Row>();
  private readonly seq = new Map<string, number>();
  private readonly busy = new Set<ListingMarket>();
  private timer: NodeJS.Timeout | undefined;
  private readonly c = { polls: 0, skippedPolls: 0, pollErrors: 0, changes: 0 };

  /** A peer polling `upstream`; nothing runs until `start`. */
  constructor(private readonly upstream: UpstreamTarget) {
    this.io = new Server(this.http, { transports: ['websocket'], perMessageDeflate: false, serveClient: false });
    this.io.on('connection', (socket) => {
      socket.on('sub', (topics: unknown, ack: unknown) => {
        const list = Array.isArray(topics) ? topics.filter((t): t is string => typeof t === 'string') : [];
        void socket.join(list);
        if (typeof ack === 'function') ack(list.length);
      });
    });
  }

  /** Polls both markets once (every topic at seq 1), then listens and polls every second. */
  async start(): Promise<number> {
    await Promise.all(LISTING_MARKETS.map((m) => this.poll(m)));
    if (this.c.pollErrors > 0) throw new Error('the socket.io peer could not fetch the stand-in’s lists');
    const port = await new Promise<number>((resolve) => this.http.listen(0, '127.0.0.1', () => resolve((this.http.address() as AddressInfo).port)));
    this.timer = setInterval(() => {
      for (const m of LISTING_MARKETS) void this.poll(m);
    }, POLL_MS);
    return port;
  }

  /** Connections and poll counters. */
  stats(): Record<string, number> {
    return { connections: this.io.engine.clientsCount, ...this.c };
  }

  /** Each topic's seq (1 from the first list, one more per change since). */
  seqs(topics: readonly string[]): number[] {
    return topics.map((t) => this.seq.get(t) ?? 0);
  }

  /** Stops polling and closes the server and every socket. */
  close(): Promise<void> {
    clearInterval(this.timer);
    return new Promise((resolve) => void this.io.close(() => resolve()));
  }

  private url(market: ListingMarket): string {
    const id = market === 'kospi' ? 'v2.multiquote.lists' : 'v3.realtime.multiquote.lists';
    return this.upstream.url + endpoint(id).path.replace('{marketcode}', market);
  }

  /** One poll of a market; skipped while the previous one is still running. */
  private async poll(market: ListingMarket): Promise<void> {
    if (this.busy.has(market)) {
      this.c.skippedPolls++;
      return;
    }
    this.busy.add(market);
    try {
      const res = await fetch(this.url(market), { headers: { apikey: this.upstream.apiKey } });
      const body = (await res.json()) as { isuLists?: Row[] };
      if (!res.ok || !Array.isArray(body.isuLists)) throw new Error(`HTTP ${res.status}`);
      this.c.polls++;
      this.publish(market, body.isuLists, Date.now());
    } catch {
      this.c.pollErrors++;
    } finally {
      this.busy.delete(market);
    }
  }

  private publish(market: ListingMarket, rows: readonly Row[], ts: number): void {
    for (const row of rows) {
      const topic = `quote.${market}.${String(row.isuSrtCd)}`;
      const prev = this.rows.get(topic);
      this.rows.set(topic, row);
      if (!prev) {
        this.seq.set(topic, 1);
        continue;
      }
      const ops = fieldOps(prev, row);
      if (ops.length === 0) continue;
      const seq = this.seq.get(topic)! + 1;
      this.seq.set(topic, seq);
      this.c.changes++;
      this.io.to(topic).emit('m', patchMessage(topic, seq, ts, ops));
    }
  }
}
