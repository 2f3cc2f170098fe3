import { afterEach, describe, expect, it } from 'vitest';
import { ChangeClock } from '../../src/gateway/clock.js';
import { SubscriptionIndex } from '../../src/gateway/index.js';
import { Outbox } from '../../src/gateway/outbox.js';
import type { Session } from '../../src/gateway/session.js';
import { SmallSet } from '../../src/gateway/smallset.js';
import { owedSnapshots } from '../../src/gateway/snapshots.js';
import { StateStore } from '../../src/state/store.js';
import type { Row } from '../../src/upstream/normalise.js';
import { Client, codes, counter, eventually, rebuild, row, socketOf, startHarness, type Harness } from './harness.js';

/**
 * Conflation by reference: a connection that falls behind keeps the tick it
 * stopped at, and is owed what changed since, computed from the change
 * clock. These tests hold what it is sent when it reads again: subscribe,
 * unsubscribe and status while behind, explicit topics, and the pieces
 * (the clock, the owed snapshots) on their own.
 */

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** Rows of every code with prices moved by `t` and a `pad`-character field (every row changes). */
function wideRows(cs: readonly string[], t: number, pad = 0): Row[] {
  return cs.map((c, i) => row(c, 10_000 + t * 7 + i, { opnprc: t, accTrdval: t * 1000 + i, ...(pad ? { memo: String(t % 10).repeat(pad) } : {}) }));
}

/** Ticks quote.kospi until the first connection falls behind; returns the last tick. */
async function tickUntilBehind(hh: Harness, cs: readonly string[], t = 1): Promise<number> {
  for (const end = t + 400; t < end; t++) {
    hh.tick('quote', 'kospi', wideRows(cs, t));
    await new Promise((r) => setImmediate(r));
    if ((await counter(hh.metrics, 'krx_slow_consumer_total', { step: 'conflate' })) > 0) return t;
  }
  throw new Error('never fell behind');
}

/** Topics of a feed whose rebuilt row or seq differ from the store's. */
function stale(
  hh: Harness,
  local: ReturnType<typeof rebuild>,
  channel: 'quote' | 'ohlc',
  topics?: readonly string[],
  market: 'kospi' | 'kosdaq' = 'kospi',
): string[] {
  const out: string[] = [];
  for (const e of hh.store.entries(channel, market)) {
    if (topics && !topics.includes(e.topic)) continue;
    const l = local.get(e.topic);
    if (l?.seq !== e.seq || JSON.stringify(l.data) !== JSON.stringify(e.row)) out.push(e.topic);
  }
  return out;
}

describe('a connection behind', () => {
  it('that falls behind in a round of both markets, written as one, is owed what both changed', async () => {
    h = await startHarness({ slow: { maxBehindMs: 20_000 } }, {}, 2000);
    const hh = h;
    const cs = codes(2000);
    const ks = codes(2000, 500000);
    // Both markets' batches published together, as the poller publishes a round: one flush, one tick.
    const round = (t: number) =>
      hh.bus.publishAll([hh.store.apply('quote', 'kospi', wideRows(cs, t), Date.now()), hh.store.apply('quote', 'kosdaq', wideRows(ks, t), Date.now())]);
    round(0);
    const c = await Client.connect(hh.url);
    await c.request({ op: 'subscribe', id: 1, channel: 'quote', market: 'kospi', codes: ['*'] });
    await c.request({ op: 'subscribe', id: 2, channel: 'quote', market: 'kosdaq', codes: ['*'] });
    await c.wait(() => c.of('snapshot').length === 4000);
    socketOf(c).pause();
    // Stops at the round in which it fell behind: what that round changed is owed, nothing later covers it.
    for (let t = 1; (await counter(hh.metrics, 'krx_slow_consumer_total', { step: 'conflate' })) === 0; t++) {
      if (t > 400) throw new Error('never fell behind');
      round(t);
      await new Promise((r) => setImmediate(r));
    }
    socketOf(c).resume();
    await eventually(() => hh.gateway.stats().behind === 0, 8000, 'caught up');
    await c.request({ op: 'ping', id: 'end' }, 8000);
    const local = rebuild(c.msgs);
    expect(stale(hh, local, 'quote', undefined, 'kospi')).toEqual([]);
    expect(stale(hh, local, 'quote', undefined, 'kosdaq')).toEqual([]);
    expect(hh.gateway.stats().behind).toBe(0);
    c.close();
  });

  it('that subscribes gets subscribed, then snapshots of the new topics, never a patch before them', async () => {
    h = await startHarness({ slow: { maxBehindMs: 20_000 } }, {}, 2000);
    const hh = h;
    const cs = codes(2000);
    hh.tick('quote', 'kospi', wideRows(cs, 0));
    hh.tick('ohlc', 'kospi', wideRows(cs.slice(0, 3), 0));
    const c = await Client.connect(hh.url);
    await c.request({ op: 'subscribe', id: 1, channel: 'quote', market: 'kospi', codes: ['*'] });
    await c.wait(() => c.of('snapshot').length === 2000);
    socketOf(c).pause();
    let t = await tickUntilBehind(hh, cs);
    c.send({ op: 'subscribe', id: 2, channel: 'ohlc', market: 'kospi', codes: cs.slice(0, 3) });
    // At least three ticks, and on until the connection is behind again: the kernel's buffers can take what was queued at first.
    for (let i = 0; i < 3 || (i < 200 && hh.gateway.stats().behind === 0); i++) {
      hh.tick('ohlc', 'kospi', wideRows(cs.slice(0, 3), ++t));
      hh.tick('quote', 'kospi', wideRows(cs, t));
      await new Promise((r) => setImmediate(r));
    }
    expect(hh.gateway.stats().behind).toBe(1);
    const drained = await counter(hh.metrics, 'krx_slow_consumer_total', { step: 'drain' });
    socketOf(c).resume();
    await c.until((m) => m.id === 2 && m.type === 'subscribed', 8000);
    await c.request({ op: 'ping', id: 'end' }, 8000);
    const at = c.msgs.findIndex((m) => m.id === 2);
    expect(c.msgs.slice(0, at).some((m) => m.topic?.startsWith('ohlc.'))).toBe(false);
    const local = rebuild(c.msgs);
    expect(stale(hh, local, 'ohlc')).toEqual([]);
    expect(stale(hh, local, 'quote')).toEqual([]);
    expect(hh.gateway.stats().behind).toBe(0);
    expect(await counter(hh.metrics, 'krx_slow_consumer_total', { step: 'drain' })).toBe(drained + 1);
    c.close();
  });

  it('that unsubscribes while its snapshots are being written gets none of them after unsubscribed', async () => {
    h = await startHarness({}, {}, 4500);
    const hh = h;
    const cs = codes(4500);
    // About 4.5 MB of snapshots: more than the kernel buffers of a client that has not read yet.
    hh.tick('quote', 'kospi', wideRows(cs, 0, 1000));
    const c = await Client.connect(hh.url);
    socketOf(c).pause();
    c.send({ op: 'subscribe', id: 1, channel: 'quote', market: 'kospi', codes: ['*'] });
    await eventually(() => hh.gateway.stats().behind === 1, 3000, 'behind');
    hh.tick('quote', 'kospi', wideRows(cs, 1, 1000));
    c.send({ op: 'unsubscribe', id: 2, channel: 'quote', market: 'kospi', codes: ['*'] });
    await eventually(async () => (await counter(hh.metrics, 'krx_messages_in_total', { op: 'unsubscribe' })) === 1, 3000, 'the unsubscribe handled');
    socketOf(c).resume();
    await c.request({ op: 'ping', id: 'end' }, 8000);
    const at = c.msgs.findIndex((m) => m.type === 'unsubscribed');
    expect(at).toBeGreaterThan(0);
    expect(c.msgs.slice(at).filter((m) => m.type === 'snapshot' || m.type === 'patch')).toEqual([]);
    // It stopped short of the whole market: the rest were never made.
    expect(c.of('snapshot').length).toBeGreaterThan(0);
    expect(c.of('snapshot').length).toBeLessThan(4500);
    expect(c.msgs.findIndex((m) => m.type === 'subscribed')).toBeLessThan(c.msgs.findIndex((m) => m.type === 'snapshot'));
    c.close();
  });

  it('gets a status published meanwhile once it reads again', async () => {
    h = await startHarness({}, {}, 2000);
    const hh = h;
    const cs = codes(2000);
    hh.tick('quote', 'kospi', wideRows(cs, 0));
    const c = await Client.connect(hh.url);
    await c.request({ op: 'subscribe', id: 1, channel: 'quote', market: 'kospi', codes: ['*'] });
    await c.wait(() => c.of('snapshot').length === 2000);
    socketOf(c).pause();
    await tickUntilBehind(hh, cs);
    hh.bus.publishStatus({ channel: 'quote', market: 'kospi', state: 'stale', intervalMs: 2000, reason: 'timeout', ts: 9 });
    socketOf(c).resume();
    const st = await c.until((m) => m.type === 'status' && m.state === 'stale', 8000);
    expect(st).toMatchObject({ channel: 'quote', market: 'kospi', intervalMs: 2000 });
    c.close();
  });

  it('with explicit topics is owed one snapshot of each of its topics that changed, then gets patches again', async () => {
    h = await startHarness({}, {}, 2000);
    const hh = h;
    const cs = codes(2000);
    hh.tick('quote', 'kospi', wideRows(cs, 0, 300));
    const mine = cs.slice(0, 400);
    const c = await Client.connect(hh.url);
    await c.request({ op: 'subscribe', id: 1, channel: 'quote', market: 'kospi', codes: mine });
    await c.wait(() => c.of('snapshot').length === 400);
    socketOf(c).pause();
    let t = 0;
    for (; t < 400 && hh.gateway.stats().behind === 0;) {
      hh.tick('quote', 'kospi', wideRows(cs, ++t, 300));
      await new Promise((r) => setImmediate(r));
    }
    expect(hh.gateway.stats().behind).toBe(1);
    // While behind, only the first ten of its topics change.
    hh.tick('quote', 'kospi', wideRows(cs.slice(0, 10), ++t, 300));
    const before = c.msgs.length;
    socketOf(c).resume();
    await eventually(() => hh.gateway.stats().behind === 0, 8000, 'caught up');
    hh.tick('quote', 'kospi', wideRows(cs, t + 1, 300));
    await c.request({ op: 'ping', id: 'live' }, 8000);
    const local = rebuild(c.msgs);
    expect(
      stale(
        hh,
        local,
        'quote',
        mine.map((x) => `quote.kospi.${x}`),
      ),
    ).toEqual([]);
    const after = c.msgs.slice(before);
    expect(after.some((m) => m.topic !== undefined && !mine.includes(m.topic.split('.')[2]))).toBe(false);
    // One snapshot per topic owed, then live: a patch of each topic for the last tick.
    const snaps = after.filter((m) => m.type === 'snapshot').map((m) => m.topic);
    expect(new Set(snaps).size).toBe(snaps.length);
    expect(after.filter((m) => m.type === 'patch' && m.seq === hh.store.entry('quote', 'kospi', m.topic.split('.')[2])!.seq)).toHaveLength(400);
    c.close();
  });
});

describe('a failure while making what a connection is sent', () => {
  it('closes that connection with 1011; the others go on', async () => {
    h = await startHarness({}, {}, 100);
    const hh = h;
    const cs = codes(100);
    hh.tick('quote', 'kospi', wideRows(cs, 0));
    const other = await Client.connect(hh.url);
    await other.request({ op: 'subscribe', id: 1, channel: 'quote', market: 'kospi', codes: cs.slice(0, 2) });
    const c = await Client.connect(hh.url);
    const snapshot = hh.store.snapshot.bind(hh.store);
    hh.store.snapshot = () => {
      throw new Error('snapshot failed');
    };
    c.send({ op: 'subscribe', id: 1, channel: 'quote', market: 'kospi', codes: ['*'] });
    expect((await c.closedWith()).code).toBe(1011);
    hh.store.snapshot = snapshot;
    hh.tick('quote', 'kospi', wideRows(cs, 1));
    await other.until((m) => m.type === 'patch' && m.seq === 2);
    expect(await counter(hh.metrics, 'krx_server_closes_total', { code: '1011' })).toBe(1);
    other.close();
  });
});

describe('a compressed connection (permessage-deflate)', () => {
  it('falls behind and catches up the same way, holding no more than a tick', async () => {
    h = await startHarness({ perMessageDeflate: true }, {}, 2000);
    const hh = h;
    const cs = codes(2000);
    hh.tick('quote', 'kospi', wideRows(cs, 0, 200));
    const c = await Client.connect(hh.url, { perMessageDeflate: true });
    await c.request({ op: 'subscribe', id: 1, channel: 'quote', market: 'kospi', codes: ['*'] });
    await c.wait(() => c.of('snapshot').length === 2000, 8000);
    socketOf(c).pause();
    let t = 0;
    let held = 0;
    const session = [...(hh.gateway as unknown as { sessions: Set<Session> }).sessions][0]!;
    // Ticks a few ms apart, as a feed's come (not all in one turn), the socket's queue sampled between them.
    for (; t < 400 && hh.gateway.stats().behind === 0;) {
      hh.tick('quote', 'kospi', wideRows(cs, ++t, 200));
      await new Promise((r) => setTimeout(r, 5));
      held = Math.max(held, session.ws.bufferedAmount);
    }
    expect(hh.gateway.stats().behind).toBe(1);
    for (let i = 0; i < 5; i++) {
      hh.tick('quote', 'kospi', wideRows(cs, ++t, 200));
      await new Promise((r) => setTimeout(r, 5));
      held = Math.max(held, session.ws.bufferedAmount);
    }
    // A tick of this market is about 1 MB before compression: more than that is never waiting.
    expect(held).toBeLessThan(2 << 20);
    socketOf(c).resume();
    await eventually(() => hh.gateway.stats().behind === 0, 8000, 'caught up');
    hh.tick('quote', 'kospi', wideRows(cs, t + 1, 200));
    await c.request({ op: 'ping', id: 'live' }, 8000);
    expect(stale(hh, rebuild(c.msgs), 'quote')).toEqual([]);
    c.close();
  });
});

describe('the outbox', () => {
  it('gives messages in the order they were sent, making lazy ones when their turn comes, and ends those dropped', () => {
    const made: string[] = [];
    let ended = 0;
    function* lazy(name: string) {
      try {
        for (const i of [1, 2]) {
          made.push(`${name}${i}`);
          yield `${name}${i}`;
        }
      } finally {
        ended++;
      }
    }
    const o = new Outbox();
    o.push('a');
    o.push(lazy('x'));
    o.push('bb');
    expect(o.chars).toBe(3);
    expect([o.next(), o.next()]).toEqual(['a', 'x1']);
    expect(made).toEqual(['x1']);
    expect([o.next(), o.next(), o.next()]).toEqual(['x2', 'bb', undefined]);
    expect(o.chars).toBe(0);
    o.push(lazy('y'));
    o.push('c');
    expect(o.next()).toBe('y1');
    o.clear();
    expect([o.next(), o.chars, ended]).toEqual([undefined, 0, 2]);
  });
});

describe('the change clock', () => {
  it('gives each batch the next tick and keeps each topic’s last', () => {
    const clock = new ChangeClock();
    expect(clock.tick).toBe(0);
    expect(clock.begin()).toBe(1);
    clock.changed('a');
    clock.changed('b');
    expect(clock.begin()).toBe(2);
    clock.changed('a');
    expect([clock.changedSince('a', 2), clock.changedSince('b', 2), clock.changedSince('b', 1), clock.changedSince('c', 0)]).toEqual([
      true,
      false,
      true,
      false,
    ]);
    expect(clock.size).toBe(2);
  });
});

describe('owed snapshots', () => {
  /** A subscriber as the index sees one. */
  const subscriber = () => ({ explicit: new SmallSet(), wildcards: new SmallSet() }) as unknown as Session;

  it('are the topics of its wildcards and explicit topics changed since a tick, each once, made one by one', () => {
    const store = new StateStore();
    const index = new SubscriptionIndex<Session>();
    const clock = new ChangeClock();
    const rows = (t: number) => codes(5).map((c) => row(c, 100 + t));
    const apply = (channel: 'quote' | 'ohlc', rs: Row[]) => {
      clock.begin();
      for (const e of store.apply(channel, 'kospi', rs, 1).events) clock.changed(e.topic);
    };
    apply('quote', rows(0));
    apply('ohlc', rows(0));
    apply('quote', rows(1).slice(0, 2));
    const since = clock.tick;
    apply('ohlc', rows(2).slice(1, 4));
    const s = subscriber();
    index.addWildcard(s, 'quote.kospi');
    index.addTopic(s, 'ohlc.kospi', 'ohlc.kospi.000002');
    index.addTopic(s, 'ohlc.kospi', 'ohlc.kospi.000005');
    index.addTopic(s, 'quote.kospi', 'quote.kospi.000001');
    const topics = (since: number) => [...owedSnapshots(store, index, clock, s, since)].map((f) => (JSON.parse(f) as { topic: string }).topic);
    expect(topics(since)).toEqual(['quote.kospi.000001', 'quote.kospi.000002', 'ohlc.kospi.000002']);
    expect(topics(clock.tick)).toEqual(['ohlc.kospi.000002']);
    expect(topics(clock.tick + 1)).toEqual([]);
    // A wildcard dropped while its snapshots are being made: no more of them.
    const it = owedSnapshots(store, index, clock, s, 1);
    expect(JSON.parse(it.next().value as string).topic).toBe('quote.kospi.000001');
    index.removeWildcard(s, 'quote.kospi');
    // Its explicit quote topic is no longer covered by the wildcard: it is owed as such.
    expect([...{ [Symbol.iterator]: () => it }].map((f) => JSON.parse(f).topic)).toEqual(['ohlc.kospi.000002', 'ohlc.kospi.000005', 'quote.kospi.000001']);
  });
});
