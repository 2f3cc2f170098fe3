import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { KrxClient, type KrxError } from '../../src/client/index.js';
import { startBridge, type TestBridge } from '../bridge/helpers.js';

/**
 * A long history outruns the lookup rate: `historyAll` waits and asks the
 * refused page again instead of failing with every page read so far thrown
 * away. 60 lookups a minute (one back a second): 64 pages of 100 days.
 */
describe('historyAll against the lookup rate', () => {
  let tb: TestBridge;
  let client: KrxClient;
  beforeAll(async () => {
    tb = await startBridge({ GETS_PER_MINUTE: 60 });
    client = new KrxClient(tb.wsUrl, { WebSocket: WebSocket as never, requestTimeoutMs: 30_000 });
    await client.ready();
  });
  afterAll(async () => {
    await client?.close();
    await tb?.bridge.stop();
  });

  it('a page refused for another reason fails at once', async () => {
    const err = (await client.historyAll('kospi', '999999', { from: '2026-01-01' }).catch((e: unknown) => e)) as KrxError;
    expect(err.code).toBe('invalid_code');
  });

  it('reads every page of a range longer than the rate allows at once, with no gap or repeat', async () => {
    const errors: string[] = [];
    client.on('error', (e) => errors.push(e.code));
    const started = performance.now();
    const all = await client.historyAll('kospi', '005930', { from: '2001-01-01', to: '2026-11-20' });
    const days = all.map((r) => r.trdDd);
    expect(days.length).toBeGreaterThan(6_200);
    expect(new Set(days).size).toBe(days.length);
    expect([...days].sort().reverse()).toEqual(days);
    expect(days.at(-1)! >= '20010101').toBe(true);
    // The pages past the 60th waited for the bucket.
    expect(performance.now() - started).toBeGreaterThan(1_500);
    expect(errors).toEqual([]);
  }, 40_000);
});
