import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { KrxClient, toDate8, type KrxError } from '../../src/client/index.js';
import { startBridge, type TestBridge } from '../bridge/helpers.js';

/** History without paging by hand, and dates checked before anything is sent. */

describe('toDate8', () => {
  it.each([
    ['20261120', '20261120'],
    [20261120, '20261120'],
    ['2026-11-20', '20261120'],
    ['2026-11-20T23:30:00+09:00', '20261120'],
    [new Date('2026-11-20T15:30:00Z'), '20261121'], // 00:30 KST on the 21st
  ] as const)('%j → %s', (v, want) => {
    expect(toDate8(v, 'from')).toBe(want);
  });

  it.each(['2026-13-01', '20260230', 'yesterday', '2026/11/20', new Date('x')])('refuses %j', (v) => {
    expect(() => toDate8(v, 'from')).toThrow(expect.objectContaining({ code: 'invalid_params' }));
  });
});

describe('history through the SDK', () => {
  let tb: TestBridge;
  let client: KrxClient;
  beforeAll(async () => {
    tb = await startBridge();
    client = new KrxClient(tb.wsUrl, { WebSocket: WebSocket as never });
  });
  afterAll(async () => {
    await client?.close();
    await tb?.bridge.stop();
  });

  const calls = () => tb.bridge.sim!.stats.snapshot().byEndpoint['v2.stocks.history'] ?? 0;

  it('from after to is a local invalid_params: no upstream call, nothing sent', async () => {
    const before = calls();
    const err = (await client.history('kospi', '005930', { from: new Date('2026-11-20'), to: '2026-11-01' }).catch((e: unknown) => e)) as KrxError;
    expect(err).toMatchObject({ code: 'invalid_params', message: 'from (20261120) is after to (20261101)' });
    expect(calls()).toBe(before);
  });

  it('checks the dates of every dated lookup locally, and takes Date and ISO strings', async () => {
    const before = calls();
    const bad = [
      client.intraday('kospi', '005930', { date: '2026-02-30' }),
      client.shortsell('kospi', '005930', { from: '20261120', to: new Date('2026-11-01T00:00:00+09:00') }),
      client.foreignhistory('kospi', '005930', { from: 'yesterday' }),
    ];
    for (const p of bad) expect(await p.catch((e: unknown) => (e as KrxError).code)).toBe('invalid_params');
    expect(calls()).toBe(before);
    const rows = (await client.shortsell('kospi', '005930', { from: '2026-11-02', to: new Date('2026-11-20T12:00:00+09:00') })).hisLists;
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) expect(r.trdDd >= '20261102' && r.trdDd <= '20261120').toBe(true);
  });

  it('pages through a long range, each page saying whether more remains, with no gap or repeat', async () => {
    const pages: { n: number; hasMore: boolean; newest: string; oldest: string }[] = [];
    for await (const p of client.historyPages('kospi', '005930', { from: '2025-06-01', to: '2026-11-20' })) {
      pages.push({ n: p.rows.length, hasMore: p.hasMore, newest: p.rows[0]!.trdDd, oldest: p.rows.at(-1)!.trdDd });
    }
    expect(pages.length).toBeGreaterThanOrEqual(4);
    expect(pages.slice(0, -1).every((p) => p.n === 100 && p.hasMore)).toBe(true);
    expect(pages.at(-1)!.hasMore).toBe(false);
    for (let i = 1; i < pages.length; i++) expect(pages[i]!.newest < pages[i - 1]!.oldest).toBe(true);
    const all = await client.historyAll('kospi', '005930', { from: '2025-06-01', to: '2026-11-20' });
    expect(all.length).toBe(pages.reduce((a, p) => a + p.n, 0));
    expect(new Set(all.map((r) => r.trdDd)).size).toBe(all.length);
    expect(all.at(-1)!.trdDd >= '20250601').toBe(true);
    expect(all.length).toBeGreaterThan(300);
  }, 30_000);
});
