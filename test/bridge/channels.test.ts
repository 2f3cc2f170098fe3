import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { metric } from '../reliability/helpers.js';
import { connect, freeze, startBridge, truth, until, type TestBridge, type TestClient } from './helpers.js';

/**
 * Component test: a real bridge on port 0 against its simulator. Every
 * channel is subscribed; after more than 10 s of ticks the market is frozen
 * and every client row (snapshot plus patches) must equal the simulator's
 * own answer for the same endpoint.
 */
describe('bridge channels against the simulator', () => {
  let tb: TestBridge;
  let c: TestClient;
  let wild: TestClient;
  const kospi = ['005930', '000660', '035420', '005380', '069500'];
  const kosdaq = ['247540', '086520', '028300', '263750', '293490'];

  // The poller's list calls, as the upstream client answered them: with a list reader, and read incrementally or not.
  const lists = { calls: 0, incremental: 0, plain: 0 };

  beforeAll(async () => {
    tb = await startBridge();
    const up = tb.bridge.upstream;
    const call = up.call.bind(up);
    up.call = async (...args: Parameters<typeof call>) => {
      const r = await call(...args);
      if (args[2]?.list !== undefined && r.endpoint.response.list !== undefined) {
        lists.calls++;
        if (r.delta !== undefined) lists.incremental++;
        if (r.plain !== undefined) lists.plain++;
      }
      return r;
    };
    c = await connect(tb);
    wild = await connect(tb);
  });
  afterAll(async () => {
    c?.close();
    wild?.close();
    await tb?.bridge.stop();
  });

  it('subscribes every channel and the whole market, and tracks the simulator exactly over 10 s of ticks', async () => {
    const subs = [
      ['quote', 'kospi', kospi],
      ['ohlc', 'kospi', kospi],
      ['top', 'kosdaq', kosdaq],
      ['aht', 'kospi', kospi],
      ['price', 'kosdaq', kosdaq],
      ['book', 'kospi', kospi],
      ['index', 'kospi', ['K1', 'K2']],
      ['index', 'kosdaq', ['Q1']],
    ] as const;
    for (const [channel, market, codes] of subs) {
      const r = await c.request({ op: 'subscribe', channel, market, codes: [...codes] });
      expect(r).toMatchObject({ type: 'subscribed', topics: codes.map((x) => `${channel}.${market}.${x}`) });
    }
    const w = await wild.request({ op: 'subscribe', channel: 'quote', market: 'kosdaq', codes: ['*'] });
    expect(w).toMatchObject({ type: 'subscribed', topics: ['quote.kosdaq.*'] });

    // Ten seconds of ticks: every feed polled about ten times, and patches on the explicit topics.
    await until(() => lists.calls > 50 && c.ofType('patch').length > 20, 20_000, 'ten seconds of polls');
    await freeze(tb);
    try {
      const expectTopics = subs.flatMap(([ch, m, codes]) => codes.map((x) => `${ch}.${m}.${x}`));
      for (const t of expectTopics) expect(c.rows.has(t), t).toBe(true);
      // Patches arrived, not only snapshots.
      expect(c.ofType('patch').length).toBeGreaterThan(20);
      expect(c.problems).toEqual([]);
      // Every list answer of the poll went through its call's reader, incrementally; none was read the plain way.
      expect(lists.calls).toBeGreaterThan(50);
      expect(lists).toMatchObject({ incremental: lists.calls, plain: 0 });
      expect(await metric(tb.bridge.metrics, 'krx_upstream_list_plain_total')).toBe(0);

      const ids: Record<string, [string, Record<string, unknown>]> = {
        'quote.kospi': ['v2.multiquote.lists', { marketcode: 'kospi' }],
        'ohlc.kospi': ['v2.multiquote.ohlclists', { marketcode: 'kospi' }],
        'top.kosdaq': ['v3.realtime.multiquote.quotelists', { marketcode: 'kosdaq' }],
        'aht.kospi': ['v2.multiquote.ahtohlclists', { marketcode: 'kospi' }],
        'price.kosdaq': ['v3.realtime.multiquote.price', { marketcode: 'kosdaq', isuCd: kosdaq }],
        'book.kospi': ['v2.multiquote.orderbook', { marketcode: 'kospi', isuCd: kospi }],
      };
      for (const [feed, [id, params]] of Object.entries(ids)) {
        const t = await truth(tb, id, params);
        for (const code of feed.endsWith('kospi') ? kospi : kosdaq) expect(c.rows.get(`${feed}.${code}`), `${feed}.${code}`).toEqual(t.get(code));
      }
      for (const [market, code] of [
        ['kospi', 'K1'],
        ['kospi', 'K2'],
        ['kosdaq', 'Q1'],
      ] as const) {
        const t = await truth(tb, market === 'kospi' ? 'v2.index.index' : 'v3.realtime.index.index', { marketcode: market, issuecode: code });
        expect(c.rows.get(`index.${market}.${code}`)).toEqual(t.get(code));
      }

      // The wildcard client holds every KOSDAQ symbol, each equal to the truth.
      const all = await truth(tb, 'v3.realtime.multiquote.lists', { marketcode: 'kosdaq' });
      expect(all.size).toBeGreaterThan(1500);
      expect(wild.problems).toEqual([]);
      let equal = 0;
      for (const [code, row] of all) if (JSON.stringify(wild.rows.get(`quote.kosdaq.${code}`)) === JSON.stringify(row)) equal++;
      expect(equal).toBe(all.size);
    } finally {
      tb.bridge.sim!.resume();
    }
  }, 40_000);

  it('stops sending a topic after unsubscribe', async () => {
    const r = await c.request({ op: 'unsubscribe', channel: 'quote', market: 'kospi', codes: ['005930'] });
    expect(r).toMatchObject({ type: 'unsubscribed', topics: ['quote.kospi.005930'] });
    const mark = c.messages.length;
    // Two polls of the feed after the unsubscribe (the other codes' patches of each carry its ts): 005930 would be in them.
    const polls = () => new Set(c.messages.slice(mark).flatMap((m) => (m.type === 'patch' && m.topic.startsWith('quote.kospi.') ? [m.ts] : [])));
    await until(() => polls().size >= 2, 8000, 'two polls of quote.kospi');
    const later = c.messages.slice(mark).filter((m) => 'topic' in m && m.topic === 'quote.kospi.005930');
    expect(later).toEqual([]);
    // The other topics keep flowing.
    await until(() => c.messages.slice(mark).some((m) => m.type === 'patch'), 5000, 'patches on other topics');
  }, 15_000);
});
