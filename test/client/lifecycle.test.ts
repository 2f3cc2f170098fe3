import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { KrxClient, type KrxError } from '../../src/client/index.js';
import { startBridge, sleep, until, type TestBridge } from '../bridge/helpers.js';

/**
 * A bot's life against a real bridge: started before the bridge, waiting
 * for it; a request that never gets a connection; and a bridge restart,
 * rejoined promptly and resumed without a snapshot.
 */

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

let bridge: TestBridge | undefined;
let client: KrxClient | undefined;
afterEach(async () => {
  await client?.close();
  client = undefined;
  await bridge?.bridge.stop();
  bridge = undefined;
});

const CODES = ['005930', '000660', '035420'];

describe('the SDK across the bridge’s life', () => {
  it('a bot started before the bridge: its subscribe waits and resolves once the bridge is up', async () => {
    const port = await freePort();
    client = new KrxClient(`ws://127.0.0.1:${port}/ws`, { WebSocket: WebSocket as never, requestTimeoutMs: 20_000, maxDelayMs: 500 });
    const attempts: number[] = [];
    const disconnects: number[] = [];
    client.on('reconnecting', (attempt) => attempts.push(attempt));
    client.on('disconnect', (code) => disconnects.push(code));
    const subscribed = client.subscribe('quote', 'kospi', CODES);
    await until(() => attempts.length >= 2, 10_000, 'attempts while the bridge is not there');
    bridge = await startBridge({ PORT: port });
    expect(await subscribed).toEqual(CODES.map((c) => `quote.kospi.${c}`));
    await until(() => CODES.every((c) => client!.row('quote', 'kospi', c) !== undefined), 10_000, 'rows');
    expect(attempts.length).toBeGreaterThan(1);
    expect(attempts).toEqual(attempts.map((_, i) => i + 1));
    // Never up, never down: failed attempts are `reconnecting`, not a disconnect each.
    expect(disconnects).toEqual([]);
  }, 30_000);

  it('a request whose connection never comes fails with not_connected', async () => {
    const port = await freePort();
    client = new KrxClient(`ws://127.0.0.1:${port}/ws`, { WebSocket: WebSocket as never, requestTimeoutMs: 1000 });
    const err = (await client.subscribe('quote', 'kospi', ['005930']).catch((e: unknown) => e)) as KrxError;
    expect(err.code).toBe('not_connected');
    expect(err.message).toBe('not connected to the bridge within 1000 ms; subscribe not sent');
    expect(err.retryable).toBe(true);
  });

  it('a restarted bridge is rejoined within 2 s of being back, and every topic says it recovered', async () => {
    const port = await freePort();
    const dataDir = mkdtempSync(join(tmpdir(), 'krx-sdk-restart-'));
    // The market holds still (no ticks), so the restarted bridge holds the seqs the client holds.
    const config = { PORT: port, STATE: 'on' as const, DATA_DIR: dataDir };
    bridge = await startBridge(config, { simulator: { tickMs: 0 } });
    client = new KrxClient(`ws://127.0.0.1:${port}/ws`, { WebSocket: WebSocket as never });
    await client.subscribe('quote', 'kospi', CODES);
    await until(() => CODES.every((c) => client!.row('quote', 'kospi', c) !== undefined), 10_000, 'rows');
    const disconnects: number[] = [];
    const resumed: Record<string, boolean>[] = [];
    const snapshots: string[] = [];
    client.on('disconnect', (code) => disconnects.push(code));
    client.on('resumed', (r) => resumed.push({ ...r }));
    client.on('update', (topic, _row, change) => change.kind === 'snapshot' && snapshots.push(topic));
    await bridge.bridge.stop();
    bridge = undefined;
    await sleep(3000); // an outage, not a wait: down for a while, the client keeps trying
    bridge = await startBridge(config, { simulator: { tickMs: 0 } });
    const back = performance.now();
    await until(() => client!.state === 'open', 5000, 'the rejoin');
    const rejoinMs = performance.now() - back;
    console.log(`rejoined ${Math.round(rejoinMs)} ms after the bridge was back`);
    expect(rejoinMs).toBeLessThan(2000);
    await until(() => resumed.length > 0, 5000, 'resumed');
    expect(resumed).toEqual([Object.fromEntries(CODES.map((c) => [`quote.kospi.${c}`, true]))]);
    expect(snapshots).toEqual([]);
    expect(disconnects).toEqual([1001]);
  }, 30_000);
});
