import { createServer, type Server as HttpServer } from 'node:http';
import type { Socket, AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import { changedOps, type Change, type SyntheticMarket } from '../lib/market.js';
import { arrayFrame } from '../lib/frame.js';
import { subscribeRequest } from './naive.js';
import { patchMessage, type Peer } from './peer.js';

interface Conn {
  readonly socket: Socket;
  /** Symbol indices subscribed, to leave their lists on close. */
  readonly slots: number[];
  pending: Buffer[];
  bytes: number;
}

/**
 * The floor: the least work a fan-out can do. Each change is serialised
 * once into a buffer; each client gets one pre-framed WebSocket frame per
 * tick (the JSON array of its changes), written straight to its TCP
 * socket. No protocol, no state, no backpressure policy. `ws` does the
 * handshake and the `{"sub":[…]}` request only.
 */
export class FloorPeer implements Peer {
  private readonly http: HttpServer = createServer();
  private readonly wss: WebSocketServer;
  private readonly subs: Conn[][];
  private readonly slot = new Map<string, number>();
  private readonly dirty: Conn[] = [];
  private readonly conns = new Set<Conn>();

  /** A peer over the market's topics. */
  constructor(private readonly market: SyntheticMarket) {
    this.subs = market.topics.map(() => []);
    market.topics.forEach((t, i) => this.slot.set(t, i));
    this.wss = new WebSocketServer({ server: this.http, perMessageDeflate: false });
    this.wss.on('connection', (ws, req) => {
      const conn: Conn = { socket: req.socket, slots: [], pending: [], bytes: 0 };
      this.conns.add(conn);
      ws.on('message', (data) => {
        const topics = subscribeRequest(String(data));
        for (const t of topics) {
          const i = this.slot.get(t);
          if (i === undefined) continue;
          this.subs[i]!.push(conn);
          conn.slots.push(i);
        }
        ws.send(JSON.stringify({ ok: topics.length }));
      });
      ws.on('close', () => {
        this.conns.delete(conn);
        for (const i of conn.slots) this.subs[i] = this.subs[i]!.filter((c) => c !== conn);
      });
    });
  }

  /** Listens on 127.0.0.1, port 0. */
  listen(): Promise<number> {
    return new Promise((resolve) => this.http.listen(0, '127.0.0.1', () => resolve((this.http.address() as AddressInfo).port)));
  }

  /** Serialises each change once, then writes one frame per touched client. */
  publish(changes: readonly Change[], ts: number): void {
    const topics = this.market.topics;
    const dirty = this.dirty;
    for (let i = 0; i < changes.length; i++) {
      const c = changes[i]!;
      const list = this.subs[c.index]!;
      if (list.length === 0) continue;
      const buf = Buffer.from(JSON.stringify(patchMessage(topics[c.index]!, c.seq, ts, changedOps(c.prev, c.row))));
      for (let j = 0; j < list.length; j++) {
        const conn = list[j]!;
        if (conn.pending.length === 0) dirty.push(conn);
        conn.pending.push(buf);
        conn.bytes += buf.length;
      }
    }
    for (let i = 0; i < dirty.length; i++) {
      const conn = dirty[i]!;
      conn.socket.write(arrayFrame(conn.pending, conn.bytes));
      conn.pending = [];
      conn.bytes = 0;
    }
    dirty.length = 0;
  }

  /** Connected sockets and their buffered bytes. */
  stats(): Record<string, number> {
    let buffered = 0;
    // Frames bypass ws, so its bufferedAmount does not see them; the socket's queue does.
    for (const c of this.conns) buffered += c.socket.writableLength;
    return { connections: this.conns.size, bufferedBytes: buffered };
  }

  /** Closes every socket and the listener. */
  close(): Promise<void> {
    for (const ws of this.wss.clients) ws.terminate();
    return new Promise((resolve) => this.wss.close(() => this.http.close(() => resolve())));
  }
}
