import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { changedOps, type Change, type SyntheticMarket } from '../lib/market.js';
import { patchMessage, type Peer } from './peer.js';

/**
 * The plain `ws` peer: a set of sockets per topic, each change serialised
 * once and `send()` called once per delivery (one WebSocket frame per
 * update per client). Subscription: the client sends `{"sub":[topics]}`,
 * answered by `{"ok":n}`.
 */
export class NaivePeer implements Peer {
  private readonly http: HttpServer = createServer();
  private readonly wss: WebSocketServer;
  private readonly subs = new Map<string, Set<WebSocket>>();

  /** A peer over the market's topics. */
  constructor(private readonly market: SyntheticMarket) {
    this.wss = new WebSocketServer({ server: this.http, perMessageDeflate: false });
    this.wss.on('connection', (ws) => {
      ws.on('message', (data) => {
        const topics = subscribeRequest(String(data));
        for (const t of topics) {
          let set = this.subs.get(t);
          if (!set) this.subs.set(t, (set = new Set()));
          set.add(ws);
        }
        ws.send(JSON.stringify({ ok: topics.length }));
      });
      ws.on('close', () => {
        for (const set of this.subs.values()) set.delete(ws);
      });
    });
  }

  /** Listens on 127.0.0.1, port 0. */
  listen(): Promise<number> {
    return new Promise((resolve) => this.http.listen(0, '127.0.0.1', () => resolve((this.http.address() as AddressInfo).port)));
  }

  /** Serialises each change once and sends it to each subscriber separately. */
  publish(changes: readonly Change[], ts: number): void {
    const topics = this.market.topics;
    for (let i = 0; i < changes.length; i++) {
      const c = changes[i]!;
      const topic = topics[c.index]!;
      const set = this.subs.get(topic);
      if (!set) continue;
      const text = JSON.stringify(patchMessage(topic, c.seq, ts, changedOps(c.prev, c.row)));
      for (const ws of set) ws.send(text);
    }
  }

  /** Connected sockets and their buffered bytes. */
  stats(): Record<string, number> {
    let buffered = 0;
    for (const ws of this.wss.clients) buffered += ws.bufferedAmount;
    return { connections: this.wss.clients.size, bufferedBytes: buffered };
  }

  /** Closes every socket and the listener. */
  close(): Promise<void> {
    for (const ws of this.wss.clients) ws.terminate();
    return new Promise((resolve) => this.wss.close(() => this.http.close(() => resolve())));
  }
}

/** The topics of a `{"sub":[…]}` request; empty for anything else. */
export function subscribeRequest(text: string): string[] {
  try {
    const m = JSON.parse(text) as { sub?: unknown };
    return Array.isArray(m.sub) ? m.sub.filter((t): t is string => typeof t === 'string') : [];
  } catch {
    return [];
  }
}
