import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import fc from 'fast-check';
import { Rounds } from '../../src/poller/rounds.js';
import { LocalBus } from '../../src/bus/bus.js';
import { ClusterBus } from '../../src/cluster/bus.js';
import { silentLogger } from '../../src/log.js';
import type { ChangeBatch } from '../../src/state/store.js';
import { Change } from '../../src/state/change.js';

const ORIGIN = 1_700_000_000_123;
const BASE = 1000;

/** A batch of one change of `market`'s quote feed. */
function batch(market: 'kospi' | 'kosdaq', code = '005930'): ChangeBatch {
  const topic = `quote.${market}.${code}`;
  return { channel: 'quote', market, ts: 1, events: [new Change(topic, code, 1, 'snapshot', `{"topic":"${topic}"}`, { isuSrtCd: code }, 0)] };
}

describe('Rounds', () => {
  let bus: LocalBus;
  let seen: string[];
  const make = (holdMs = 50) => new Rounds({ bus, logger: silentLogger(), baseMs: BASE, holdMs, origin: ORIGIN });

  beforeEach(() => {
    vi.useFakeTimers({ now: ORIGIN });
    bus = new LocalBus();
    seen = [];
    bus.subscribe('batch', (b) => seen.push(b.market));
    bus.subscribe('settled', () => seen.push('settled'));
  });
  afterEach(() => vi.useRealTimers());

  it('puts every next start of a whole-period interval on the grid, a quarter period early at most and three quarters late at most', () => {
    const rounds = make();
    fc.assert(
      fc.property(fc.integer({ min: -10_000_000, max: 10_000_000 }), fc.integer({ min: 1, max: 30 }), (offset, periods) => {
        const started = ORIGIN + offset;
        const interval = periods * BASE;
        const next = rounds.next(started, interval);
        expect((((next - ORIGIN) % BASE) + BASE) % BASE).toBe(0);
        expect(next).toBeGreaterThanOrEqual(started + interval - BASE / 4);
        expect(next).toBeLessThan(started + interval + (3 * BASE) / 4);
      }),
    );
  });

  it('keeps a feed on the grid when its timers fire late, and keeps other intervals as they are', () => {
    const rounds = make();
    // On the grid, a timer 3 ms late: the next start is the next grid point, not 3 ms later.
    expect(rounds.next(ORIGIN + 5 * BASE + 3, BASE)).toBe(ORIGIN + 6 * BASE);
    // A first cycle 200 ms after a grid point: the second starts on the next one, 800 ms later.
    expect(rounds.next(ORIGIN + 200, BASE)).toBe(ORIGIN + BASE);
    // 700 ms after one: on the second point after it, 1,300 ms later.
    expect(rounds.next(ORIGIN + 700, BASE)).toBe(ORIGIN + 2 * BASE);
    // 300 ms after one: the nearest point would be only 700 ms after the start, so the one after it.
    expect(rounds.next(ORIGIN + 300, BASE)).toBe(ORIGIN + 2 * BASE);
    // An interval the budget stretched to 1,437 ms is not rounded.
    expect(rounds.next(ORIGIN + 5, 1437)).toBe(ORIGIN + 1442);
  });

  it('takes the start of its first cycle as the grid when given none', () => {
    const rounds = new Rounds({ bus, logger: silentLogger(), baseMs: BASE, holdMs: 50 });
    const first = ORIGIN + 777;
    rounds.join(first);
    expect(rounds.next(first + 2, BASE)).toBe(first + BASE);
    // A feed that starts 300 ms after the first joins its grid at the second point.
    expect(rounds.next(first + 300, BASE)).toBe(first + 2 * BASE);
  });

  it('publishes the batches of a round once every cycle of it has held them, in the order held, with one settled', () => {
    const rounds = make();
    const a = rounds.join(ORIGIN + 2);
    const b = rounds.join(ORIGIN + 3);
    const after: number[] = [];
    b.hold(
      () => [batch('kosdaq')],
      (ms) => after.push(ms),
    );
    expect(seen).toEqual([]);
    a.hold(
      () => [batch('kospi')],
      (ms) => after.push(ms),
    );
    expect(seen).toEqual(['kosdaq', 'kospi', 'settled']);
    expect(after).toHaveLength(2);
    expect(rounds.size).toBe(0);
  });

  it('stops waiting for a cycle that leaves, and publishes after holdMs what a slow cycle keeps waiting', () => {
    const rounds = make();
    const a = rounds.join(ORIGIN);
    const b = rounds.join(ORIGIN);
    a.hold(
      () => [batch('kospi')],
      () => {},
    );
    b.leave();
    expect(seen).toEqual(['kospi', 'settled']);

    seen.length = 0;
    const c = rounds.join(ORIGIN + BASE);
    const d = rounds.join(ORIGIN + BASE);
    c.hold(
      () => [batch('kospi')],
      () => {},
    );
    vi.advanceTimersByTime(49);
    expect(seen).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(seen).toEqual(['kospi', 'settled']);
    // The slow one comes after the round went out: it publishes alone, at once.
    d.hold(
      () => [batch('kosdaq')],
      () => {},
    );
    expect(seen).toEqual(['kospi', 'settled', 'kosdaq', 'settled']);
  });

  it('publishes what a round holds when a later round opens and a cycle of it never settled', () => {
    const rounds = make(400);
    const a = rounds.join(ORIGIN);
    rounds.join(ORIGIN); // a cycle that threw before it settled, and never left
    a.hold(
      () => [batch('kospi')],
      () => {},
    );
    expect(seen).toEqual([]);
    rounds.join(ORIGIN + 2 * BASE);
    expect(seen).toEqual(['kospi', 'settled']);
  });

  it('applies a held cycle’s answers only when its round publishes, so the store never runs ahead of what was sent', () => {
    const rounds = make();
    const applied: string[] = [];
    const answer = (m: 'kospi' | 'kosdaq') => () => {
      applied.push(m);
      return [batch(m)];
    };
    bus.subscribe('batch', (b) => expect(applied).toContain(b.market));
    const a = rounds.join(ORIGIN);
    const b = rounds.join(ORIGIN);
    a.hold(answer('kospi'), () => {});
    expect(applied).toEqual([]);
    b.hold(answer('kosdaq'), () => {});
    expect(applied).toEqual(['kospi', 'kosdaq']);
    expect(seen).toEqual(['kospi', 'kosdaq', 'settled']);

    // A cycle whose answers fail to apply is left out; the rest of its round goes out.
    seen.length = 0;
    const c = rounds.join(ORIGIN + BASE);
    const d = rounds.join(ORIGIN + BASE);
    c.hold(
      () => {
        throw new Error('bad answer');
      },
      () => {},
    );
    d.hold(answer('kosdaq'), () => {});
    expect(seen).toEqual(['kosdaq', 'settled']);
  });

  it('publishes an open round before a cycle of the next one starts, or before a publish outside any round', () => {
    const rounds = make(400);
    // A feed's slow cycle settled late in its period; the other feed's cycle of that round is still out.
    const slow = rounds.join(ORIGIN);
    rounds.join(ORIGIN);
    slow.hold(
      () => [batch('kospi', '000001')],
      () => {},
    );
    expect(seen).toEqual([]);
    // Its next cycle starts on the next grid point: the round before goes out first, so the feed's changes keep their order.
    const next = rounds.join(ORIGIN + BASE);
    expect(seen).toEqual(['kospi', 'settled']);
    next.leave();

    seen.length = 0;
    const e = rounds.join(ORIGIN + 2 * BASE);
    rounds.join(ORIGIN + 2 * BASE);
    e.hold(
      () => [batch('kospi', '000002')],
      () => {},
    );
    rounds.publishNow([batch('kosdaq')], () => {});
    expect(seen).toEqual(['kospi', 'settled', 'kosdaq', 'settled']);
  });

  it('publishes at once with holdMs 0, and everything held when released', () => {
    const now = make(0).join(ORIGIN);
    now.hold(
      () => [batch('kospi')],
      () => {},
    );
    expect(seen).toEqual(['kospi', 'settled']);

    seen.length = 0;
    const rounds = make();
    const a = rounds.join(ORIGIN);
    rounds.join(ORIGIN);
    a.hold(
      () => [batch('kosdaq')],
      () => {},
    );
    rounds.releaseAll();
    expect(seen).toEqual(['kosdaq', 'settled']);
    expect(rounds.size).toBe(0);
  });

  it('on a cluster’s bus, holds the round as on the local one and writes its batches in one write', () => {
    const written: string[][] = [];
    const cluster = new ClusterBus({ writeRound: (bs) => written.push(bs.map((b) => b.market)), writeStatus: () => {} });
    const rounds = new Rounds({ bus: cluster, logger: silentLogger(), baseMs: BASE, holdMs: 50, origin: ORIGIN });
    const a = rounds.join(ORIGIN);
    const b = rounds.join(ORIGIN + 2);
    a.hold(
      () => [batch('kospi')],
      () => {},
    );
    // The other cycle of the round has not settled: nothing is written yet.
    expect(written).toEqual([]);
    b.hold(
      () => [batch('kosdaq')],
      () => {},
    );
    expect(written).toEqual([['kospi', 'kosdaq']]);
    expect(rounds.size).toBe(0);
    expect(rounds.next(ORIGIN + 3, BASE)).toBe(ORIGIN + BASE);
  });

  it('refuses a second hold by one cycle', () => {
    const t = make().join(ORIGIN);
    t.hold(
      () => [],
      () => {},
    );
    expect(() =>
      t.hold(
        () => [],
        () => {},
      ),
    ).toThrow(/once/);
  });
});
