import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { Backoff } from '../../src/client/backoff.js';
import { KrxClient, type Change, type ConnectionState, type KrxClientOptions, type KrxError } from '../../src/client/index.js';
import { FakeServer } from './fake-server.js';
import { QuoteMarket, codes, sleep, waitFor } from './helpers.js';

/** The SDK against a protocol-v1 server on a real socket (port 0). */

let server: FakeServer | undefined;
const clients: KrxClient[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await server?.stop();
  server = undefined;
});

async function setup(opts: KrxClientOptions = {}, serverOpts = {}): Promise<{ s: FakeServer; c: KrxClient }> {
  server = await FakeServer.start(serverOpts);
  const c = new KrxClient(server.url, { WebSocket, minDelayMs: 10, maxDelayMs: 200, random: () => 0.5, ...opts });
  clients.push(c);
  await c.ready();
  return { s: server, c };
}

function expectEqualToTruth(s: FakeServer, c: KrxClient, topics: readonly string[]): void {
  for (const t of topics) {
    expect(c.snapshot(t), t).toEqual(s.truth(t));
    expect(c.seq(t), t).toBe(s.store.entry('quote', 'kospi', t.split('.')[2]!)?.seq);
  }
}

describe('KrxClient against a protocol-v1 server', () => {
  it('subscribes; the local state equals the server after many patches; typed events carry every change', async () => {
    const { s, c } = await setup();
    const m = new QuoteMarket(codes(20), 3);
    s.tick('quote', 'kospi', m.step(1));
    const seen: Change[] = [];
    const updates: string[] = [];
    c.on('quote', (code, row, change) => {
      expect(row.isuSrtCd).toBe(code);
      seen.push(change);
    });
    c.on('update', (topic) => updates.push(topic));
    const want = codes(20).slice(0, 10);
    const topics = await c.subscribe('quote', 'kospi', want);
    expect(topics).toEqual(want.map((x) => `quote.kospi.${x}`));
    await waitFor(() => c.topics().length === 10, 'snapshots');
    for (let i = 0; i < 200; i++) s.tick('quote', 'kospi', m.step());
    const last = () => topics.every((t) => c.seq(t) === s.store.entry('quote', 'kospi', t.split('.')[2]!)!.seq);
    await waitFor(last, 'all patches');
    expectEqualToTruth(s, c, topics);
    expect(c.topics().sort()).toEqual([...topics].sort());
    // Every change of every subscribed topic arrived once, in order, and nothing else.
    for (const t of topics) {
      const seqs = seen.filter((x) => x.topic === t).map((x) => x.seq);
      const first = seqs[0]!;
      expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => first + i));
    }
    expect(updates.length).toBe(seen.length);
    expect(s.ops('resync')).toEqual([]);
    expect(c.status('quote', 'kospi')).toMatchObject({ state: 'live', intervalMs: 1000 });
  });

  it('a wildcard subscription holds every symbol of the market', async () => {
    const { s, c } = await setup();
    const m = new QuoteMarket(codes(50), 4);
    s.tick('quote', 'kosdaq', m.step(1));
    expect(await c.subscribe('quote', 'kosdaq', '*')).toEqual(['quote.kosdaq.*']);
    for (let i = 0; i < 50; i++) s.tick('quote', 'kosdaq', m.step());
    await waitFor(() => codes(50).every((x) => c.seq(`quote.kosdaq.${x}`) === s.store.entry('quote', 'kosdaq', x)!.seq), 'wildcard state');
    for (const x of codes(50)) expect(c.snapshot(`quote.kosdaq.${x}`)).toEqual(s.truth(`quote.kosdaq.${x}`));
    expect(c.subscriptions()).toEqual([{ channel: 'quote', market: 'kosdaq', wildcard: true, codes: [] }]);
  });

  it('after the server kills the socket it reconnects, resubscribes every feed in one go with since and epoch, and loses nothing', async () => {
    const { s, c } = await setup();
    const m = new QuoteMarket(codes(10), 5);
    const b = new QuoteMarket(codes(3), 6);
    s.tick('quote', 'kospi', m.step(1));
    s.tick('book', 'kospi', b.step(1));
    s.tick('quote', 'kosdaq', m.step(1));
    const seqs = new Map<string, number[]>();
    c.on('update', (topic, _row, ch) => seqs.set(topic, [...(seqs.get(topic) ?? []), ch.seq]));
    const states: ConnectionState[] = [];
    c.on('state', (_prev, next) => states.push(next));
    await c.subscribe('quote', 'kospi', codes(10));
    await c.subscribe('book', 'kospi', codes(3));
    await c.subscribe('quote', 'kosdaq', '*');
    for (let i = 0; i < 20; i++) s.tick('quote', 'kospi', m.step());
    await waitFor(() => c.seq('quote.kospi.000010') === s.store.entry('quote', 'kospi', '000010')!.seq, 'before the cut');
    const firstSession = s.received.at(-1)!.session;
    const held = Object.fromEntries(c.topics().map((t) => [t, c.seq(t)!]));

    // The event, not the state: a first retry 5 ms later may be open again before a poll of the state.
    let noticed = false;
    let statusWhileAway: unknown = 'unset';
    expect(c.status('quote', 'kospi')).toMatchObject({ state: 'live' });
    c.on('reconnecting', () => {
      noticed = true;
      statusWhileAway = c.status('quote', 'kospi');
    });
    s.terminateAll();
    await waitFor(() => noticed, 'reconnecting');
    // The last status was the lost connection's: no feed reads `live` while the client is away.
    expect(statusWhileAway).toBeUndefined();
    // Changes while the client is away: the server's replay ring holds them.
    for (let i = 0; i < 10; i++) {
      s.tick('quote', 'kospi', m.step(0.5));
      s.tick('book', 'kospi', b.step(0.5));
    }
    await waitFor(() => c.state === 'open', 'reopened');
    await waitFor(() => s.received.filter((r) => r.session > firstSession).length >= 3, 'resubscribes');
    // Two round trips: what the client sent in the restore, and in answer to what came back, is in before the second ping.
    await c.ping();
    await c.ping();
    const after = s.received.filter((r) => r.session > firstSession);
    expect(after.filter((r) => r.msg.op === 'ping')).toHaveLength(2);
    // One subscribe per feed, nothing else, all within one burst.
    const subs = after.filter((r) => r.msg.op !== 'ping');
    expect(subs.map((r) => r.msg.op)).toEqual(['subscribe', 'subscribe', 'subscribe']);
    expect(Math.max(...subs.map((r) => r.at)) - Math.min(...subs.map((r) => r.at))).toBeLessThan(50);
    for (const { msg } of subs) {
      if (msg.op !== 'subscribe') throw new Error('not a subscribe');
      expect(msg.epoch).toBe('epoch-1');
      const mine = Object.keys(held).filter((t) => t.startsWith(`${msg.channel}.${msg.market}.`));
      expect(msg.since).toEqual(Object.fromEntries(mine.map((t) => [t, held[t]])));
    }
    for (let i = 0; i < 5; i++) s.tick('quote', 'kospi', m.step());
    const all = [...codes(10).map((x) => `quote.kospi.${x}`)];
    await waitFor(() => all.every((t) => c.seq(t) === s.store.entry('quote', 'kospi', t.split('.')[2]!)!.seq), 'caught up');
    expectEqualToTruth(s, c, all);
    for (const x of codes(3)) expect(c.snapshot(`book.kospi.${x}`)).toEqual(s.truth(`book.kospi.${x}`));
    // No loss: every topic saw each seq exactly once, as patches after the first snapshot.
    for (const [topic, list] of seqs) {
      expect(list, topic).toEqual(Array.from({ length: list.length }, (_, i) => list[0]! + i));
    }
    expect(states).toEqual(['reconnecting', 'open']);
    expect(s.ops('resync')).toEqual([]);
    // The new connection's subscribe brought the feed's status again.
    expect(c.status('quote', 'kospi')).toMatchObject({ state: 'live' });
  });

  it('a code delisted while away costs only that code: the restore halves the refused subscribe until it stands alone', async () => {
    const { s, c } = await setup();
    const m = new QuoteMarket(codes(6), 15);
    s.tick('quote', 'kospi', m.step(1));
    await c.subscribe('quote', 'kospi', codes(6));
    await waitFor(() => c.topics().length === 6, 'snapshots');
    const errors: KrxError[] = [];
    c.on('error', (e) => errors.push(e));
    s.delisted.add('000040');
    s.terminateAll();
    await waitFor(() => c.subscriptions()[0]?.codes.length === 5, 'restored without the delisted code');
    expect(c.subscriptions()[0]!.codes).not.toContain('000040');
    expect(c.snapshot('quote.kospi.000040')).toBeUndefined();
    expect(errors.map((e) => e.code)).toEqual(['invalid_code']);
    expect(errors[0]!.message).toContain('000040');
    for (let i = 0; i < 5; i++) s.tick('quote', 'kospi', m.step(1));
    const kept = codes(6)
      .filter((x) => x !== '000040')
      .map((x) => `quote.kospi.${x}`);
    await waitFor(() => kept.every((t) => c.seq(t) === s.store.entry('quote', 'kospi', t.split('.')[2]!)!.seq), 'kept codes flow');
    // 6 → 3+3 → (1+2) → (1+1): four refused messages at most besides the accepted ones.
    expect(s.ops('subscribe').length).toBeLessThanOrEqual(1 + 1 + 2 + 2 + 2);
  });

  it('after a server restart (new epoch) the snapshots replace the rows, even at lower seqs', async () => {
    const { s, c } = await setup();
    const m = new QuoteMarket(codes(5), 8);
    s.tick('quote', 'kospi', m.step(1));
    await c.subscribe('quote', 'kospi', codes(5));
    for (let i = 0; i < 30; i++) s.tick('quote', 'kospi', m.step(1));
    await waitFor(() => c.seq('quote.kospi.000010') === s.store.entry('quote', 'kospi', '000010')!.seq, 'before');
    expect(c.seq('quote.kospi.000010')).toBeGreaterThan(10);
    const kinds: string[] = [];
    c.on('update', (_t, _r, ch) => kinds.push(ch.kind));
    s.restart('epoch-2');
    await waitFor(() => c.epoch === 'epoch-2' && c.seq('quote.kospi.000010') === 1, 'new epoch');
    expect(kinds.slice(0, 5)).toEqual(['snapshot', 'snapshot', 'snapshot', 'snapshot', 'snapshot']);
    s.tick('quote', 'kospi', m.step(1));
    await waitFor(() => c.seq('quote.kospi.000010') === 2, 'patch in the new epoch');
    expectEqualToTruth(
      s,
      c,
      codes(5).map((x) => `quote.kospi.${x}`),
    );
  });

  it('a seq gap resyncs only that topic, and the state heals', async () => {
    const { s, c } = await setup();
    const m = new QuoteMarket(codes(8), 9);
    s.tick('quote', 'kospi', m.step(1));
    await c.subscribe('quote', 'kospi', codes(8));
    await waitFor(() => c.topics().length === 8, 'snapshots');
    const resyncs: [string, string][] = [];
    c.on('resync', (t, why) => resyncs.push([t, why]));
    s.dropNext.add('quote.kospi.000030');
    for (let i = 0; i < 30; i++) s.tick('quote', 'kospi', m.step(1));
    const all = codes(8).map((x) => `quote.kospi.${x}`);
    await waitFor(() => all.every((t) => c.seq(t) === s.store.entry('quote', 'kospi', t.split('.')[2]!)!.seq), 'healed');
    expectEqualToTruth(s, c, all);
    expect(resyncs).toEqual([['quote.kospi.000030', 'gap']]);
    expect(s.ops('resync').map((r) => r.topic)).toEqual(['quote.kospi.000030']);
    expect(s.ops('subscribe')).toHaveLength(1);
    expect(s.connections).toBe(1);
  });

  it('a refused resync: retried when the error is passing, the topic dropped and reported when not', async () => {
    const { s, c } = await setup();
    const m = new QuoteMarket(codes(3), 14);
    s.tick('quote', 'kospi', m.step(1));
    await c.subscribe('quote', 'kospi', codes(3));
    await waitFor(() => c.topics().length === 3, 'snapshots');
    const errors: KrxError[] = [];
    c.on('error', (e) => errors.push(e));
    let refusals = 0;
    s.resyncError = (t) => {
      if (t === 'quote.kospi.000010') return refusals++ === 0 ? 'rate_limited' : undefined;
      return t === 'quote.kospi.000020' ? 'not_found' : undefined;
    };
    s.dropNext.add('quote.kospi.000010');
    s.dropNext.add('quote.kospi.000020');
    s.tick('quote', 'kospi', m.step(1));
    s.tick('quote', 'kospi', m.step(1));
    await waitFor(() => c.snapshot('quote.kospi.000020') === undefined, 'dropped after a final refusal');
    expect(errors.map((e) => [e.code, e.topic])).toEqual([['not_found', 'quote.kospi.000020']]);
    // The passing refusal was retried (after about a second) and healed the topic.
    await waitFor(() => s.ops('resync').filter((r) => r.topic === 'quote.kospi.000010').length === 2, 'retried', 3000);
    await waitFor(() => c.seq('quote.kospi.000010') === s.store.entry('quote', 'kospi', '000010')!.seq, 'healed');
    expect(c.snapshot('quote.kospi.000010')).toEqual(s.truth('quote.kospi.000010'));
  });

  it('a checksum mismatch resyncs the topic', async () => {
    const { s, c } = await setup();
    const m = new QuoteMarket(codes(4), 10);
    s.tick('quote', 'kospi', m.step(1));
    await c.subscribe('quote', 'kospi', codes(4));
    await waitFor(() => c.topics().length === 4, 'snapshots');
    const resyncs: string[] = [];
    c.on('resync', (t, why) => resyncs.push(`${t} ${why}`));
    s.corruptNext.add('quote.kospi.000020');
    for (let i = 0; i < 10; i++) s.tick('quote', 'kospi', m.step(1));
    const all = codes(4).map((x) => `quote.kospi.${x}`);
    await waitFor(() => all.every((t) => c.seq(t) === s.store.entry('quote', 'kospi', t.split('.')[2]!)!.seq), 'healed');
    expectEqualToTruth(s, c, all);
    expect(resyncs).toEqual(['quote.kospi.000020 crc']);
  });

  it('a throwing or mutating listener breaks nothing: state stays right, later events still arrive', async () => {
    const { s, c } = await setup();
    const m = new QuoteMarket(codes(5), 11);
    s.tick('quote', 'kospi', m.step(1));
    const errors: KrxError[] = [];
    c.on('error', (e) => errors.push(e));
    c.on('quote', () => {
      throw new Error('boom');
    });
    c.on('quote', (_code, row) => {
      (row as { trdPrc: unknown }).trdPrc = -1;
    });
    let after = 0;
    c.on('quote', () => after++);
    c.on('update', () => {
      throw new Error('boom again');
    });
    await c.subscribe('quote', 'kospi', codes(5));
    for (let i = 0; i < 40; i++) s.tick('quote', 'kospi', m.step());
    const all = codes(5).map((x) => `quote.kospi.${x}`);
    await waitFor(() => all.every((t) => c.seq(t) === s.store.entry('quote', 'kospi', t.split('.')[2]!)!.seq), 'state');
    expectEqualToTruth(s, c, all);
    expect(after).toBeGreaterThan(5);
    expect(errors.length).toBe(after * 3);
    expect(errors.every((e) => e.code === 'listener')).toBe(true);
    expect(errors.map((e) => e.message)).toContain("a 'quote' listener threw: boom");
    expect(errors.some((e) => e.cause instanceof TypeError)).toBe(true);
    expect(s.ops('resync')).toEqual([]);
    // A throwing error listener is contained too.
    c.on('error', () => {
      throw new Error('in the error listener');
    });
    s.tick('quote', 'kospi', m.step(1));
    const n = after;
    await waitFor(() => after > n, 'events after a throwing error listener');
  });

  it('each get helper sends its resource, code and params and resolves the typed data', async () => {
    const { s, c } = await setup();
    const calls: [Promise<unknown>, unknown][] = [
      [c.master('kospi', '005930'), { resource: 'master', market: 'kospi', code: '005930', params: null }],
      [
        c.selectivemaster('kospi', '005930', ['basPrc', 'wk52HgstPrc']),
        { resource: 'selectivemaster', market: 'kospi', code: '005930', params: { fields: ['basPrc', 'wk52HgstPrc'] } },
      ],
      [
        c.history('kospi', '005930', { period: 'W', from: '20260101', to: 20261120, count: 20 }),
        { resource: 'history', market: 'kospi', code: '005930', params: { period: 'W', from: '20260101', to: '20261120', count: 20 } }, // dates go out as YYYYMMDD strings, checked first
      ],
      [
        c.intraday('kosdaq', '247540', { interval: 600, from: '0900', to: 1000 }),
        { resource: 'intraday', market: 'kosdaq', code: '247540', params: { interval: 600, from: '0900', to: 1000 } },
      ],
      [c.intraday('kospi', '005930'), { resource: 'intraday', market: 'kospi', code: '005930', params: null }],
      [c.lists('konex'), { resource: 'lists', market: 'konex', code: null, params: null }],
      [c.closeprice('kospi', '005930'), { resource: 'closeprice', market: 'kospi', code: '005930', params: null }],
      [c.investors('kospi'), { resource: 'investors', market: 'kospi', code: null, params: null }],
      [c.investors('kospi', '005930'), { resource: 'investors', market: 'kospi', code: '005930', params: null }],
      [c.shortsell('kospi', '005930', { to: '20261120' }), { resource: 'shortsell', market: 'kospi', code: '005930', params: { to: '20261120' } }],
      [
        c.foreignhistory('kospi', '005930', { from: '20261101', to: '20261120', count: 5 }),
        { resource: 'foreignhistory', market: 'kospi', code: '005930', params: { from: '20261101', to: '20261120', count: 5 } },
      ],
      [c.traderanking('kospi', '005930'), { resource: 'traderanking', market: 'kospi', code: '005930', params: null }],
      [c.closenav('kospi', '069500'), { resource: 'closenav', market: 'kospi', code: '069500', params: null }],
      [c.index('kospi'), { resource: 'index', market: 'kospi', code: null, params: null }],
      [c.index('kospi', 'K1'), { resource: 'index', market: 'kospi', code: 'K1', params: null }],
      [c.price('kospi', '005930'), { resource: 'price', market: 'kospi', code: '005930', params: null }],
      [c.orderbook('kospi', '005930'), { resource: 'orderbook', market: 'kospi', code: '005930', params: null }],
    ];
    const results = await Promise.all(calls.map(([p]) => p));
    results.forEach((r, i) => expect((r as { _request: unknown })._request).toEqual(calls[i]![1]));
    expect(s.ops('get')).toHaveLength(calls.length);
    const h = await c.history('kospi', '005930', { from: 20261101, to: 20261120 });
    expect(h.hisLists[0]!.trdDd).toBe('20261120');
    expect(h.hisLists[0]!.trdPrc).toBe(71100);
    const l = await c.lists('kospi');
    expect(l.isuLists[0]!.isuCd).toBe('KR7005930003');
    const inv = await c.investors('kosdaq');
    expect(inv.invstLists[0]!.invstCd).toBe('10');
    const master = await c.master('kospi', '005930');
    expect(master.basPrc).toBe(70800);
    expect(await c.ping()).toBeGreaterThanOrEqual(0);
  });

  it('server errors reject with a coded KrxError; a refused subscribe is undone', async () => {
    const { s, c } = await setup();
    s.getHandler = () => ({ error: 'upstream_unavailable' });
    await expect(c.master('kospi', '005930')).rejects.toMatchObject({ name: 'KrxError', code: 'upstream_unavailable', retryable: true });
    await expect(c.history('kospi', '005930', { from: 'x', to: 'y' })).rejects.toMatchObject({ code: 'invalid_params', retryable: false });
    await expect(c.subscribe('quote', 'kospi', ['005930', 'BAD001'])).rejects.toMatchObject({ code: 'invalid_code' });
    expect(c.subscriptions()).toEqual([]);
    await expect(c.subscribe('book', 'kospi', '*')).rejects.toMatchObject({ code: 'invalid_code' });
    await expect(c.subscribe('nope' as 'quote', 'kospi', '005930')).rejects.toMatchObject({ code: 'invalid_channel' });
    // Refused on the client: no message was sent for them.
    expect(s.ops('subscribe')).toHaveLength(1);
  });

  it('requests time out with code timeout', async () => {
    const { s, c } = await setup({ requestTimeoutMs: 150 });
    s.getHandler = () => 'silent';
    const t0 = Date.now();
    await expect(c.master('kospi', '005930')).rejects.toMatchObject({ code: 'timeout', retryable: true });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140);
    await expect(c.lists('kospi', { timeoutMs: 30 })).rejects.toMatchObject({ code: 'timeout' });
    const ac = new AbortController();
    const p = c.price('kospi', '005930', { signal: ac.signal });
    ac.abort();
    await expect(p).rejects.toMatchObject({ code: 'aborted' });
  });

  it('requests made while disconnected wait for the connection and then succeed', async () => {
    const { s, c } = await setup({ minDelayMs: 150, maxDelayMs: 150, random: () => 0.99 });
    s.terminateAll();
    await waitFor(() => c.state === 'reconnecting', 'reconnecting');
    const m = new QuoteMarket(codes(2), 12);
    s.tick('quote', 'kospi', m.step(1));
    const got = c.master('kospi', '005930');
    const sub = c.subscribe('quote', 'kospi', codes(2));
    const unsub = c.unsubscribe('ohlc', 'kospi', '005930');
    expect(await unsub).toEqual(['ohlc.kospi.005930']);
    expect(((await got) as unknown as Record<string, unknown>)._request).toMatchObject({ resource: 'master' });
    expect(await sub).toEqual(codes(2).map((x) => `quote.kospi.${x}`));
    await waitFor(() => c.topics().length === 2, 'snapshots');
    // The pending subscribe was sent once, on its own; the restore did not repeat it.
    expect(s.ops('subscribe')).toHaveLength(1);
  });

  it('close() rejects pending requests, stops reconnecting, and refuses new requests', async () => {
    const { s, c } = await setup({ requestTimeoutMs: 5000 });
    s.getHandler = () => 'silent';
    const pending = c.master('kospi', '005930').catch((e: unknown) => e);
    const states: ConnectionState[] = [];
    c.on('state', (_p, n) => states.push(n));
    await c.close();
    expect(await pending).toMatchObject({ code: 'closed' });
    expect(c.state).toBe('closed');
    expect(states).toEqual(['closed']);
    // A window, not a wait: a client that went on would be back within its first retry delay (5 ms here).
    await sleep(100);
    expect(s.connections).toBe(1);
    await expect(c.ping()).rejects.toMatchObject({ code: 'closed' });
    await expect(c.subscribe('quote', 'kospi', '005930')).rejects.toMatchObject({ code: 'closed' });
    await expect(c.ready()).rejects.toMatchObject({ code: 'closed' });
  });

  it('close() while reconnecting stops the retry timer', async () => {
    const { s, c } = await setup({ minDelayMs: 100, maxDelayMs: 100, random: () => 0.99 });
    s.terminateAll();
    await waitFor(() => c.state === 'reconnecting', 'reconnecting');
    await c.close();
    // A window, not a wait: the retry timer would have fired by now (99 ms after the cut).
    await sleep(150);
    expect(s.connections).toBe(1);
  });

  it('with reconnect: false a lost connection closes the client and rejects what waits', async () => {
    const { s, c } = await setup({ reconnect: false });
    s.getHandler = () => 'silent';
    const pending = c.master('kospi', '005930').catch((e: unknown) => e);
    await waitFor(() => s.ops('get').length === 1, 'get sent');
    s.terminateAll();
    expect(await pending).toMatchObject({ code: 'connection' });
    expect(c.state).toBe('closed');
  });

  it('backs off harder after 1008 and 4008, and comes back promptly after 1001', async () => {
    const { s, c } = await setup({ minDelayMs: 20, maxDelayMs: 600, restartSpreadMs: 40, random: () => 0.5 });
    const disconnects: number[] = [];
    c.on('disconnect', (code) => disconnects.push(code));
    const gap = async (close: () => void) => {
      const n = s.connections;
      const t0 = performance.now();
      close();
      await waitFor(() => s.connections === n + 1 && c.state === 'open', 'back');
      return performance.now() - t0;
    };
    // 1001: uniform in [0, 40) → 20 ms with random 0.5.
    expect(await gap(() => s.closeAll(1001, 'server shutting down'))).toBeLessThan(200);
    // 1008: at least half of 20·2^4 = 320 ms.
    expect(await gap(() => s.closeAll(1008, 'message rate limit exceeded'))).toBeGreaterThanOrEqual(230);
    expect(await gap(() => s.closeAll(4008, 'slow consumer'))).toBeGreaterThanOrEqual(230);
    expect(disconnects).toEqual([1001, 1008, 4008]);
  });

  it('penalties grow while connections are short-lived and start over once one was stable', async () => {
    const { s, c } = await setup({ minDelayMs: 40, maxDelayMs: 2000, stableAfterMs: 300, random: () => 0.5 });
    const gap = async () => {
      const n = s.connections;
      const t0 = performance.now();
      s.closeAll(1008, 'message rate limit exceeded');
      await waitFor(() => s.connections === n + 1 && c.state === 'open', 'back');
      return performance.now() - t0;
    };
    // 40·2^4 = 640 → 480 ms; at once again: the cap, 2000 → 1500 ms; after a stable spell: 480 ms again.
    expect(await gap()).toBeGreaterThanOrEqual(470);
    expect(await gap()).toBeGreaterThanOrEqual(1490);
    // Stable for stableAfterMs: the client's backoff starts over (nothing outside the client shows it).
    await waitFor(() => (c as unknown as { backoff: Backoff }).backoff.attempt === 0, 'a stable connection', 2000);
    expect(await gap()).toBeLessThan(1200);
  });

  it('drops a connection that went silent (heartbeat) and reconnects', async () => {
    const { s, c } = await setup({}, { heartbeatMs: 100 });
    // A window, not a wait: quiet for more than two heartbeats, alive because the client's pings keep it open.
    await sleep(250);
    expect(s.connections).toBe(1);
    expect(s.ops('ping').length).toBeGreaterThan(0);
    let dropped = false;
    c.on('reconnecting', () => (dropped = true));
    s.responsive = false;
    await waitFor(() => dropped, 'dropped', 2000);
    s.responsive = true;
    await waitFor(() => c.state === 'open' && s.connections === 2, 'back');
  });

  it('unsubscribe drops the rows and nothing more arrives for them', async () => {
    const { s, c } = await setup();
    const m = new QuoteMarket(codes(3), 13);
    s.tick('quote', 'kospi', m.step(1));
    await c.subscribe('quote', 'kospi', codes(3));
    await waitFor(() => c.topics().length === 3, 'snapshots');
    expect(await c.unsubscribe('quote', 'kospi', '000010')).toEqual(['quote.kospi.000010']);
    expect(c.snapshot('quote.kospi.000010')).toBeUndefined();
    const got: string[] = [];
    c.on('update', (t) => got.push(t));
    for (let i = 0; i < 5; i++) s.tick('quote', 'kospi', m.step(1));
    await waitFor(() => got.length >= 10, 'updates');
    expect(got).not.toContain('quote.kospi.000010');
    expect(c.subscriptions()).toEqual([{ channel: 'quote', market: 'kospi', wildcard: false, codes: ['000020', '000030'] }]);
  });

  it('a feed left with nothing subscribed has no status, and a status already on its way is not kept', async () => {
    const { s, c } = await setup();
    const m = new QuoteMarket(codes(2), 17);
    s.tick('quote', 'kospi', m.step(1));
    s.tick('quote', 'kosdaq', m.step(1));
    await c.subscribe('quote', 'kospi', codes(2));
    await c.subscribe('quote', 'kosdaq', '*');
    await waitFor(() => c.status('quote', 'kospi') !== undefined && c.status('quote', 'kosdaq') !== undefined, 'statuses');
    // One code of two gone: the feed is still this client's, and so is its status.
    await c.unsubscribe('quote', 'kospi', codes(1));
    expect(c.status('quote', 'kospi')).toMatchObject({ state: 'live' });
    await c.unsubscribe('quote', 'kospi', codes(2)[1]!);
    expect(c.status('quote', 'kospi')).toBeUndefined();
    const seen: string[] = [];
    c.on('status', (st) => seen.push(`${st.channel}.${st.market}.${st.state}`));
    // A status the server sent before it read the unsubscribe, then one of a feed still held.
    for (const [market, state] of [
      ['kospi', 'closed'],
      ['kosdaq', 'stale'],
    ] as const) {
      for (const session of s.sessions) session.ws.send(JSON.stringify({ type: 'status', market, channel: 'quote', state, intervalMs: 0, ts: Date.now() }));
    }
    await waitFor(() => seen.length > 0, "the held feed's status");
    expect(seen).toEqual(['quote.kosdaq.stale']);
    expect(c.status('quote', 'kospi')).toBeUndefined();
    expect(c.status('quote', 'kosdaq')).toMatchObject({ state: 'stale' });
  });

  it('uses globalThis.WebSocket when no constructor is given, and says what to do when there is none', async () => {
    server = await FakeServer.start();
    expect(() => new KrxClient(server!.url)).toThrow(/options\.WebSocket/);
    expect(() => new KrxClient('http://127.0.0.1:1/ws', { WebSocket })).toThrow(TypeError);
    const g = globalThis as { WebSocket?: unknown };
    g.WebSocket = WebSocket;
    try {
      const c = new KrxClient(`${server.url}`, { token: () => 'secret token' });
      clients.push(c);
      await c.ready();
      expect(c.epoch).toBe('epoch-1');
      expect(c.limits.maxTopics).toBe(1000);
      expect(new URL(server.urls[0]!, 'http://x').searchParams.get('token')).toBe('secret token');
    } finally {
      delete g.WebSocket;
    }
  });

  it('refuses times no timer keeps: a NaN, negative or zero timeout throws at construction, and a request given one rejects with invalid_params unsent', async () => {
    const url = 'ws://127.0.0.1:1/ws';
    for (const [name, v] of [
      ['connectTimeoutMs', Number.NaN],
      ['connectTimeoutMs', -1],
      ['connectTimeoutMs', 0],
      ['requestTimeoutMs', Number.NaN],
      ['requestTimeoutMs', Infinity],
      ['requestTimeoutMs', '5000'],
      ['stableAfterMs', -5],
      ['minDelayMs', 0],
      ['maxDelayMs', Number.NaN],
      ['restartSpreadMs', -1],
      ['factor', 0.5],
    ] as const) {
      expect(() => new KrxClient(url, { WebSocket, [name]: v } as KrxClientOptions), `${name} ${String(v)}`).toThrow(new RegExp(`options\\.${name} must`));
    }
    // Zero is a usable spread and stable time.
    const ok = new KrxClient(url, { WebSocket, restartSpreadMs: 0, stableAfterMs: 0, reconnect: false });
    clients.push(ok);
    const { c, s } = await setup();
    const before = s.received.length;
    for (const timeoutMs of [Number.NaN, -1, 0, 2 ** 31]) {
      await expect(c.master('kospi', '005930', { timeoutMs })).rejects.toMatchObject({
        code: 'invalid_params',
        message: expect.stringMatching(/^timeoutMs must/),
      });
      await expect(c.ready({ timeoutMs })).resolves.toBeUndefined();
    }
    await c.close();
    expect(s.received.slice(before).filter((r) => r.msg.op === 'get')).toEqual([]);
  });
});
