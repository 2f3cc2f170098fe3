import { createServer, connect as tcpConnect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { KrxClient } from '../../src/client/index.js';
import { freeze, startBridge, truth, until, type TestBridge } from '../bridge/helpers.js';

/**
 * The SDK against a real bridge on port 0 and its simulator, through a TCP
 * proxy the test can cut (a network failure, no close frame).
 */
class CuttableProxy {
  private readonly server: Server;
  private readonly pairs = new Set<[Socket, Socket]>();
  port = 0;
  constructor(private readonly target: number) {
    this.server = createServer((down) => {
      const up = tcpConnect(this.target, '127.0.0.1');
      const pair: [Socket, Socket] = [down, up];
      this.pairs.add(pair);
      down.pipe(up).pipe(down);
      const drop = () => {
        this.pairs.delete(pair);
        down.destroy();
        up.destroy();
      };
      down.on('error', drop).on('close', drop);
      up.on('error', drop).on('close', drop);
    });
  }
  async listen(): Promise<this> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', () => r()));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }
  cut(): void {
    for (const [a, b] of this.pairs) {
      a.destroy();
      b.destroy();
    }
    this.pairs.clear();
  }
  close(): void {
    this.cut();
    this.server.close();
  }
}

describe('SDK against a real bridge', () => {
  let tb: TestBridge;
  let proxy: CuttableProxy;
  let client: KrxClient;
  const codes = ['005930', '000660', '035420', '005380', '000270'];
  const resyncs: string[] = [];
  const listenerErrors: string[] = [];
  let quoteEvents = 0;

  beforeAll(async () => {
    tb = await startBridge({ RING_SIZE: 64 });
    proxy = await new CuttableProxy(Number(new URL(tb.url).port)).listen();
    client = new KrxClient(`ws://127.0.0.1:${proxy.port}/ws`, { WebSocket, minDelayMs: 100, maxDelayMs: 500 });
    client.on('resync', (topic) => resyncs.push(topic));
    client.on('error', (e) => {
      if (e.code === 'listener') listenerErrors.push(e.message);
    });
    client.on('quote', () => {
      quoteEvents++;
      // A listener that always throws must not corrupt the client's state.
      throw new Error('listener bug');
    });
    await client.subscribe('quote', 'kospi', codes);
    await client.subscribe('book', 'kosdaq', ['247540', '086520']);
  });
  afterAll(async () => {
    await client?.close();
    proxy?.close();
    await tb?.bridge.stop();
  });

  async function compareWithTruth(): Promise<void> {
    await freeze(tb);
    try {
      const q = await truth(tb, 'v2.multiquote.lists', { marketcode: 'kospi' });
      for (const code of codes) expect(client.snapshot(`quote.kospi.${code}`), code).toEqual(q.get(code));
      const b = await truth(tb, 'v3.realtime.multiquote.orderbook', { marketcode: 'kosdaq', isuCd: ['247540', '086520'] });
      for (const code of ['247540', '086520']) expect(client.snapshot(`book.kosdaq.${code}`), code).toEqual(b.get(code));
    } finally {
      tb.bridge.sim!.resume();
    }
  }

  it('holds the server truth after 10 s of ticks, with a throwing listener', async () => {
    // Ten seconds of ticks: 005930 trades nearly every second.
    const s0 = client.seq('quote.kospi.005930') ?? 0;
    await until(() => (client.seq('quote.kospi.005930') ?? 0) >= s0 + 10 && quoteEvents > 10, 25_000, 'ten changes');
    await compareWithTruth();
    expect(quoteEvents).toBeGreaterThan(10);
    expect(listenerErrors.length).toBe(quoteEvents);
    expect(resyncs).toEqual([]);
  }, 30_000);

  it('resumes without loss after the connection is cut', async () => {
    const before = client.seq('quote.kospi.005930')!;
    const states: string[] = [];
    const onState = (_p: string, n: string) => states.push(n);
    client.on('state', onState);
    proxy.cut();
    await until(() => states.includes('reconnecting'), 5000, 'reconnecting');
    await until(() => client.state === 'open', 10_000, 'reopen');
    await until(() => client.seq('quote.kospi.005930')! > before + 1, 10_000, 'progress after the cut');
    client.off('state', onState);
    await compareWithTruth();
    // Resumed from the replay ring: no topic needed a resync.
    expect(resyncs).toEqual([]);
  }, 40_000);

  it('a forced seq gap resyncs that topic only', async () => {
    const topic = 'quote.kospi.000660';
    const seq = client.seq(topic)!;
    const row = client.snapshot(topic)!;
    const frame = JSON.stringify({ type: 'patch', topic, seq: seq + 5, ts: Date.now(), ops: [{ op: 'replace', path: '/trdPrc', value: 1 }], crc: 0 });
    tb.bridge.bus.publish({
      channel: 'quote',
      market: 'kospi',
      ts: Date.now(),
      events: [{ topic, code: '000660', seq: seq + 5, kind: 'patch', frame, row: { ...row, trdPrc: 1 }, ops: [{ op: 'replace', path: '/trdPrc', value: 1 }] }],
    } as never);
    await until(() => resyncs.length > 0, 5000, 'resync');
    // A poll cycle more (a change of another topic): no other topic asked for a resync.
    const other = client.seq('quote.kospi.005930')!;
    await until(() => client.seq('quote.kospi.005930')! > other, 10_000, 'a change of another topic');
    expect(resyncs).toEqual([topic]);
    await compareWithTruth();
  }, 30_000);

  it('every get helper returns typed data', async () => {
    const m = await client.master('kospi', '005930');
    expect(m.isuCd).toBe('KR7005930003');
    expect(typeof m.basPrc).toBe('number');
    const sm = await client.selectivemaster('kospi', '005930', ['prevddClsprc', 'wk52HgstPrc']);
    expect(typeof sm.prevddClsprc).toBe('number');
    const h = await client.history('kospi', '005930', { period: 'D', from: '20261001', to: '20261120', count: 5 });
    expect(h.hisLists).toHaveLength(5);
    expect(h.hisLists[0]!.trdDd).toMatch(/^\d{8}$/);
    const i = await client.intraday('kospi', '005930', { interval: 60 });
    expect(Array.isArray(i.hisLists)).toBe(true);
    const l = await client.lists('konex');
    expect(l.isuLists.length).toBeGreaterThan(50);
    expect(typeof (await client.closeprice('kospi', '005930')).trdPrc).toBe('number');
    expect((await client.investors('kospi', '005930')).invstLists.length).toBeGreaterThan(0);
    expect((await client.investors('kosdaq')).invstLists.length).toBeGreaterThan(0);
    expect(Array.isArray((await client.shortsell('kospi', '005930', { from: '20261101', to: '20261120' })).hisLists)).toBe(true);
    expect(Array.isArray((await client.foreignhistory('kospi', '005930', { from: '20261101', to: '20261120', count: 5 })).hisLists)).toBe(true);
    expect(typeof (await client.traderanking('kospi', '005930')).bidTrdMbr1).toBe('string');
    expect(typeof (await client.closenav('kospi', '069500')).nav).toBe('number');
    expect((await client.index('kospi', 'K1')).isuSrtCd).toBe('K1');
    expect(typeof (await client.index('kosdaq')).trdPrc).toBe('number');
    expect(typeof (await client.price('kosdaq', '247540')).trdTm).toBe('string');
    expect(typeof (await client.orderbook('kospi', '005930')).askStep10BstordPrc).toBe('number');
  }, 30_000);
});
