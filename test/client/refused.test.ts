import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { Authenticator } from '../../src/access/auth.js';
import { KrxClient, type KrxError } from '../../src/client/index.js';
import { probeUrl, readRefusal, verdictOf } from '../../src/client/refusal.js';
import { startBridge } from '../examples/helpers.js';
import { counter, sleep, startHarness, upgrade, type Harness } from '../gateway/harness.js';

/**
 * A refused upgrade, as the SDK meets it: a WebSocket reports it as a bare
 * 1006, so the client asks the server (a plain GET of the same URL) and
 * reports the refusal's code, closing for good when no retry can change it.
 */

describe('refusal units', () => {
  it('asks the http(s) URL of the socket, query and all', () => {
    expect(probeUrl('ws://h:8080/ws?token=a%20b')).toBe('http://h:8080/ws?token=a%20b');
    expect(probeUrl('wss://h/x/ws')).toBe('https://h/x/ws');
  });
  it('reads a coded body, and a body that is not one', () => {
    expect(readRefusal(401, '{"error":{"code":"unauthorized","message":"token not valid"}}')).toEqual({
      status: 401,
      code: 'unauthorized',
      message: 'token not valid',
    });
    expect(readRefusal(502, '<html>Bad Gateway</html>')).toEqual({ status: 502, code: undefined, message: '' });
    expect(readRefusal(400, 'null')).toEqual({ status: 400, code: undefined, message: '' });
  });
  it('is final for what no retry changes, reported and retried otherwise', () => {
    const v = (status: number, code?: string, refreshes = false) => verdictOf({ status, code, message: code === undefined ? '' : 'm' }, refreshes);
    expect(v(426, 'upgrade_required')).toEqual({ kind: 'retry' });
    for (const [status, code] of [
      [400, 'invalid_params'],
      [401, 'unauthorized'],
      [403, 'forbidden_origin'],
    ] as const) {
      const r = v(status, code);
      expect(r.kind).toBe('final');
      expect(r.kind !== 'retry' && r.error.code).toBe(code);
      expect(r.kind !== 'retry' && r.error.retryable).toBe(false);
    }
    expect(v(401, 'unauthorized', true)).toMatchObject({ kind: 'wait', penalty: false, error: { code: 'unauthorized', retryable: true } });
    expect(v(429, 'too_many_connections')).toMatchObject({ kind: 'wait', penalty: true, error: { code: 'too_many_connections' } });
    expect(v(503, 'server_full')).toMatchObject({ kind: 'wait', penalty: true });
    expect(v(503, 'shutting_down')).toMatchObject({ kind: 'wait', penalty: false, error: { code: 'shutting_down' } });
    // A bridge too old to answer the probe says 404 for it too: reported, not final.
    expect(v(404, 'not_found')).toMatchObject({ kind: 'wait', error: { code: 'not_found' } });
    // A proxy's own page: the status is all there is.
    const proxy = v(502);
    expect(proxy).toMatchObject({ kind: 'wait', error: { code: 'connection' } });
    expect(proxy.kind !== 'retry' && proxy.error.message).toBe('the server refused the connection: no reason given (HTTP 502)');
  });
});

async function probe(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string; upgrade: string | null }> {
  const res = await fetch(probeUrl(url), { headers });
  return { status: res.status, body: await res.text(), upgrade: res.headers.get('upgrade') };
}

describe('a plain GET of /ws', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('answers what an upgrade with the same URL and headers gets, or 426 when it would be accepted', async () => {
    const auth = new Authenticator({ tokens: ['static-token-1'], origins: ['https://app.example'] });
    h = await startHarness({ auth });
    const cases: [string, Record<string, string>][] = [
      [h.url, {}],
      [`${h.url}?token=wrong`, {}],
      [`${h.url}?token=static-token-1&x=1`, {}],
      [`${h.url}?token=static-token-1&token=static-token-1`, {}],
      [`${h.url}?token=static-token-1`, { Origin: 'https://evil.example' }],
    ];
    for (const [url, headers] of cases) {
      const [u, p] = [await upgrade(url, headers), await probe(url, headers)];
      expect(p.status, url).toBe(u.status);
      expect(p.body, url).toBe(u.body);
      expect(p.status).toBeGreaterThanOrEqual(400);
    }
    const ok = await probe(`${h.url}?token=static-token-1`);
    expect(ok.status).toBe(426);
    expect(ok.upgrade).toBe('websocket');
    expect(JSON.parse(ok.body).error.code).toBe('upgrade_required');
    expect((await upgrade(`${h.url}?token=static-token-1`)).status).toBe(101);
    // Probes are not upgrades: only the two upgrades above without a valid token are counted.
    expect(await counter(h.metrics, 'krx_connections_total', { outcome: 'unauthorized' })).toBe(2);
  });

  it("counts the address's open connections without taking a slot", async () => {
    h = await startHarness({ maxConnectionsPerIp: 1 });
    for (let i = 0; i < 3; i++) expect((await probe(h.url)).status).toBe(426);
    const held = new WebSocket(h.url);
    await new Promise((r) => held.once('open', r));
    const refused = await probe(h.url);
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.body).error.code).toBe('too_many_connections');
    held.close();
    await new Promise((r) => held.once('close', r));
    expect((await probe(h.url)).status).toBe(426);
  });

  it('is limited per address, as /status is', async () => {
    h = await startHarness({}, { infoPerMinute: 3 });
    for (let i = 0; i < 3; i++) expect((await probe(h.url)).status).toBe(426);
    const over = await probe(h.url);
    expect(over.status).toBe(429);
    expect(JSON.parse(over.body).error).toEqual({ code: 'rate_limited', message: 'at most 3 requests per minute to /status, /symbols and a plain GET of /ws' });
  });
});

describe('the SDK after a refused upgrade', () => {
  let h: Harness | undefined;
  const clients: KrxClient[] = [];
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await h?.close();
    h = undefined;
  });

  function client(url: string, opts: ConstructorParameters<typeof KrxClient>[1] = {}): { c: KrxClient; errors: KrxError[]; retries: number[] } {
    const c = new KrxClient(url, { WebSocket, minDelayMs: 20, maxDelayMs: 400, ...opts });
    clients.push(c);
    const errors: KrxError[] = [];
    const retries: number[] = [];
    c.on('error', (e) => errors.push(e));
    c.on('reconnecting', (_n, delay) => retries.push(delay));
    return { c, errors, retries };
  }

  it('a static token the server refuses: ready() and the error say unauthorized, and it stops', async () => {
    h = await startHarness({ auth: new Authenticator({ tokens: ['static-token-1'] }) });
    const { c, errors, retries } = client(h.url, { token: 'wrong-token' });
    const e = await c.ready({ timeoutMs: 5000 }).then(
      () => undefined,
      (err: KrxError) => err,
    );
    expect(e?.code).toBe('unauthorized');
    expect(e?.message).toBe('the server refused the connection: token not valid (HTTP 401)');
    expect(errors.map((x) => [x.code, x.retryable])).toEqual([['unauthorized', false]]);
    expect(c.state).toBe('closed');
    await expect(c.subscribe('quote', 'kospi', '000001')).rejects.toMatchObject({ code: 'closed' });
    await sleep(300);
    expect(retries).toEqual([]);
    expect(await counter(h.metrics, 'krx_connections_total', { outcome: 'unauthorized' })).toBe(1);
  });

  it('a query parameter /ws does not take: invalid_params, final', async () => {
    h = await startHarness();
    const { c, errors } = client(`${h.url}?tokn=abc`);
    await expect(c.ready({ timeoutMs: 5000 })).rejects.toMatchObject({ code: 'invalid_params', message: expect.stringContaining('this takes only token') });
    expect(errors.map((x) => x.code)).toEqual(['invalid_params']);
    expect(c.state).toBe('closed');
  });

  it('a token function is asked again: the refusal is reported and retried, and its next token opens', async () => {
    h = await startHarness({ auth: new Authenticator({ tokens: ['static-token-1'] }) });
    const tokens = ['stale-token', 'static-token-1'];
    const { c, errors, retries } = client(h.url, { token: () => tokens.shift() ?? 'static-token-1' });
    await c.ready({ timeoutMs: 5000 });
    expect(errors.map((x) => [x.code, x.retryable])).toEqual([['unauthorized', true]]);
    expect(retries).toHaveLength(1);
    expect(c.state).toBe('open');
  });

  it('too many connections from the address: reported, retried after a longer wait, open once a slot is free', async () => {
    h = await startHarness({ maxConnectionsPerIp: 1 });
    const held = new WebSocket(h.url);
    await new Promise((r) => held.once('open', r));
    const { c, errors, retries } = client(h.url, { random: () => 0 });
    await sleep(200);
    expect(errors[0]).toMatchObject({ code: 'too_many_connections', retryable: true });
    expect(c.state).toBe('reconnecting');
    // A penalty: at least half the ceiling four attempts ahead (20 · 2^4 / 2 = 160 ms with no jitter), where the first plain retry waits 0–20 ms.
    expect(retries[0]).toBeGreaterThanOrEqual(160);
    held.close();
    await c.ready({ timeoutMs: 5000 });
    expect(c.state).toBe('open');
  });

  it('with reconnect: false, what waits fails with the refusal, not a bare lost connection', async () => {
    h = await startHarness({ maxConnectionsPerIp: 1 });
    const held = new WebSocket(h.url);
    await new Promise((r) => held.once('open', r));
    const { c } = client(h.url, { reconnect: false });
    await expect(c.ready({ timeoutMs: 5000 })).rejects.toMatchObject({ code: 'too_many_connections', retryable: true });
    expect(c.state).toBe('closed');
    held.close();
  });

  it('a replay: a token the server refuses ends it with unauthorized; with a good one a day not recorded is not_recorded', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'krx-refused-'));
    const { bridge, wsUrl } = await startBridge({}, { RECORD: 'on', DATA_DIR: dir, AUTH_TOKENS: ['tok-1'] });
    try {
      const replay = { date: '20260105' };
      const bad = client(wsUrl, { token: 'wrong', replay });
      await expect(bad.c.ready({ timeoutMs: 5000 })).rejects.toMatchObject({ code: 'unauthorized', message: expect.stringContaining('token not valid') });
      expect(bad.errors.map((e) => e.code)).toEqual(['unauthorized']);
      const good = client(wsUrl, { token: 'tok-1', replay });
      await expect(good.c.ready({ timeoutMs: 5000 })).rejects.toMatchObject({ code: 'not_recorded' });
      // The plain GET says what the upgrade would get, the replay's own refusal included.
      const res = await fetch(probeUrl(`${wsUrl}/replay?date=20260105&token=tok-1`));
      expect([res.status, ((await res.json()) as { error: { code: string } }).error.code]).toEqual([404, 'not_recorded']);
    } finally {
      await bridge.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a socket that fails on the way while the upgrade would be accepted is retried as before, without an error', async () => {
    h = await startHarness();
    // Every upgrade is cut before the gateway answers it (a proxy that drops it), yet a plain GET says 426.
    let cuts = 3;
    h.server.prependListener('upgrade', (_req, socket: import('node:stream').Duplex) => {
      if (cuts-- > 0) socket.destroy();
    });
    const { c, errors, retries } = client(h.url);
    await c.ready({ timeoutMs: 5000 });
    expect(errors).toEqual([]);
    expect(retries.length).toBeGreaterThanOrEqual(3);
  });
});
