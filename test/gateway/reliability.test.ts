import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { Row } from '../../src/upstream/normalise.js';
import { Client, codes, counter, eventually, rebuild, row, socketOf, startHarness, type Harness } from './harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** Rows of every code with prices moved by `t` (every row changes). */
function wideRows(cs: readonly string[], t: number): Row[] {
  return cs.map((c, i) => row(c, 10_000 + t * 7 + i, { opnprc: t, hgprc: t + 1, lwprc: t - 1, accTrdval: t * 1000 + i }));
}

/** Ticks the whole feed until `done()` or `max` ticks, yielding to I/O between ticks. */
async function tickUntil(hh: Harness, cs: readonly string[], done: () => Promise<boolean>, start = 1, max = 400): Promise<number> {
  let t = start;
  for (; t < start + max; t++) {
    hh.tick('quote', 'kospi', wideRows(cs, t));
    await new Promise((r) => setImmediate(r));
    if (await done()) return t;
  }
  throw new Error('condition not reached');
}

/** A client subscribed to the whole of quote.kospi (`cs`, first ticked at 0), once it has every snapshot. */
async function wholeMarketClient(hh: Harness, cs: readonly string[], opts?: Parameters<typeof Client.connect>[1]): Promise<Client> {
  hh.tick('quote', 'kospi', wideRows(cs, 0));
  const c = await Client.connect(hh.url, opts);
  await c.request({ op: 'subscribe', id: 1, channel: 'quote', market: 'kospi', codes: ['*'] });
  await c.wait(() => c.of('snapshot').length === cs.length);
  return c;
}

/** A check that sends a `ping` message at most every 100 ms (so the server hears from a client that reads nothing); always true. */
function sayingSomething(c: Client): () => true {
  let last = 0;
  return () => {
    if (Date.now() - last >= 100) {
      c.send({ op: 'ping', id: 'alive' });
      last = Date.now();
    }
    return true;
  };
}

describe('slow consumers', () => {
  it('a client that never reads falls behind, then is closed with 4008 once owed more than closeBytes; others keep receiving', async () => {
    h = await startHarness({ slow: { conflateBytes: 64 << 10, closeBytes: 1 << 20, maxBehindMs: 20_000 }, closeTimeoutMs: 10_000 }, {}, 2000);
    const hh = h;
    const cs = codes(2000);
    const slow = await wholeMarketClient(hh, cs);
    const fast = await Client.connect(hh.url);
    await fast.request({ op: 'subscribe', id: 1, channel: 'quote', market: 'kospi', codes: ['000001', '001999'] });
    socketOf(slow).pause();
    const step = (s: string) => counter(hh.metrics, 'krx_slow_consumer_total', { step: s });
    const last = await tickUntil(hh, cs, async () => (await step('close')) > 0);
    expect(await step('conflate')).toBeGreaterThanOrEqual(1);
    expect(await step('close')).toBe(1);
    expect(await counter(hh.metrics, 'krx_server_closes_total', { code: '4008' })).toBe(1);
    // The fast client got every tick, in order.
    const seq = hh.store.entry('quote', 'kospi', '001999')!.seq;
    expect(seq).toBe(last + 1);
    await fast.wait(() => fast.msgs.some((m) => m.topic === 'quote.kospi.001999' && m.seq === seq), 5000);
    expect(rebuild(fast.msgs).get('quote.kospi.001999')).toEqual({ seq, data: hh.store.entry('quote', 'kospi', '001999')!.row });
    // Once it reads again, the slow client finds the close frame behind what was buffered.
    socketOf(slow).resume();
    expect(await slow.closedWith(8000)).toEqual({ code: 4008, reason: 'slow consumer: too far behind' });
    fast.close();
  });

  it('a client that catches up gets fresh snapshots instead of the missed patches', async () => {
    h = await startHarness({ slow: { conflateBytes: 64 << 10, closeBytes: 1 << 30, maxBehindMs: 20_000 } }, {}, 1000);
    const hh = h;
    const cs = codes(1000);
    const c = await wholeMarketClient(hh, cs);
    socketOf(c).pause();
    const conflated = () => counter(hh.metrics, 'krx_slow_consumer_total', { step: 'conflate' });
    let t = await tickUntil(hh, cs, async () => (await conflated()) > 0);
    for (let i = 0; i < 5; i++) hh.tick('quote', 'kospi', wideRows(cs, ++t));
    const snapshotsBefore = c.of('snapshot').length;
    socketOf(c).resume();
    // Conflation turned the missed patches into one snapshot per dirty topic.
    await c.wait(() => c.of('snapshot').length >= snapshotsBefore + 1000, 8000);
    hh.tick('quote', 'kospi', wideRows(cs, t + 1));
    await c.request({ op: 'ping', id: 'end' }, 8000);
    const local = rebuild(c.msgs);
    for (const code of ['000001', '000500', '001000']) {
      const e = hh.store.entry('quote', 'kospi', code)!;
      expect(local.get(e.topic)).toEqual({ seq: e.seq, data: e.row });
    }
    expect(await counter(hh.metrics, 'krx_slow_consumer_total', { step: 'close' })).toBe(0);
    expect(c.closed).toBeUndefined();
    c.close();
  });

  it('a client behind for longer than maxBehindMs is closed with 4008', async () => {
    h = await startHarness({ slow: { conflateBytes: 64 << 10, closeBytes: 1 << 30, maxBehindMs: 300 }, closeTimeoutMs: 10_000 }, {}, 1000);
    const hh = h;
    const cs = codes(1000);
    const c = await wholeMarketClient(hh, cs);
    socketOf(c).pause();
    const t = await tickUntil(hh, cs, async () => (await counter(hh.metrics, 'krx_slow_consumer_total', { step: 'conflate' })) > 0);
    const t0 = Date.now();
    // The market keeps moving (a kernel buffer with room left could otherwise take a whole catch-up, which is no longer behind).
    const closed = async () => (await counter(hh.metrics, 'krx_slow_consumer_total', { step: 'close' })) > 0;
    for (let i = t + 1; !(await closed()); i++) {
      if (Date.now() - t0 > 3000) throw new Error('not closed within 3 s');
      hh.tick('quote', 'kospi', wideRows(cs, i));
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(Date.now() - t0).toBeGreaterThanOrEqual(200);
    socketOf(c).resume();
    expect((await c.closedWith(8000)).code).toBe(4008);
  });
});

describe('inbound limits', () => {
  it('a flood gets rate_limited errors, then close 1008', async () => {
    h = await startHarness({ limits: { maxMessagesPerSecond: 10 } });
    const c = await Client.connect(h.url);
    for (let i = 0; i < 40; i++) c.send({ op: 'ping', id: i });
    const closed = await c.closedWith();
    expect(closed.code).toBe(1008);
    expect(c.of('pong').length).toBe(20);
    expect(c.of('error').filter((m) => m.code === 'rate_limited' && m.retryable === true).length).toBe(10);
    expect(await counter(h.metrics, 'krx_server_closes_total', { code: '1008' })).toBe(1);
  });

  it('a burst from many connections at once is handled over several turns, each connection answered in order', async () => {
    h = await startHarness({ limits: { maxMessagesPerSecond: 1000 } });
    const hh = h;
    const clients = await Promise.all(Array.from({ length: 40 }, () => Client.connect(hh.url)));
    const inbound = (hh.gateway as unknown as { inbound: { size: number } }).inbound;
    let maxWaiting = 0;
    let sampling = true;
    const sample = (): void => {
      maxWaiting = Math.max(maxWaiting, inbound.size);
      if (sampling) setImmediate(sample);
    };
    sample();
    for (const c of clients) for (let i = 0; i < 200; i++) c.send({ op: 'ping', id: i });
    await Promise.all(clients.map((c) => c.wait(() => c.of('pong').length === 200)));
    sampling = false;
    // Frames waited for a later turn instead of being handled in the one they arrived in.
    expect(maxWaiting).toBeGreaterThan(0);
    for (const c of clients) expect(c.of('pong').map((m) => m.id)).toEqual(Array.from({ length: 200 }, (_, i) => i));
    for (const c of clients) c.close();
  });

  it("a flood that arrives behind other connections' backlog gets every answer before its 1008", async () => {
    h = await startHarness({ limits: { maxMessagesPerSecond: 10 } });
    const hh = h;
    const busy = await Promise.all(Array.from({ length: 20 }, () => Client.connect(hh.url)));
    const c = await Client.connect(hh.url);
    // The busy clients' frames fill this turn's budget, so the flood's frames, refusals and close wait in the queue behind them.
    for (const b of busy) for (let i = 0; i < 15; i++) b.send({ op: 'get', id: i, resource: 'lists', market: 'kospi' });
    for (let i = 0; i < 40; i++) c.send({ op: 'ping', id: i });
    const closed = await c.closedWith();
    expect(closed.code).toBe(1008);
    expect(c.of('pong').map((m) => m.id)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(c.of('error').filter((m) => m.code === 'rate_limited').length).toBe(10);
    for (const b of busy) b.close();
  });

  it('messages over the rate but under the flood bound are refused and the connection stays', async () => {
    // The gateway's monotonic clock (what rate limits run on), moved by hand: the bucket refills without waiting for it.
    let now = performance.now();
    h = await startHarness({ limits: { maxMessagesPerSecond: 10 }, monotonic: () => now });
    const c = await Client.connect(h.url);
    for (let i = 0; i < 25; i++) c.send({ op: 'ping', id: i });
    await c.wait(() => c.of('pong').length + c.of('error').length === 25);
    expect(c.of('error').every((m) => m.code === 'rate_limited')).toBe(true);
    expect(c.of('error').length).toBe(5);
    now += 300;
    expect((await c.request({ op: 'ping', id: 'later' })).type).toBe('pong');
    c.close();
  });

  it('a client that keeps passing the rate (below the flood bound) is closed with 1008', async () => {
    // The gateway's monotonic clock, moved by hand: a second goes by between bursts without waiting for it.
    let now = performance.now();
    h = await startHarness({ limits: { maxMessagesPerSecond: 2 }, monotonic: () => now });
    const c = await Client.connect(h.url);
    let sent = 0;
    while (!c.closed && sent < 60) {
      for (let i = 0; i < 6; i++) c.send({ op: 'ping', id: sent++ });
      // Every ping answered (a pong or a refusal), or the connection closed.
      await c.wait(() => c.closed ?? c.of('pong').length + c.of('error').length === sent, 3000, 'the burst answered');
      now += 1050;
    }
    expect(c.closed?.code).toBe(1008);
    // 5 × 2 refusals within 10 s: closed after a few seconds, not at the first refusal.
    expect(c.of('error').filter((m) => m.code === 'rate_limited').length).toBe(10);
  });

  it('a frame over maxPayloadBytes closes with 1009', async () => {
    h = await startHarness({ limits: { maxPayloadBytes: 1024 } });
    const c = await Client.connect(h.url);
    expect(c.msgs[0]!.limits.maxPayloadBytes).toBe(1024);
    c.send({ op: 'ping', id: 'x'.repeat(2000) });
    expect((await c.closedWith()).code).toBe(1009);
    await eventually(async () => (await counter(h!.metrics, 'krx_server_closes_total', { code: '1009' })) === 1);
  });

  it('get requests past getsPerMinute are rate_limited', async () => {
    h = await startHarness({ limits: { getsPerMinute: 2 } });
    const c = await Client.connect(h.url);
    for (const id of [1, 2]) {
      expect((await c.request({ op: 'get', id, resource: 'master', market: 'kospi', code: '000001' })).type).toBe('result');
    }
    const e = await c.request({ op: 'get', id: 3, resource: 'master', market: 'kospi', code: '000001' });
    expect(e).toMatchObject({ type: 'error', code: 'rate_limited', retryable: true });
    expect(h.onDemand.calls).toHaveLength(2);
    c.close();
  });
});

/** Attempts an upgrade; resolves with the HTTP status of a refusal, or 101 when it opened. */
function upgradeStatus(url: string, opts: ConstructorParameters<typeof WebSocket>[2] = {}): Promise<{ status: number; body: string; ws: WebSocket }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, opts);
    ws.on('open', () => resolve({ status: 101, body: '', ws }));
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += String(d)));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, ws }));
    });
    ws.on('error', (err) => reject(err));
  });
}

describe('connections', () => {
  it('refuses connections past the per-address cap with 429', async () => {
    h = await startHarness({ maxConnectionsPerIp: 2 });
    const a = await Client.connect(h.url);
    const b = await Client.connect(h.url);
    const r = await upgradeStatus(h.url);
    expect(r.status).toBe(429);
    expect(JSON.parse(r.body).error.code).toBe('too_many_connections');
    a.close();
    await a.closedWith();
    await eventually(() => h!.gateway.clientCount === 1, 3000, 'the server to let the first connection go');
    const c = await Client.connect(h.url);
    expect(await counter(h.metrics, 'krx_connections_total', { outcome: 'too_many' })).toBe(1);
    b.close();
    c.close();
  });

  it('answers 404 on other upgrade paths', async () => {
    h = await startHarness();
    const r = await upgradeStatus(h.url.replace('/ws', '/other'));
    expect(r.status).toBe(404);
  });

  it('terminates a peer that never answers pings (heartbeat)', async () => {
    h = await startHarness({ heartbeatMs: 100 });
    const silent = await Client.connect(h.url, { autoPong: false });
    const alive = await Client.connect(h.url);
    let pings = 0;
    alive.ws.on('ping', () => pings++);
    const closed = await silent.closedWith(2000);
    expect(closed.code).toBe(1006);
    expect(await counter(h.metrics, 'krx_server_closes_total', { code: '4002' })).toBe(1);
    // Three more heartbeats: a server that dropped peers that do answer would have dropped this one by then.
    const seen = pings;
    await alive.wait(() => alive.closed ?? pings >= seen + 3, 3000, 'three more heartbeats');
    expect(alive.closed).toBeUndefined();
    expect((await alive.request({ op: 'ping', id: 1 })).type).toBe('pong');
    alive.close();
  });

  it('does not time a connection behind by the heartbeat: its pings wait behind what it has not read, and 4008 closes it', async () => {
    h = await startHarness({ heartbeatMs: 250, slow: { conflateBytes: 64 << 10, closeBytes: 1 << 30, maxBehindMs: 2000 }, closeTimeoutMs: 10_000 }, {}, 1000);
    const hh = h;
    const cs = codes(1000);
    const c = await wholeMarketClient(hh, cs);
    // From here it reads nothing, neither updates nor pings; until it is behind it still says something now and then.
    socketOf(c).pause();
    const said = sayingSomething(c);
    const t = await tickUntil(hh, cs, async () => said() && (await counter(hh.metrics, 'krx_slow_consumer_total', { step: 'conflate' })) > 0);
    const t0 = Date.now();
    const closes = async () =>
      (await counter(hh.metrics, 'krx_server_closes_total', { code: '4008' })) + (await counter(hh.metrics, 'krx_server_closes_total', { code: '4002' }));
    for (let i = t + 1; (await closes()) === 0; i++) {
      if (Date.now() - t0 > 6000) throw new Error('not closed within 6 s');
      hh.tick('quote', 'kospi', wideRows(cs, i));
      await new Promise((r) => setTimeout(r, 20));
    }
    // Past eight heartbeats without a pong, closed by the slow-consumer rule, not cut.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1900);
    expect(await counter(hh.metrics, 'krx_server_closes_total', { code: '4002' })).toBe(0);
    expect(await counter(hh.metrics, 'krx_server_closes_total', { code: '4008' })).toBe(1);
    socketOf(c).resume();
    expect((await c.closedWith(8000)).code).toBe(4008);
  });

  it('times a connection by the heartbeat again once it has caught up', async () => {
    h = await startHarness({ heartbeatMs: 250, slow: { conflateBytes: 64 << 10, closeBytes: 1 << 30, maxBehindMs: 20_000 } }, {}, 1000);
    const hh = h;
    const cs = codes(1000);
    // It reads, but never answers a ping: only its messages show it alive.
    const c = await wholeMarketClient(hh, cs, { autoPong: false });
    socketOf(c).pause();
    const step = (s: string) => counter(hh.metrics, 'krx_slow_consumer_total', { step: s });
    const said = sayingSomething(c);
    const t = await tickUntil(hh, cs, async () => said() && (await step('conflate')) > 0);
    // Four heartbeats behind, the market moving (else the kernel's buffers could take a whole catch-up): not cut.
    for (let i = t + 1, t0 = Date.now(); Date.now() - t0 < 1000; i++) {
      hh.tick('quote', 'kospi', wideRows(cs, i));
      await new Promise((r) => setTimeout(r, 20));
    }
    // (Its kernel's buffers may have taken a catch-up in between, and it fell behind again: the heartbeat never had two intervals.)
    expect(hh.gateway.clientCount).toBe(1);
    expect(await step('conflate')).toBeGreaterThan(await step('drain'));
    socketOf(c).resume();
    await eventually(async () => (await counter(hh.metrics, 'krx_server_closes_total', { code: '4002' })) === 1, 5000, 'the heartbeat to cut it');
    expect(await step('drain')).toBe(await step('conflate'));
    expect(await counter(hh.metrics, 'krx_server_closes_total', { code: '4008' })).toBe(0);
    expect((await c.closedWith(5000)).code).toBe(1006);
  });

  it('close() sends 1001 to every client and refuses new upgrades', async () => {
    h = await startHarness();
    const a = await Client.connect(h.url);
    const b = await Client.connect(h.url);
    await a.request({ op: 'subscribe', id: 1, channel: 'quote', market: 'kospi', codes: ['000001'] });
    await h.gateway.close();
    expect(await a.closedWith()).toEqual({ code: 1001, reason: 'server shutting down' });
    expect((await b.closedWith()).code).toBe(1001);
    expect(h.gateway.clientCount).toBe(0);
    expect(h.demand.active('quote', 'kospi')).toBe(false);
    expect((await upgradeStatus(h.url)).status).toBe(503);
  });
});
