import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createBridge } from '../../src/bridge/bridge.js';
import { defaultConfig } from '../../src/config/config.js';
import { silentLogger } from '../../src/log.js';
import { startBridge } from './helpers.js';

/** Handles that keep the process alive, by kind (sockets, servers, timers). */
function handles(): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of process.getActiveResourcesInfo()) out[k] = (out[k] ?? 0) + 1;
  return out;
}

describe('createBridge', () => {
  it('resolves to a listening bridge whose parts are all there, and its stop lets every handle go', async () => {
    const before = handles();
    const tb = await startBridge();
    const b = tb.bridge;
    for (const part of [b.topology, b.upstream, b.cache, b.allowance, b.poller, b.gateway, b.server, b.sim]) expect(part).toBeDefined();
    expect(b.topology.kind).toBe('local');
    expect(b.address.port).toBeGreaterThan(0);
    expect((await fetch(`${tb.url}/healthz`)).status).toBe(200);
    await b.stop();
    await expect.poll(() => (handles().TCPServerWrap ?? 0) <= (before.TCPServerWrap ?? 0)).toBe(true);
  });

  it('on a port in use: rejects with EADDRINUSE and stops what it had started (the simulator, the upstream client)', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    const port = (blocker.address() as AddressInfo).port;
    const before = handles();
    const config = defaultConfig({ PORT: port, HOST: '127.0.0.1', LOG_LEVEL: 'silent', STATE: 'off', RECORD: 'off', NAMES_PER_DAY: 0 });
    await expect(createBridge(config, { logger: silentLogger() })).rejects.toMatchObject({ code: 'EADDRINUSE' });
    // The simulator's listening socket is closed again: no server handle more than before.
    await expect.poll(() => (handles().TCPServerWrap ?? 0) <= (before.TCPServerWrap ?? 0)).toBe(true);
    await new Promise<void>((r) => blocker.close(() => r()));
  });
});
