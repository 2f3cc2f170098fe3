import { describe, expect, it, vi } from 'vitest';
import { newerBudget } from '../../src/cluster/budget.js';
import {
  compareIds,
  decodeBatch,
  decodeRound,
  decodeBudget,
  decodeEntry,
  decodeFrame,
  decodeStatusMessage,
  decodeStream,
  demandCode,
  demandMember,
  encodeBudget,
  encodeEntry,
} from '../../src/cluster/codec.js';
import { reconnectDelay } from '../../src/cluster/backplane.js';
import { LeaseState } from '../../src/cluster/lease.js';
import { DEGRADED_REASON, FeedStates } from '../../src/cluster/statuses.js';
import { demandDelta, sameWant, unionOf } from '../../src/cluster/union.js';
import type { FeedStatus } from '../../src/bus/bus.js';
import { StateStore, type ChangeBatch } from '../../src/state/store.js';
import { Change } from '../../src/state/change.js';
import { ClusterBus } from '../../src/cluster/bus.js';
import { clusterKeys } from '../../src/cluster/keys.js';
import { ClusterMetrics } from '../../src/cluster/metrics.js';
import { Mirror } from '../../src/cluster/mirror.js';
import type { Commander } from '../../src/cluster/scripts.js';
import { Metrics } from '../../src/metrics/metrics.js';
import { silentLogger } from '../../src/log.js';

/** Pure parts of cluster mode: the lease rules on a fake clock, demand union, fencing of messages, formats, the mirror. */

describe('lease state machine', () => {
  const timing = { leaseMs: 3000, baseMs: 1000 };

  it('polls from acquisition plus the settle time until lease minus margin after the last renewal sent', () => {
    const l = new LeaseState(timing);
    expect(l.marginMs).toBe(600);
    expect(l.settleMs).toBe(400);
    expect(l.mayPoll(0)).toBe(false);
    l.acquired(7, 1000, 1010, false);
    expect(l.leader).toBe(true);
    expect(l.gen).toBe(7);
    expect(l.mayPoll(1409)).toBe(false);
    expect(l.mayPoll(1410)).toBe(true);
    // Valid until sent (1000) + 3000 − 600.
    expect(l.mayPoll(3399)).toBe(true);
    expect(l.mayPoll(3400)).toBe(false);
    expect(l.selfFenced(3400)).toBe(true);
  });

  it('extends validity only from the time a successful renewal was sent, never backwards', () => {
    const l = new LeaseState(timing);
    l.acquired(1, 0, 0, false);
    l.renewed(1000);
    expect(l.mayPoll(3399)).toBe(true);
    expect(l.mayPoll(3400)).toBe(false);
    // A late reply of an older renewal does not shorten it.
    l.renewed(500);
    expect(l.mayPoll(3399)).toBe(true);
    // Renewal after a self-fence (the key was still ours) resumes polling.
    l.renewed(5000);
    expect(l.mayPoll(5000)).toBe(true);
    expect(l.selfFenced(7399)).toBe(false);
  });

  it('never lets two holders poll at once: the next holder starts at least one poll interval after the last possible call', () => {
    // Holder A: last successful renewal sent at t=10_000; it stops before 12_400.
    const a = new LeaseState(timing);
    a.acquired(1, 10_000, 10_000, false);
    const lastPossibleCallOfA = 10_000 + 3000 - 600 - 1;
    expect(a.mayPoll(lastPossibleCallOfA)).toBe(true);
    expect(a.mayPoll(lastPossibleCallOfA + 1)).toBe(false);
    // Redis expires A's key no earlier than 13_000; B acquires then.
    const b = new LeaseState(timing);
    b.acquired(2, 13_000, 13_000, false);
    const first = (() => {
      for (let t = 13_000; ; t++) if (b.mayPoll(t)) return t;
    })();
    expect(first - lastPossibleCallOfA).toBeGreaterThanOrEqual(1000);
  });

  it('waits a whole lease more when Redis lost its data (the old holder may not know yet)', () => {
    const l = new LeaseState(timing);
    l.acquired(5, 0, 0, true);
    expect(l.mayPoll(3399)).toBe(false);
    // Before pollFrom (3400) the lease is already past validity unless renewed.
    l.renewed(2000);
    expect(l.mayPoll(3399)).toBe(false);
    expect(l.mayPoll(3400)).toBe(true);
  });

  it('drops to follower on loss and keeps the highest generation seen for fencing', () => {
    const l = new LeaseState(timing);
    l.seen(4);
    l.acquired(9, 0, 0, false);
    l.lost();
    expect(l.leader).toBe(false);
    expect(l.mayPoll(1000)).toBe(false);
    expect(l.maxGen).toBe(9);
    expect(l.stale(8)).toBe(true);
    expect(l.stale(9)).toBe(false);
    l.seen(12);
    expect(l.stale(9)).toBe(true);
  });

  it('renews every third of the period; a follower retries just after the holder’s key would expire', () => {
    const l = new LeaseState(timing);
    expect(l.nextDelay()).toBe(1000);
    expect(l.nextDelay(250)).toBe(255);
    expect(l.nextDelay(5000)).toBe(1000);
    expect(l.nextDelay(-2)).toBe(1000);
    l.acquired(1, 0, 0, false);
    expect(l.nextDelay(10)).toBe(1000);
  });
});

describe('demand union', () => {
  it('unites every process’s members with the local demand', () => {
    const w = unionOf([demandMember('005930', 'a'), demandMember('000660', 'b'), demandMember('005930', 'b')], { codes: new Set(['035420']), wildcard: false });
    expect([...w.codes].sort()).toEqual(['000660', '005930', '035420']);
    expect(w.wildcard).toBe(false);
    expect(unionOf([demandMember('*', 'c')]).wildcard).toBe(true);
    expect(unionOf([]).codes.size).toBe(0);
  });

  it('compares wants and computes registration deltas', () => {
    const a = { codes: new Set(['1', '2']), wildcard: false };
    expect(sameWant(a, { codes: new Set(['2', '1']), wildcard: false })).toBe(true);
    expect(sameWant(a, { codes: new Set(['1']), wildcard: false })).toBe(false);
    expect(sameWant(a, { codes: new Set(['1', '2']), wildcard: true })).toBe(false);
    expect(demandDelta(new Set(['1', '2', '*']), new Set(['2', '3']))).toEqual({ add: ['3'], remove: ['1', '*'] });
  });

  it('members carry the code before a tab', () => {
    expect(demandMember('005930', 'host:1:ab')).toBe('005930\thost:1:ab');
    expect(demandCode('005930\thost:1:ab')).toBe('005930');
    expect(demandCode('*\tx')).toBe('*');
  });
});

describe('formats', () => {
  it('round-trips state hash values', () => {
    const e = { seq: 41, ts: 1763686801000, crc: 1347986133, row: { isuSrtCd: '005930', trdPrc: 71100, note: 'a b' } };
    expect(decodeEntry(encodeEntry(e))).toEqual(e);
    expect(decodeEntry('x 1 2 {}')).toBeUndefined();
    expect(decodeEntry('1 2 3 [1]')).toBeUndefined();
    expect(decodeEntry('1 2 3 {')).toBeUndefined();
  });

  it('reads round announcements and refuses anything else', () => {
    expect(decodeRound('12 2')).toEqual({ gen: 12, batches: 2 });
    for (const bad of ['12', '12 0', '12 -1', 'x 2', '12 2 3', '12 99999', '']) expect(decodeRound(bad), bad).toBeUndefined();
  });

  it('reads batch messages with their fencing generation, epoch and stream ids', () => {
    const f1 = '{"type":"patch","topic":"quote.kospi.005930","seq":2,"ts":5,"ops":[{"op":"replace","path":"/p","value":2}],"crc":1}';
    const m = decodeBatch(`17 ep-1 5 1-0 3-0\n${f1}\n${f1}`);
    expect(m).toEqual({ gen: 17, epoch: 'ep-1', ts: 5, prev: '1-0', last: '3-0', frames: [f1, f1] });
    expect(decodeBatch('x ep 5 1-0 2-0\n{}')).toBeUndefined();
    expect(decodeBatch('1 ep 5 1-0')).toBeUndefined();
    expect(decodeFrame(f1, 'quote.kospi.'.length)).toMatchObject({ code: '005930', seq: 2, kind: 'patch', crc: 1 });
    expect(decodeFrame('{"type":"snapshot","topic":"quote.kospi.1","seq":1,"ts":1,"data":{"a":1},"crc":3}', 12)).toMatchObject({
      kind: 'snapshot',
      row: { a: 1 },
    });
    expect(decodeFrame('{"type":"status"}', 12)).toBeUndefined();
    expect(decodeFrame('not json', 12)).toBeUndefined();
  });

  it('orders stream ids numerically', () => {
    expect(compareIds('10-0', '9-5')).toBeGreaterThan(0);
    expect(compareIds('9-10', '9-9')).toBeGreaterThan(0);
    expect(compareIds('0-0', '1-0')).toBeLessThan(0);
    expect(compareIds('5-1', '5-1')).toBe(0);
  });

  it('reads stream entries and skips malformed ones', () => {
    const r = decodeStream([['1-0', ['c', 'A', 's', '3', 'f', '{}']], ['2-0', ['c', 'B', 's', 'x', 'f', '{}']], 'junk']);
    expect(r).toEqual([{ id: '1-0', code: 'A', seq: 3, frame: '{}' }]);
  });

  it('reads status messages and refuses unknown states', () => {
    const s = { channel: 'quote', market: 'kospi', state: 'live', intervalMs: 1000, ts: 1 };
    expect(decodeStatusMessage(`3 ${JSON.stringify(s)}`)).toEqual({ gen: 3, status: s });
    expect(decodeStatusMessage(`3 ${JSON.stringify({ ...s, state: 'bogus' })}`)).toBeUndefined();
    expect(decodeStatusMessage('nogen')).toBeUndefined();
  });

  it('round-trips budgets and prefers the newer observation', () => {
    const b = { limit: 50_000, remaining: 120, resetAt: 86_400_000, observedAt: 5000 };
    const f = encodeBudget(b);
    expect(decodeBudget(new Map(['limit', 'remaining', 'resetAt', 'observedAt'].map((k, i) => [k, f[i]!])))).toEqual(b);
    expect(decodeBudget(new Map([['limit', '1']]))).toBeUndefined();
    const empty = { limit: null, remaining: null, resetAt: null, observedAt: null };
    expect(newerBudget(b, empty)).toBe(true);
    expect(newerBudget(empty, b)).toBe(false);
    expect(newerBudget({ ...b, observedAt: 6000 }, b)).toBe(true);
    expect(newerBudget({ ...b, remaining: 100 }, b)).toBe(true);
    expect(newerBudget(b, { ...b, remaining: 100 })).toBe(false);
  });

  it('backs off reconnects exponentially up to the cap', () => {
    const noJitter = () => 0;
    expect(reconnectDelay(0, 2000, noJitter)).toBe(50);
    expect(reconnectDelay(3, 2000, noJitter)).toBe(400);
    expect(reconnectDelay(30, 2000, noJitter)).toBe(2000);
    expect(reconnectDelay(0, 2000, () => 0.99)).toBe(149);
  });
});

describe('mirror into a StateStore', () => {
  const leader = new StateStore({ epoch: 'e' });
  const r1 = { isuSrtCd: 'A', p: 1, v: 10 };
  const r2 = { isuSrtCd: 'A', p: 2, v: 10 };
  const r3 = { isuSrtCd: 'A', p: 2, v: 11 };
  const batches = [r1, r2, r3].map((r, i) => leader.apply('quote', 'kospi', [r], 1000 + i));
  const changes = batches.map((b) => decodeFrame(b.events[0]!.frame, 'quote.kospi.'.length)!);

  it('applies a leader’s frames in order, ignores duplicates and reports gaps', () => {
    const m = new StateStore({ epoch: 'e', ringSize: 8 });
    const o1 = m.mirror('quote', 'kospi', changes[0]!);
    expect(o1.kind).toBe('applied');
    expect(m.mirror('quote', 'kospi', changes[0]!).kind).toBe('duplicate');
    expect(m.mirror('quote', 'kospi', changes[2]!).kind).toBe('gap');
    const o2 = m.mirror('quote', 'kospi', changes[1]!);
    expect(o2.kind === 'applied' && o2.event.frame).toBe(batches[1]!.events[0]!.frame);
    expect(m.mirror('quote', 'kospi', changes[2]!).kind).toBe('applied');
    const e = m.entry('quote', 'kospi', 'A')!;
    expect(e.row).toEqual(r3);
    expect(e.seq).toBe(3);
    expect(e.crc).toBe(leader.entry('quote', 'kospi', 'A')!.crc);
    // The ring serves resume exactly as the leader's would.
    expect(m.replay(e, 1)).toEqual([batches[1]!.events[0]!.frame, batches[2]!.events[0]!.frame]);
  });

  it('refuses a patch whose checksum does not match (a diverged row is a gap, not corruption)', () => {
    const m = new StateStore({ epoch: 'e' });
    m.mirror('quote', 'kospi', changes[0]!);
    expect(m.mirror('quote', 'kospi', { ...changes[1]!, crc: 12345 }).kind).toBe('gap');
    expect(m.entry('quote', 'kospi', 'A')!.seq).toBe(1);
  });

  it('loads persisted entries with the longest contiguous run of frames ending at their seq', () => {
    const m = new StateStore({ epoch: 'e', ringSize: 8 });
    const le = leader.entry('quote', 'kospi', 'A')!;
    const frames: [number, string][] = [
      [1, 'x'],
      [2, batches[1]!.events[0]!.frame],
      [3, batches[2]!.events[0]!.frame],
      [4, 'later than the entry'],
    ];
    const e = m.load('quote', 'kospi', 'A', { row: le.row, seq: 3, ts: le.ts, crc: le.crc }, frames);
    expect(m.replay(e, 1)).toEqual([frames[1]![1], frames[2]![1]]);
    const g = m.load('quote', 'kospi', 'B', { row: { isuSrtCd: 'B' }, seq: 9, ts: 1, crc: 0 }, [
      [5, 'a'],
      [7, 'b'],
    ]);
    expect(m.replay(g, 8)).toBeUndefined();
    expect(m.replay(g, 9)).toEqual([]);
  });

  it('drops every topic when the epoch changes', () => {
    const m = new StateStore({ epoch: 'e' });
    m.mirror('quote', 'kospi', changes[0]!);
    expect([...m.heldFeeds()]).toEqual([['quote', 'kospi']]);
    m.resetEpoch('f');
    expect(m.epoch).toBe('f');
    expect(m.size).toBe(0);
    expect(m.mirror('quote', 'kospi', changes[1]!).kind).toBe('gap');
  });
});

describe('feed states with the backplane’s health', () => {
  it('reports every feed degraded while down, then the shared states', () => {
    const out: FeedStatus[] = [];
    const st = new FeedStates(
      (s) => out.push(s),
      () => 99,
    );
    const live: FeedStatus = { channel: 'quote', market: 'kospi', state: 'live', intervalMs: 1000, ts: 1 };
    st.record(live);
    expect(out).toEqual([live]);
    st.down();
    st.down();
    const degraded = out.slice(1);
    expect(degraded).toHaveLength(14);
    expect(degraded.every((s) => s.state === 'degraded' && s.reason === DEGRADED_REASON && s.ts === 99)).toBe(true);
    expect(degraded.map((s) => `${s.channel}.${s.market}`)).toContain('book.kosdaq');
    expect(st.current()).toEqual(degraded);
    // States published meanwhile are kept, not delivered.
    st.record({ ...live, ts: 2 });
    expect(out).toHaveLength(15);
    st.up([{ ...live, ts: 3 }]);
    expect(out[15]).toEqual({ ...live, ts: 3 });
    expect(st.current()).toEqual([{ ...live, ts: 3 }]);
    expect(st.degraded).toBe(false);
  });
});

describe('a cluster process’s bus', () => {
  const batch = (market: 'kospi' | 'kosdaq', seq = 1): ChangeBatch => {
    const topic = `quote.${market}.005930`;
    return { channel: 'quote', market, ts: seq, events: [new Change(topic, '005930', seq, 'patch', `{"topic":"${topic}"}`, { isuSrtCd: '005930' }, 0)] };
  };
  const turn = () => new Promise<void>((r) => setImmediate(r));
  /** A bus whose deliveries are listed as they reach its subscribers: batches by market, `|` after each `settled`. */
  function listening(): { bus: ClusterBus; seen: string[]; written: string[][] } {
    const written: string[][] = [];
    const bus = new ClusterBus({ writeRound: (bs) => written.push(bs.map((b) => b.market)), writeStatus: () => undefined });
    const seen: string[] = [];
    bus.subscribe('batch', (b) => seen.push(b.market));
    bus.subscribe('settled', () => seen.push('|'));
    bus.subscribe('status', (s) => seen.push(`status ${s.market}`));
    return { bus, seen, written };
  }

  it('writes a round’s non-empty batches in one write', () => {
    const { bus, written } = listening();
    bus.publishAll([batch('kospi'), { ...batch('kosdaq'), events: [] }, batch('kosdaq')]);
    bus.publishAll([{ ...batch('kospi'), events: [] }]);
    bus.publish(batch('kospi', 2));
    expect(written).toEqual([['kospi', 'kosdaq'], ['kospi']]);
  });

  it('handles the messages received in one turn, or in the turn after, together: their batches are one round', async () => {
    const { bus, seen } = listening();
    bus.receive(() => bus.deliver(batch('kospi')));
    bus.receive(() => bus.deliver(batch('kosdaq')));
    expect(seen).toEqual([]);
    await turn();
    await turn();
    await turn();
    expect(seen).toEqual(['kospi', 'kosdaq', '|']);
    // The second message of a round read a turn later (a large first one took its own reads).
    bus.receive(() => bus.deliver(batch('kospi', 2)));
    await turn();
    bus.receive(() => bus.deliver(batch('kosdaq', 2)));
    for (let i = 0; i < 4; i++) await turn();
    expect(seen).toEqual(['kospi', 'kosdaq', '|', 'kospi', 'kosdaq', '|']);
  });

  it('does not hold messages for long under a steady stream; a state goes after the batches received before it', async () => {
    const { bus, seen } = listening();
    for (let i = 0; i < 10; i++) {
      bus.receive(() => bus.deliver(batch('kospi', i + 1)));
      await turn();
    }
    // At most MAX_TURNS + 1 turns held: ten messages over ten turns are not one delivery.
    expect(seen.filter((s) => s === '|').length).toBeGreaterThanOrEqual(1);
    for (let i = 0; i < 6; i++) await turn();
    expect(seen.filter((s) => s === 'kospi').length).toBe(10);
    bus.receive(() => bus.deliver(batch('kosdaq')));
    bus.receive(() => bus.deliverStatus({ channel: 'quote', market: 'kosdaq', state: 'stale', intervalMs: 1000, ts: 1 }));
    bus.receive(() => bus.deliver(batch('kospi', 20)));
    expect(seen.slice(-1)).toEqual(['|']);
    for (let i = 0; i < 6; i++) await turn();
    expect(seen.slice(-5)).toEqual(['kosdaq', '|', 'status kosdaq', 'kospi', '|']);
    // This process's own state goes after the messages received before it.
    bus.receive(() => bus.deliver(batch('kospi', 21)));
    bus.deliverStatus({ channel: 'quote', market: 'kospi', state: 'degraded', intervalMs: 0, ts: 2 });
    expect(seen.slice(-3)).toEqual(['kospi', '|', 'status kospi']);
    // A batch from elsewhere (a resync) and this process's own state go at once.
    bus.deliver(batch('kosdaq', 2));
    bus.deliverStatus({ channel: 'quote', market: 'kosdaq', state: 'degraded', intervalMs: 0, ts: 2 });
    expect(seen.slice(-3)).toEqual(['kosdaq', '|', 'status kosdaq']);
    await bus.close();
  });

  it('handles an announced round as soon as its last batch message has come, with what came before it', async () => {
    const { bus, seen } = listening();
    bus.receive(() => bus.deliverStatus({ channel: 'quote', market: 'kospi', state: 'live', intervalMs: 1000, ts: 1 }));
    bus.announce(2);
    bus.receive(() => bus.deliver(batch('kospi')), true);
    // Many turns may pass while a large first message is read: nothing is handled before the round is complete.
    for (let i = 0; i < 10; i++) await turn();
    expect(seen).toEqual([]);
    bus.receive(() => bus.deliver(batch('kosdaq')), true);
    expect(seen).toEqual(['status kospi', 'kospi', 'kosdaq', '|']);
    // Messages after it wait for a quiet turn again.
    bus.receive(() => bus.deliverStatus({ channel: 'quote', market: 'kosdaq', state: 'live', intervalMs: 1000, ts: 2 }));
    expect(seen).toHaveLength(4);
    for (let i = 0; i < 3; i++) await turn();
    expect(seen.slice(4)).toEqual(['status kosdaq']);
  });

  it('stops waiting for an announced round’s missing message after a guard time, or when told to', () => {
    vi.useFakeTimers();
    try {
      const { bus, seen } = listening();
      bus.announce(2);
      bus.receive(() => bus.deliver(batch('kospi')), true);
      vi.advanceTimersByTime(249);
      expect(seen).toEqual([]);
      vi.advanceTimersByTime(1);
      expect(seen).toEqual(['kospi', '|']);
      bus.announce(2);
      bus.receive(() => bus.deliver(batch('kosdaq')), true);
      bus.handleReceived();
      expect(seen).toEqual(['kospi', '|', 'kosdaq', '|']);
      // Nothing is left waiting: the guard of the round handled early does nothing.
      vi.advanceTimersByTime(1000);
      expect(seen).toHaveLength(4);
    } finally {
      vi.useRealTimers();
    }
  });

  it('reports a message handler that throws and still delivers the rest of the round', async () => {
    const errors: unknown[] = [];
    const bus = new ClusterBus({ writeRound: () => undefined, writeStatus: () => undefined }, (err) => errors.push(err));
    const seen: string[] = [];
    bus.subscribe('batch', (b) => seen.push(b.market));
    bus.receive(() => bus.deliver(batch('kospi')));
    bus.receive(() => {
      throw new Error('bad message');
    });
    bus.receive(() => bus.deliver(batch('kosdaq')));
    for (let i = 0; i < 6; i++) await turn();
    expect(seen).toEqual(['kospi', 'kosdaq']);
    expect(errors.map((e) => (e as Error).message)).toEqual(['bad message']);
  });

  it('applies a received batch to the store in the turn it is delivered: the store never holds a change not yet sent', async () => {
    const leader = new StateStore({ epoch: 'E' });
    const store = new StateStore({ epoch: 'E' });
    const lease = new LeaseState({ leaseMs: 1000 });
    const metrics = new ClusterMetrics(new Metrics({ defaults: false }).registry);
    const { bus, seen } = listening();
    // The normal path makes no Redis call: an epoch is confirmed and every batch follows the last.
    const redis = {} as Commander;
    const mirror = new Mirror({
      redis,
      keys: clusterKeys('t'),
      store,
      lease,
      logger: silentLogger(),
      metrics,
      emit: (b) => bus.deliver(b),
      loadCount: 10,
      timeoutMs: 100,
    });
    const delivered = new Map<string, number>();
    bus.subscribe('batch', (b) => {
      for (const e of b.events) delivered.set(e.topic, e.seq);
    });
    /** Topics whose seq in the store is not the last one delivered. */
    const ahead = () =>
      [...store.heldFeeds()].flatMap(([c, m]) => [...store.entries(c, m)].filter((e) => delivered.get(e.topic) !== e.seq).map((e) => `${e.topic}@${e.seq}`));
    const message = (market: 'kospi' | 'kosdaq', p: number, id: number) => {
      const b = leader.apply('quote', market, [{ isuSrtCd: 'A', p }], id);
      return `1 E ${id} ${id === 1 ? '0-0' : `${id - 1}-0`} ${id}-0\n${b.events.map((e) => e.frame).join('\n')}`;
    };
    const feed = (market: 'kospi' | 'kosdaq') => ({ channel: 'quote' as const, market, feed: `quote.${market}` });
    const checks: string[][] = [];
    let watching = true;
    const watch = () => {
      checks.push(ahead());
      if (watching) setImmediate(watch);
    };
    setImmediate(watch);
    for (let id = 1; id <= 3; id++) {
      bus.receive(() => mirror.onMessage(feed('kospi'), message('kospi', id, id)));
      await turn();
      bus.receive(() => mirror.onMessage(feed('kosdaq'), message('kosdaq', id, id)));
      for (let i = 0; i < 6; i++) await turn();
    }
    watching = false;
    expect(seen).toEqual(['kospi', 'kosdaq', '|', 'kospi', 'kosdaq', '|', 'kospi', 'kosdaq', '|']);
    expect(store.entry('quote', 'kosdaq', 'A')!.seq).toBe(3);
    // An announced round too: its batches are applied only as they are delivered.
    bus.announce(2);
    bus.receive(() => mirror.onMessage(feed('kospi'), message('kospi', 4, 4)), true);
    expect(store.entry('quote', 'kospi', 'A')!.seq).toBe(3);
    bus.receive(() => mirror.onMessage(feed('kosdaq'), message('kosdaq', 4, 4)), true);
    expect(store.entry('quote', 'kospi', 'A')!.seq).toBe(4);
    expect(ahead()).toEqual([]);
    expect(checks.length).toBeGreaterThan(20);
    expect(checks.filter((c) => c.length > 0)).toEqual([]);
  });
});
