import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { listingTopics } from '../../bench/lib/listing.js';
import { LoadPool } from '../../bench/load/pool.js';
import { createPollingPeer, type PollingPeer, type PollingPeerName } from '../../bench/server/polling.js';
import { STAMP_FIELD, StandIn } from '../../bench/upstream/standin.js';

// The end-to-end scenario's pieces in one process, small: the stand-in, each polling peer, and load
// clients that measure latency from the stand-in's stamp.
const SYMBOLS = 180;
const SEED = 9;
const LAYOUT = { seed: 4, clients: 6, topicsPerClient: 12, symbols: SYMBOLS };

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

async function until(cond: () => boolean, ms: number, what: string): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe.each(['bridge', 'socketio'] as PollingPeerName[])('end-to-end harness with the %s peer', (name) => {
  it('delivers every change the peer published, in order, each with a latency from the stand-in’s answer', async () => {
    const standIn = new StandIn({ symbols: SYMBOLS, seed: SEED, changeRatio: 0.3, periodMs: 1_000, apiKey: 'k', subs: LAYOUT });
    cleanup.push(() => standIn.close());
    const url = await standIn.listen();
    const peer: PollingPeer = await createPollingPeer(name, { url, apiKey: 'k' });
    cleanup.push(() => peer.close());
    const port = await peer.start();
    const topics = listingTopics(SYMBOLS, SEED);
    const pool = new LoadPool({ peer: name, port, symbols: SYMBOLS, seed: SEED, topics, stampField: STAMP_FIELD, perAddress: 2 });
    cleanup.push(() => pool.close());
    const conn = await pool.connect(LAYOUT, 10);
    expect(conn.failed).toBe(0);
    standIn.go();
    await until(() => standIn.counters().steps >= 2, 5_000, 'two market steps');
    standIn.pause();
    const served = (): number => standIn.counters().served;
    // Every change made is carried by some poll, then fanned out.
    await until(() => served() === standIn.counters().changes - standIn.counters().superseded, 5_000, 'the last changes polled');
    // The peer published each served change as one step of its topic's seq (from 1, the first list).
    const published = (): number => peer.seqs(topics).reduce((a, s) => a + s - 1, 0);
    await until(() => published() === served(), 5_000, 'the peer to publish every served change');
    await until(() => pool.tailLoss(peer.seqs(topics)) === 0, 5_000, 'every published change delivered');
    expect(pool.received).toBeGreaterThan(0);
    expect(pool.totals).toMatchObject({ lost: 0, outOfOrder: 0, unexpected: 0 });
    expect(pool.unstamped).toBe(0);
    // One latency per update, from the stand-in's answer: positive and well under the poll period.
    expect(pool.latency.count).toBe(pool.received);
    expect(pool.latency.negative).toBe(0);
    expect(pool.latency.max).toBeLessThan(1_000);
    expect(pool.disconnects).toBe(0);
  }, 30_000);
});

describe('load clients', () => {
  it('come from several loopback addresses, perAddress on each', async () => {
    const http = createServer();
    const wss = new WebSocketServer({ server: http });
    const seen: string[] = [];
    wss.on('connection', (ws, req) => {
      seen.push(req.socket.remoteAddress ?? '');
      ws.on('message', () => ws.send('{"ok":1}'));
    });
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    cleanup.push(() => new Promise<void>((r) => http.close(() => r())));
    cleanup.push(() => wss.close());
    const pool = new LoadPool({ peer: 'naive', port: (http.address() as AddressInfo).port, symbols: 50, seed: 1, perAddress: 2 });
    cleanup.push(() => pool.close());
    const r = await pool.connect({ seed: 1, clients: 5, topicsPerClient: 3, symbols: 50 }, 5, { first: 2, count: 3 });
    expect(r.failed).toBe(0);
    // Clients 2, 3 and 4 of the layout: two on the second address, one on the third.
    expect(seen.sort()).toEqual(['127.0.0.3', '127.0.0.3', '127.0.0.4']);
  });
});
