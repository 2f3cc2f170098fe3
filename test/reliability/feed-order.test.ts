import { afterEach, describe, expect, it, vi } from 'vitest';
import { LocalBus } from '../../src/bus/bus.js';
import { silentLogger } from '../../src/log.js';
import { Demand } from '../../src/poller/demand.js';
import { Poller } from '../../src/poller/poller.js';
import { marketClock } from '../../src/market/clock.js';
import { KrxCalendar } from '../../src/market/calendar.js';
import { Sessions } from '../../src/market/session.js';
import { StateStore } from '../../src/state/store.js';

/**
 * A feed's state and its data reach the bus in an order a client can trust:
 * after an outage, `live` comes before the first fresh rows (never fresh
 * rows under a stale status); at the start of one, the stale status comes
 * after the last good rows.
 */
describe('feed state and data order', () => {
  let poller: Poller | undefined;
  afterEach(() => {
    poller?.stop();
    vi.useRealTimers();
  });

  it('publishes live before the first fresh batch after an outage', async () => {
    vi.useFakeTimers({ now: Date.parse('2026-11-20T10:00:00+09:00') });
    let price = 100;
    let failing = false;
    const caller = {
      async call() {
        if (failing) throw Object.assign(new Error('HTTP 503'), { code: 'upstream_error' });
        const rows = [{ isuSrtCd: '005930', trdPrc: price++ }];
        return { data: { isuLists: rows }, rows, dropped: 0, receivedAt: Date.now() };
      },
    };
    const bus = new LocalBus();
    const order: string[] = [];
    bus.subscribe('status', (s) => order.push(s.state));
    bus.subscribe('batch', (b) => order.push(`batch@${b.ts}`));
    const demand = new Demand();
    const budget = { remaining: null, resetAt: null, isExhausted: () => false };
    poller = new Poller({
      caller,
      budget,
      store: new StateStore(),
      bus,
      demand,
      clock: marketClock('always', new Sessions(new KrxCalendar())),
      logger: silentLogger(),
      random: () => 0,
    });
    poller.start();
    demand.add('quote', 'kospi', '005930');
    await vi.advanceTimersByTimeAsync(1500);
    failing = true;
    await vi.advanceTimersByTimeAsync(1000);
    const staleAt = order.indexOf('stale');
    expect(staleAt).toBeGreaterThan(0);
    failing = false;
    await vi.advanceTimersByTimeAsync(3000);
    const after = order.slice(staleAt + 1);
    expect(after[0]).toBe('live');
    expect(after.slice(1).every((e) => e.startsWith('batch@'))).toBe(true);
    expect(after.length).toBeGreaterThan(1);
  });
});
