import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { request } from 'undici';
import WebSocket from 'ws';
import { Authenticator, tokenDigest, claimRefusal } from '../../src/access/auth.js';
import { createLogger } from '../../src/log.js';
import { Client, codes, counter, eventually, startHarness, upgrade, type Harness } from '../gateway/harness.js';
import { startBridge, type TestBridge } from '../bridge/helpers.js';

/** The smaller findings of the hardening review, one test each. */

let h: Harness | undefined;
let tb: TestBridge | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  await tb?.bridge.stop();
  tb = undefined;
});

function staticDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'krx-static-'));
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>t</title>');
  writeFileSync(join(dir, 'app.js'), 'console.log(1)\n//# sourceMappingURL=app.js.map');
  writeFileSync(join(dir, 'app.js.map'), '{"version":3,"sources":["src/demo/main.ts"]}');
  mkdirSync(join(dir, 'examples'));
  writeFileSync(join(dir, 'examples', 'minimal.html'), '<!doctype html><script type="module">1</script>');
  return dir;
}

describe('pages and bodies', () => {
  it('sends a Content-Security-Policy, no framing and no referrer with every page; nosniff with everything', async () => {
    h = await startHarness({}, { staticDir: staticDir() });
    const page = await request(`${h.httpUrl}/`);
    await page.body.dump();
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("connect-src 'self'");
    expect(page.headers['x-frame-options']).toBe('DENY');
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    const example = await request(`${h.httpUrl}/examples/minimal.html`);
    await example.body.dump();
    expect(String(example.headers['content-security-policy'])).toContain("script-src 'self' 'unsafe-inline'");
    for (const path of ['/app.js', '/status', '/nothing', '/api/v2/market/stocks/kospi/000001/nothing']) {
      const r = await request(`${h.httpUrl}${path}`);
      await r.body.dump();
      expect(r.headers['x-content-type-options'], path).toBe('nosniff');
    }
  });

  it('does not serve source maps unless asked to', async () => {
    const dir = staticDir();
    h = await startHarness({}, { staticDir: dir });
    expect((await request(`${h.httpUrl}/app.js.map`)).statusCode).toBe(404);
    await h.close();
    h = await startHarness({}, { staticDir: dir, sourceMaps: true });
    expect((await request(`${h.httpUrl}/app.js.map`)).statusCode).toBe(200);
  });

  it('does not echo unknown query keys in an error body', async () => {
    h = await startHarness();
    const evil = '%3Cscript%3Ealert(1)%3C%2Fscript%3E';
    const r = await request(`${h.httpUrl}/api/v2/market/stocks/kospi/005930/master?${evil}=1&x=2`);
    const body = await r.body.text();
    expect(r.statusCode).toBe(400);
    expect(body).not.toContain('script');
    expect(body).not.toContain('"x"');
    expect(JSON.parse(body).error).toEqual({ code: 'invalid_params', message: '2 unknown query parameters; this endpoint takes no query parameters' });
  });
});

describe('/status and /symbols', () => {
  it('are rate-limited per address', async () => {
    h = await startHarness({}, { infoPerMinute: 5 });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await request(`${h.httpUrl}/status`)).statusCode);
    for (let i = 0; i < 3; i++) statuses.push((await request(`${h.httpUrl}/symbols?q=00`)).statusCode);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
    // Health checks are not counted.
    expect((await request(`${h.httpUrl}/healthz`)).statusCode).toBe(200);
  });

  it('/status does not show where the upstream is', async () => {
    tb = await startBridge();
    const body = await (await request(`${tb.url}/status`)).body.text();
    expect(body).not.toContain(tb.bridge.upstreamOrigin);
    expect(body).not.toMatch(/127\.0\.0\.1:\d+/);
    expect(JSON.parse(body).upstream).toMatchObject({ simulated: true });
  });
});

describe('connections', () => {
  it('counts MAX_CONNECTIONS over every address when it is above the per-address cap', async () => {
    // Two per address, five in all: three addresses fill the server, whatever each holds of its own.
    h = await startHarness({ maxConnections: 5, maxConnectionsPerIp: 2 });
    const from = (addr: string) => Client.connect(h!.url, { localAddress: addr });
    const open = await Promise.all(['127.0.0.1', '127.0.0.1', '127.0.0.2', '127.0.0.2', '127.0.0.3'].map(from));
    const { status } = await upgrade(h.url, {}, { localAddress: '127.0.0.3' });
    expect(status).toBe(503);
    expect(await counter(h.metrics, 'krx_connections_total', { outcome: 'server_full' })).toBe(1);
    // A slot given back is one more for any address.
    open[0]!.close();
    await eventually(async () => (await counter(h!.metrics, 'krx_clients')) === 4);
    const again = await from('127.0.0.4');
    again.close();
    for (const c of open.slice(1)) c.close();
  });
  it('behind a proxy, counts a client by the address the proxy appended, not by the X-Forwarded-For it sent itself', async () => {
    h = await startHarness({ trustProxy: true, maxConnectionsPerIp: 2 });
    const via = (sent: string) => ({ headers: { 'X-Forwarded-For': `${sent}, 198.51.100.9` } });
    const open = [await Client.connect(h.url, via('1.1.1.1')), await Client.connect(h.url, via('2.2.2.2'))];
    const { status } = await upgrade(h.url, via('3.3.3.3').headers);
    expect(status).toBe(429);
    // Another client of the proxy is another address.
    const other = await Client.connect(h.url, { headers: { 'X-Forwarded-For': '198.51.100.10' } });
    for (const c of [...open, other]) c.close();
  });
  it('refuses connections past MAX_CONNECTIONS from any number of addresses with 503 server_full', async () => {
    h = await startHarness({ maxConnections: 3, maxConnectionsPerIp: 100 });
    const open = await Promise.all([0, 1, 2].map(() => Client.connect(h!.url)));
    const { status: refused } = await upgrade(h.url);
    expect(refused).toBe(503);
    expect(await counter(h.metrics, 'krx_connections_total', { outcome: 'server_full' })).toBe(1);
    open[0]!.close();
    await eventually(async () => (await counter(h!.metrics, 'krx_clients')) === 2);
    const again = await Client.connect(h.url);
    again.close();
    for (const c of open.slice(1)) c.close();
  });

  it('logs and counts a close the WebSocket layer makes itself', async () => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'info', destination: { write: (l: string) => void lines.push(l) } });
    h = await startHarness({ logger, limits: { maxPayloadBytes: 1024 } });
    const c = await Client.connect(h.url);
    c.send({ op: 'ping', pad: 'x'.repeat(4000) });
    expect((await c.closedWith()).code).toBe(1009);
    expect(await counter(h.metrics, 'krx_server_closes_total', { code: '1009' })).toBe(1);
    await eventually(() => lines.some((l) => l.includes('connection closed by the WebSocket layer') && l.includes('"close":1009')));
  });

  it('logs and counts the cut of a peer that stopped answering pings', async () => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'info', destination: { write: (l: string) => void lines.push(l) } });
    h = await startHarness({ logger, heartbeatMs: 100 });
    // A raw peer that never answers a ping: ws answers them itself unless told not to.
    const ws = new WebSocket(h.url, { autoPong: false } as never);
    await new Promise((resolve) => ws.once('open', resolve));
    const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
    expect(await closed).toBe(1006); // cut without a closing handshake
    expect(await counter(h.metrics, 'krx_server_closes_total', { code: '4002' })).toBe(1);
    expect(lines.some((l) => l.includes('closing connection') && l.includes('"close":4002') && l.includes('"level":30'))).toBe(true);
  }, 10_000);

  it('answers a subscribe past the topic limit with too_many_topics, however many codes it names', async () => {
    h = await startHarness({ limits: { maxTopics: 1000 } }, {}, 50);
    const c = await Client.connect(h.url);
    const r = await c.request({ op: 'subscribe', channel: 'quote', market: 'kospi', codes: codes(5000) });
    expect(r).toMatchObject({ type: 'error', code: 'too_many_topics' });
    c.close();
  });
});

describe('tokens', () => {
  const SECRET = 'jwt-secret-for-tests-only-0123456789';
  it('says what is wrong with a JWT whose exp is a string', async () => {
    const token = await new SignJWT({ exp: '2099-01-01' as unknown as number }).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(SECRET));
    const a = new Authenticator({ jwtSecret: SECRET });
    const r = await a.authenticate({ headers: { authorization: `Bearer ${token}` } });
    expect(r).toMatchObject({ ok: false, code: 'unauthorized', message: 'token claim "exp" must be a number (seconds since the epoch)' });
    expect(claimRefusal('nbf', 'check_failed')).toBe('token not valid yet');
    expect(claimRefusal('aud', 'check_failed')).toBe('token for another audience');
  });

  it('finds static tokens by their digest, and a removed token stops being valid', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'krx-tok-'));
    const file = join(dir, 'tokens');
    writeFileSync(file, 'tok-one\ntok-two\n');
    const a = new Authenticator({ tokenFile: file });
    // The table is keyed by fixed-length digests: a lookup never compares the presented text with a token.
    const keys = [...(a as unknown as { tokens: Map<string, unknown> }).tokens.keys()];
    expect(keys).toEqual([tokenDigest('tok-one'), tokenDigest('tok-two')]);
    for (const k of keys) expect(k).toMatch(/^[0-9a-f]{64}$/);
    const one = await a.authenticate({ headers: { authorization: 'Bearer tok-one' } });
    expect(one.ok).toBe(true);
    expect((await a.authenticate({ headers: { authorization: 'Bearer tok-on' } })).ok).toBe(false);
    expect((await a.authenticate({ headers: { authorization: 'Bearer tok-one-' } })).ok).toBe(false);
    writeFileSync(file, 'tok-two\n');
    a.reload();
    expect(one.ok && one.stillValid?.()).toBe(false);
  });
});
