import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTarget } from '../../src/http/target.js';
import { startCli, type CliBridge } from '../bridge/cli.js';
import { rawRequest, requestLine } from './raw.js';

/**
 * Request targets no URL parser should be trusted with, sent over raw TCP to
 * the bridge as its CLI runs it: each gets a 4xx and the process stays up.
 * (Before the fix, `GET //[` ended the process with an uncaught TypeError.)
 */

describe('parseTarget', () => {
  it.each([
    ['/status', '/status', ''],
    ['/api/v2/x?a=1', '/api/v2/x', '?a=1'],
    ['//status', '//status', ''],
    ['http://example.com/healthz?x=1', '/healthz', '?x=1'],
  ])('reads %s', (target, pathname, search) => {
    const u = parseTarget(target);
    expect(u?.pathname).toBe(pathname);
    expect(u?.search).toBe(search);
  });

  it.each(['', '*', 'http://a:99999/', 'example.com:443', 'ftp://x/', 'http://[/', '//[', '//%/', '/a%zz', '/%ff', '/x?q=%', '/%00', '/.\\', '/..\\secret'])(
    'refuses %j',
    (target) => {
      expect(parseTarget(target)).toBeUndefined();
    },
  );
});

describe('malformed request targets against the running bridge', () => {
  let b: CliBridge;
  beforeAll(async () => {
    b = await startCli({ HTTP_HEADERS_TIMEOUT_MS: '1500' });
  }, 90_000);
  afterAll(() => b?.kill());

  const alive = async (): Promise<void> => {
    const r = await rawRequest(b.port, requestLine('/healthz'));
    expect(r.status).toBe(200);
    expect(b.exited()).toBeUndefined();
  };

  it.each(['//[', '//%/', 'http://a:99999/'])(
    'answers GET %s with 400 and keeps serving',
    async (target) => {
      const r = await rawRequest(b.port, requestLine(target));
      expect(r.status).toBe(400);
      expect(r.text).toContain('"code":"bad_request"');
      // The crash came about 2 s after the request: wait past that, then check the process.
      await new Promise((res) => setTimeout(res, 2500));
      await alive();
    },
    15_000,
  );

  it('answers every generated malformed target with a 4xx and stays up', async () => {
    const poison = fc.constantFrom('[', '%', '%zz', '%G0', ':99999', '//[', '[::', '\\', '%00', '%ff%fe');
    const middle = fc.string({ unit: fc.constantFrom(...'[]%:@/\\^|{}"<>~!$&\'()*+,;=.-_'.split(''), 'a', '0', '%2', '%E'), maxLength: 24 });
    const prefix = fc.constantFrom('', '/', '//', '///', 'http://', 'https://', 'http://a:99999', 'http://[', '*', 'x:', '/..', '/%');
    const method = fc.constantFrom('GET', 'HEAD', 'POST', 'OPTIONS', 'DELETE');
    const seen = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(method, prefix, middle, poison, async (m, p, mid, x) => {
        const r = await rawRequest(b.port, requestLine(p + mid + x, m));
        seen.set(r.status, (seen.get(r.status) ?? 0) + 1);
        return r.status >= 400 && r.status < 500;
      }),
      { numRuns: 400 },
    );
    // Raw bytes the HTTP parser refuses before any route: control characters, bad versions, huge headers.
    for (const raw of [
      'GET /\u0000 HTTP/1.1\r\nHost: x\r\n\r\n',
      'GET / HTTP/9.9\r\nHost: x\r\n\r\n',
      'GET\r\n\r\n',
      `GET / HTTP/1.1\r\nHost: x\r\nX: ${'a'.repeat(20_000)}\r\n\r\n`,
      'GET / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n',
      'GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
    ]) {
      const r = await rawRequest(b.port, raw);
      expect(r.status, JSON.stringify(raw.slice(0, 40))).toBeGreaterThanOrEqual(400);
      expect(r.status).toBeLessThan(500);
    }
    await alive();
    expect(b.output()).not.toMatch(/uncaught exception|unhandled promise rejection/);
  }, 90_000);

  it('answers CONNECT, a request without Host and every malformed WebSocket handshake with a coded error and nosniff', async () => {
    const key = 'dGhlIHNhbXBsZSBub25jZQ==';
    const upgrade = (method: string, headers: Record<string, string>) =>
      `${method} /ws HTTP/1.1\r\nHost: x\r\n${Object.entries(headers)
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('')}\r\n`;
    const good = { Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Key': key, 'Sec-WebSocket-Version': '13' };
    const cases: [string, number, string][] = [
      ['CONNECT evil.example:443 HTTP/1.1\r\nHost: evil.example:443\r\n\r\n', 400, 'bad_request'],
      ['CONNECT /status HTTP/1.1\r\nHost: x\r\n\r\n', 405, 'method_not_allowed'],
      ['GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n', 400, 'bad_request'],
      [upgrade('POST', good), 405, 'method_not_allowed'],
      [upgrade('GET', { ...good, 'Sec-WebSocket-Key': 'short' }), 400, 'bad_request'],
      [upgrade('GET', { ...good, 'Sec-WebSocket-Key': '' }), 400, 'bad_request'],
      [upgrade('GET', { ...good, 'Sec-WebSocket-Version': '8', 'Sec-WebSocket-Origin': 'https://evil.example' }), 400, 'bad_request'],
      [upgrade('GET', { ...good, 'Sec-WebSocket-Version': 'x' }), 400, 'bad_request'],
      // An upgrade to another protocol is served as if it asked for none (RFC 9110 §7.8): a plain GET of /ws.
      [upgrade('GET', { ...good, Upgrade: 'h2c' }), 426, 'upgrade_required'],
      [upgrade('GET', { ...good, 'Sec-WebSocket-Protocol': 'a b' }), 400, 'bad_request'],
      [upgrade('GET', { ...good, 'Sec-WebSocket-Protocol': 'a, a' }).replace('/ws', '/ws/replay?date=20260101&from=090000&to=100000'), 400, 'bad_request'],
      // A misspelt token (or any other parameter) is refused, not ignored.
      [upgrade('GET', good).replace('/ws', '/ws?tokn=abc'), 400, 'invalid_params'],
      [upgrade('GET', good).replace('/ws', '/ws?token=abc&market=kospi'), 400, 'invalid_params'],
      [upgrade('GET', good).replace('/ws', '/ws?token=abc&token=def'), 400, 'invalid_params'],
    ];
    for (const [raw, status, code] of cases) {
      const r = await rawRequest(b.port, raw);
      const what = JSON.stringify(raw.slice(0, 60));
      expect(r.status, what).toBe(status);
      expect(r.text, what).toContain(`"code":"${code}"`);
      expect(r.text.toLowerCase(), what).toContain('x-content-type-options: nosniff');
    }
    // Version 13 is the one spoken: it says so.
    expect((await rawRequest(b.port, cases[6]![0])).text).toContain('Sec-WebSocket-Version: 13');
    expect((await rawRequest(b.port, cases[11]![0])).text).toContain('1 unknown query parameter; this takes only token');
    expect((await rawRequest(b.port, cases[13]![0])).text).toContain('token is given more than once');
    // A good handshake still opens, with a token too (access is open here: it is not read).
    expect((await rawRequest(b.port, upgrade('GET', good), 1000)).status).toBe(101);
    expect((await rawRequest(b.port, upgrade('GET', good).replace('/ws', '/ws?token=abc'), 1000)).status).toBe(101);
    await alive();
  }, 30_000);

  it('answers headers larger than it reads with 431 and a coded body, and keeps serving', async () => {
    const r = await rawRequest(b.port, `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(70_000)}\r\n\r\n`);
    expect(r.status).toBe(431);
    expect(r.text).toMatch(/"code":"bad_request","message":"the request's headers pass the \d+ bytes the server reads"/);
    await alive();
  }, 15_000);

  it('cuts clients that send their headers slowly (408), and keeps serving the others meanwhile', async () => {
    const { connect } = await import('node:net');
    const slow = Array.from({ length: 50 }, () => {
      const sock = connect({ port: b.port, host: '127.0.0.1' });
      let text = '';
      sock.setEncoding('latin1');
      sock.on('data', (d: string) => (text += d));
      sock.on('error', () => undefined);
      const closed = new Promise<number>((resolve) => sock.on('close', () => resolve(Date.now())));
      sock.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
      // One header line every 300 ms, never the blank line that ends the head.
      const drip = setInterval(() => sock.writable && sock.write(`X-${Math.random().toString(36).slice(2)}: y\r\n`), 300);
      return { closed, text: () => text, stop: () => clearInterval(drip) };
    });
    const start = Date.now();
    // While they drip, others are served.
    for (let i = 0; i < 5; i++) await alive();
    const ends = await Promise.all(slow.map((s) => s.closed));
    for (const s of slow) s.stop();
    for (const s of slow) expect(s.text()).toMatch(/^HTTP\/1\.1 408/);
    for (const s of slow) expect(s.text()).toContain('"code":"bad_request","message":"the request\'s headers did not all arrive in time"');
    // The head timeout (1.5 s), checked each second.
    expect(Math.max(...ends) - start).toBeLessThan(5000);
    await alive();
  }, 20_000);
});
