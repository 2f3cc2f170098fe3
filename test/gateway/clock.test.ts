import { afterEach, describe, expect, it } from 'vitest';
import type { Row } from '../../src/upstream/normalise.js';
import { Client, codes, counter, row, sleep, socketOf, startHarness, type Harness } from './harness.js';

/**
 * The gateway's two clocks, injected apart: the wall clock (`now`) is only
 * for times that go on the wire; every elapsed time (heartbeat liveness,
 * time behind, the message rate, the get rate) is measured on the monotonic clock. A
 * wall clock stepped by NTP or a VM resumed must neither cut clients that
 * answer their pings nor keep dead ones.
 */

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** A wall clock that can be stepped: the real one plus `shift` ms. */
function steppedWall(): { now: () => number; step(ms: number): void } {
  let shift = 0;
  return { now: () => Date.now() + shift, step: (ms) => void (shift += ms) };
}

/** Counts the server's pings to `c` from now on. */
function pings(c: Client): () => number {
  let n = 0;
  c.ws.on('ping', () => n++);
  return () => n;
}

describe('the heartbeat runs on the monotonic clock', () => {
  it('a wall clock stepped 50 s forward cuts no client that answers its pings; a silent one is still cut', async () => {
    const wall = steppedWall();
    h = await startHarness({ heartbeatMs: 100, now: wall.now, monotonic: () => performance.now() });
    const alive = await Client.connect(h.url);
    const silent = await Client.connect(h.url, { autoPong: false });
    const pinged = pings(alive);
    wall.step(50_000);
    // The silent peer goes after two heartbeats of monotonic time (a peer cut for 4002 gets no close frame: 1006).
    expect((await silent.closedWith(2000)).code).toBe(1006);
    // Five heartbeats after the step: any of them would have cut `alive` had it measured the wall clock.
    await alive.wait(() => alive.closed ?? pinged() >= 5, 3000, 'five heartbeats');
    expect(alive.closed).toBeUndefined();
    expect(await counter(h.metrics, 'krx_server_closes_total', { code: '4002' })).toBe(1);
    // What goes on the wire is still the wall clock, step included.
    const pong = await alive.request({ op: 'ping', id: 1 });
    expect(pong.ts).toBeGreaterThan(Date.now() + 40_000);
    alive.close();
  });

  it('a wall clock stepped back (or standing still) does not keep a silent peer', async () => {
    const wall = steppedWall();
    h = await startHarness({ heartbeatMs: 100, now: wall.now });
    const silent = await Client.connect(h.url, { autoPong: false });
    wall.step(-50_000);
    // Measured on the wall clock, the peer would seem heard from 50 s in the future and never be cut.
    expect((await silent.closedWith(2000)).code).toBe(1006);
    expect(await counter(h.metrics, 'krx_server_closes_total', { code: '4002' })).toBe(1);
  });

  it('is the injected monotonic clock: a peer is cut when it moves past two heartbeats, not before', async () => {
    let mono = 0;
    h = await startHarness({ heartbeatMs: 100, monotonic: () => mono });
    const silent = await Client.connect(h.url, { autoPong: false });
    // Real heartbeats go by, but no monotonic time: nothing elapsed, nobody is cut.
    await sleep(450);
    expect(silent.closed).toBeUndefined();
    mono += 250;
    expect((await silent.closedWith(2000)).code).toBe(1006);
  });
});

describe('the message rate runs on the monotonic clock', () => {
  it('a wall clock stepped forward does not refill a bucket, and a refusal keeps the request id', async () => {
    const wall = steppedWall();
    let mono = 0;
    h = await startHarness({ limits: { maxMessagesPerSecond: 2 }, now: wall.now, monotonic: () => mono });
    const c = await Client.connect(h.url);
    // A bucket of 2 × 2: four pings pass, the fifth is refused.
    for (let i = 0; i < 5; i++) c.send({ op: 'ping', id: i });
    await c.wait(() => c.of('pong').length + c.of('error').length === 5);
    expect(c.of('pong').map((m) => m.id)).toEqual([0, 1, 2, 3]);
    wall.step(60_000);
    expect(await c.request({ op: 'ping', id: 'after-the-step' })).toMatchObject({ type: 'error', code: 'rate_limited' });
    // A second of monotonic time refills two.
    mono += 1000;
    expect(await c.request({ op: 'ping', id: 'a-second-later' })).toMatchObject({ type: 'pong' });
    expect(c.closed).toBeUndefined();
    c.close();
  });
});

describe('the get rate runs on the monotonic clock', () => {
  it('a wall clock stepped forward does not refill a client’s lookups; monotonic time does', async () => {
    const wall = steppedWall();
    let mono = 0;
    h = await startHarness({ limits: { getsPerMinute: 2 }, now: wall.now, monotonic: () => mono });
    const c = await Client.connect(h.url);
    const get = (id: string) => c.request({ op: 'get', id, resource: 'master', market: 'kospi', code: '000001' });
    expect(await get('a')).toMatchObject({ type: 'result' });
    expect(await get('b')).toMatchObject({ type: 'result' });
    expect(await get('c')).toMatchObject({ type: 'error', code: 'rate_limited' });
    wall.step(60_000);
    expect(await get('after-the-step')).toMatchObject({ type: 'error', code: 'rate_limited' });
    // Half a minute of monotonic time refills one of the two.
    mono += 30_000;
    expect(await get('half-a-minute-later')).toMatchObject({ type: 'result' });
    expect(await get('and-no-more')).toMatchObject({ type: 'error', code: 'rate_limited' });
    c.close();
  });
});

describe('the slow-consumer timer runs on the monotonic clock', () => {
  /** Rows of every code with prices moved by `t`. */
  const wide = (cs: readonly string[], t: number): Row[] => cs.map((c, i) => row(c, 10_000 + t * 7 + i, { opnprc: t, accTrdval: t * 1000 + i }));

  it('a wall clock stepped past maxBehindMs does not close a connection behind; it catches up when it reads', async () => {
    const wall = steppedWall();
    h = await startHarness({ now: wall.now, slow: { conflateBytes: 64 << 10, closeBytes: 1 << 30, maxBehindMs: 5000 }, slowCheckMs: 20 }, {}, 1000);
    const hh = h;
    const cs = codes(1000);
    hh.tick('quote', 'kospi', wide(cs, 0));
    const c = await Client.connect(hh.url);
    await c.request({ op: 'subscribe', id: 1, channel: 'quote', market: 'kospi', codes: ['*'] });
    await c.wait(() => c.of('snapshot').length === cs.length);
    socketOf(c).pause();
    let t = 1;
    for (; (await counter(hh.metrics, 'krx_slow_consumer_total', { step: 'conflate' })) === 0; t++) {
      if (t > 400) throw new Error('never fell behind');
      hh.tick('quote', 'kospi', wide(cs, t));
      await new Promise((r) => setImmediate(r));
    }
    wall.step(60_000);
    // Several periodic checks of the connection behind, the market moving: measured on the wall clock, it was 60 s behind.
    for (const end = Date.now() + 300; Date.now() < end; t++) {
      hh.tick('quote', 'kospi', wide(cs, t));
      await sleep(20);
    }
    expect(await counter(hh.metrics, 'krx_slow_consumer_total', { step: 'close' })).toBe(0);
    const from = c.msgs.length;
    socketOf(c).resume();
    // Caught up: the fresh snapshot of what changed while it read nothing, at the last tick.
    const last = t - 1;
    await c.until((m) => m.type === 'snapshot' && m.topic === 'quote.kospi.000001' && m.data.opnprc === last, 5000, from);
    expect(c.closed).toBeUndefined();
    expect(await counter(hh.metrics, 'krx_slow_consumer_total', { step: 'drain' })).toBeGreaterThan(0);
    c.close();
  });
});
