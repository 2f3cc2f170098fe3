import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from 'socket.io';
import { changedOps, type Change, type SyntheticMarket } from '../lib/market.js';
import { patchMessage, type Peer } from './peer.js';

/**
 * The socket.io 4 peer, written as its documentation suggests: one room
 * per topic, clients join rooms with a `sub` event (acknowledged), and
 * each change is emitted once to its room as event `m`. WebSocket
 * transport only, no compression.
 */
export class SocketIoPeer implements Peer {
  private readonly http: HttpServer = createServer();
  private readonly io: Server;

  /** A peer over the market's topics. */
  constructor(private readonly market: SyntheticMarket) {
    this.io = new Server(this.http, { transports: ['websocket'], perMessageDeflate: false, serveClient: false });
    this.io.on('connection', (socket) => {
      socket.on('sub', (topics: unknown, ack: unknown) => {
        const list = Array.isArray(topics) ? topics.filter((t): t is string => typeof t === 'string') : [];
        void socket.join(list);
        if (typeof ack === 'function') ack(list.length);
      });
    });
  }

  /** Listens on 127.0.0.1, port 0. */
  listen(): Promise<number> {
    return new Promise((resolve) => this.http.listen(0, '127.0.0.1', () => resolve((this.http.address() as AddressInfo).port)));
  }

  /** Emits each change to its topic's room. */
  publish(changes: readonly Change[], ts: number): void {
    const topics = this.market.topics;
    for (let i = 0; i < changes.length; i++) {
      const c = changes[i]!;
      const topic = topics[c.index]!;
      this.io.to(topic).emit('m', patchMessage(topic, c.seq, ts, changedOps(c.prev, c.row)));
    }
  }

  /** Connected sockets. */
  stats(): Record<string, number> {
    return { connections: this.io.engine.clientsCount };
  }

  /** Closes the server and every socket. */
  close(): Promise<void> {
    return new Promise((resolve) => {
      void this.io.close(() => resolve());
    });
  }
}
