import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { LocalBus } from '../../src/bus/bus.js';
import { KrxClient, type Change } from '../../src/client/index.js';
import { Gateway } from '../../src/gateway/gateway.js';
import { Metrics } from '../../src/metrics/metrics.js';
import { Demand } from '../../src/poller/demand.js';
import type { Channel, Market } from '../../src/protocol/constants.js';
import { parseTopic } from '../../src/protocol/topics.js';
import { StateStore } from '../../src/state/store.js';
import { SymbolDirectory } from '../../src/state/symbols.js';
import type { Row } from '../../src/upstream/normalise.js';
import { QuoteMarket, codes, waitFor } from './helpers.js';

/** The SDK against the real gateway (src/gateway) over a real socket. */

interface Bridge {
  readonly url: string;
  readonly port: number;
  readonly store: StateStore;
  readonly calls: { id: string; params: Record<string, unknown> }[];
  tick(channel: Channel, market: Market, rows: readonly Row[]): void;
  /** Destroys every upgraded socket (a network cut, no close frame). */
  cut(): void;
  close(): Promise<void>;
}

async function startBridge(port = 0, store = new StateStore({ ringSize: 64 })): Promise<Bridge> {
  const bus = new LocalBus();
  const symbols = new SymbolDirectory();
  for (const market of ['kospi', 'kosdaq'])
    symbols.load(
      market,
      codes(60).map((c) => ({ isuSrtCd: c, isuKorNm: c })),
    );
  const calls: Bridge['calls'] = [];
  const server: Server = createServer();
  const sockets = new Set<Socket>();
  server.on('upgrade', (_req, socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  const gateway = new Gateway({
    server,
    store,
    bus,
    demand: new Demand(),
    symbols,
    metrics: new Metrics({ defaults: false }),
    onDemand: {
      get: async (id, params) => {
        calls.push({ id, params });
        return { data: { isuSrtCd: params.issuecode ?? null, hisLists: [], _endpoint: id }, receivedAt: Date.now(), cached: false };
      },
    },
    statuses: () => [{ channel: 'quote', market: 'kospi', state: 'live', intervalMs: 1000, ts: Date.now() }],
    version: 'test',
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
  const actual = (server.address() as AddressInfo).port;
  return {
    url: `ws://127.0.0.1:${actual}/ws`,
    port: actual,
    store,
    calls,
    tick: (channel, market, rows) => bus.publish(store.apply(channel, market, rows, Date.now())),
    cut: () => {
      for (const s of sockets) s.destroy();
    },
    close: async () => {
      await gateway.close(1000);
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

let bridge: Bridge | undefined;
const clients: KrxClient[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await bridge?.close();
  bridge = undefined;
});

function client(url: string): KrxClient {
  const c = new KrxClient(url, { WebSocket, minDelayMs: 20, maxDelayMs: 200, restartSpreadMs: 50 });
  clients.push(c);
  return c;
}

function inStep(c: KrxClient, store: StateStore, topics: readonly string[]): boolean {
  return topics.every((t) => {
    const p = parseTopic(t)!;
    return c.seq(t) === store.entry(p.channel, p.market, p.code)?.seq;
  });
}

function expectTruth(c: KrxClient, store: StateStore, topics: readonly string[]): void {
  for (const t of topics) {
    const p = parseTopic(t)!;
    expect(c.snapshot(t), t).toEqual(store.entry(p.channel, p.market, p.code)?.row);
  }
}

describe('KrxClient against the gateway', () => {
  it('explicit and wildcard subscriptions follow the server exactly, across a network cut, with no resync and no loss', async () => {
    const b = (bridge = await startBridge());
    const q = new QuoteMarket(codes(30), 21);
    const k = new QuoteMarket(codes(20), 22);
    b.tick('quote', 'kospi', q.step(1));
    b.tick('quote', 'kosdaq', k.step(1));
    const c = client(b.url);
    const seqs = new Map<string, number[]>();
    const kinds: Change['kind'][] = [];
    c.on('update', (t, _r, ch) => {
      seqs.set(t, [...(seqs.get(t) ?? []), ch.seq]);
      kinds.push(ch.kind);
    });
    const resyncs: string[] = [];
    c.on('resync', (t) => resyncs.push(t));
    await c.ready();
    expect(await c.subscribe('quote', 'kospi', codes(30).slice(0, 12))).toHaveLength(12);
    expect(await c.subscribe('quote', 'kosdaq', '*')).toEqual(['quote.kosdaq.*']);
    expect(c.status('quote', 'kospi')).toMatchObject({ state: 'live' });
    const explicit = codes(30)
      .slice(0, 12)
      .map((x) => `quote.kospi.${x}`);
    const wild = codes(20).map((x) => `quote.kosdaq.${x}`);
    for (let i = 0; i < 60; i++) {
      b.tick('quote', 'kospi', q.step());
      b.tick('quote', 'kosdaq', k.step());
    }
    await waitFor(() => inStep(c, b.store, [...explicit, ...wild]), 'in step');
    expectTruth(c, b.store, [...explicit, ...wild]);

    const before = kinds.length;
    // The event, not the state: with a first retry of a few ms the client may be open again before a poll of its state.
    let noticed = false;
    c.on('reconnecting', () => (noticed = true));
    b.cut();
    await waitFor(() => noticed, 'cut noticed');
    for (let i = 0; i < 8; i++) {
      b.tick('quote', 'kospi', q.step(0.5));
      b.tick('quote', 'kosdaq', k.step(0.5));
    }
    await waitFor(() => c.state === 'open', 'back');
    await waitFor(() => inStep(c, b.store, [...explicit, ...wild]), 'resumed');
    expectTruth(c, b.store, [...explicit, ...wild]);
    // The gateway replayed the missed patches: no snapshot after the cut, no resync, every seq once.
    expect(kinds.slice(before).every((k) => k === 'patch')).toBe(true);
    expect(kinds.length).toBeGreaterThan(before);
    expect(resyncs).toEqual([]);
    for (const [t, list] of seqs) expect(list, t).toEqual(Array.from({ length: list.length }, (_, i) => list[0]! + i));
  });

  it('a server restart on the same port (close 1001, new epoch) ends with the new server state', async () => {
    let b = (bridge = await startBridge());
    const q = new QuoteMarket(codes(10), 23);
    b.tick('quote', 'kospi', q.step(1));
    const c = client(b.url);
    await c.subscribe('quote', 'kospi', codes(10));
    for (let i = 0; i < 20; i++) b.tick('quote', 'kospi', q.step());
    const topics = codes(10).map((x) => `quote.kospi.${x}`);
    await waitFor(() => inStep(c, b.store, topics), 'in step');
    const oldEpoch = c.epoch;
    const codesSeen: number[] = [];
    c.on('disconnect', (code) => codesSeen.push(code));
    await b.close();
    bridge = undefined;
    b = bridge = await startBridge(b.port, new StateStore({ ringSize: 64 }));
    b.tick('quote', 'kospi', q.step(1));
    await waitFor(() => c.epoch !== oldEpoch && c.state === 'open', 'new epoch', 5000);
    b.tick('quote', 'kospi', q.step(1));
    await waitFor(() => inStep(c, b.store, topics), 'new state');
    expectTruth(c, b.store, topics);
    expect(codesSeen[0]).toBe(1001);
  });

  it('get helpers reach the endpoints the gateway maps them to, with the upstream parameter names', async () => {
    const b = (bridge = await startBridge());
    const c = client(b.url);
    await c.history('kospi', '000010', { period: 'W', from: '20260101', to: '20261120', count: 20 });
    await c.intraday('kosdaq', '000020', { interval: 600 });
    await c.index('kospi', 'K1');
    await c.index('kosdaq');
    await c.investors('kospi');
    await c.foreignhistory('kospi', '000010', { from: 20261101, to: 20261120 });
    const r = await c.master('kospi', '000010');
    expect((r as unknown as Record<string, unknown>)._endpoint).toBe('v2.stocks.master');
    expect(b.calls.map((x) => x.id)).toEqual([
      'v2.stocks.history',
      'v3.realtime.stocks.intraday',
      'v2.index.index',
      'v3.closed.index',
      'v2.stocks.marketinvestors',
      'v2.stocks.foreignhistory',
      'v2.stocks.master',
    ]);
    expect(b.calls[0]!.params).toMatchObject({ trnsmCycleTpCd: 'W', inqStrtDd: '20260101', inqEndDd: '20261120', reqCnt: 20 });
    await expect(c.master('kospi', '999999')).rejects.toMatchObject({ name: 'KrxError', code: 'invalid_code' });
    await expect(c.subscribe('book', 'kospi', '*')).rejects.toMatchObject({ code: 'invalid_code' });
    expect(await c.ping()).toBeGreaterThanOrEqual(0);
  });
});
