import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../gateway/harness.js';
import { exchange, type RawResponse } from './raw.js';

/**
 * Requests carrying an `Upgrade` header, sent over raw TCP to a gateway and
 * its HTTP routes on a real server (made as the bridge makes its own:
 * `requireHostHeader: false`, the handler says it coded).
 *
 * - node:http hands every request with an `Upgrade` header to the gateway,
 *   whatever its path or protocol: `curl --http2` (`Upgrade: h2c`, also sent
 *   by Java's HttpClient) got a WebSocket error on every route. One that
 *   does not ask for a WebSocket is served as if it had no `Upgrade`
 *   (RFC 9110 §7.8), keep-alive and pipelining included.
 * - A WebSocket upgrade gets the checks of every request (`Host` on
 *   HTTP/1.1, a readable target) and needs HTTP/1.1 (RFC 6455 §4.1).
 * - The plain GET of `/ws` answers what the upgrade would get: both read
 *   the target with one parser, so they agree on every target.
 */

let h: Harness;
let port: number;
beforeAll(async () => {
  h = await startHarness({}, {}, 50, { requireHostHeader: false });
  port = Number(new URL(h.httpUrl).port);
});
afterAll(() => h.close());

/** The head curl's `--http2` sends on `http://` (the settings are curl's). */
const H2C = 'Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n';
/** The headers of a valid WebSocket handshake (RFC 6455's sample key). */
const WS = 'Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n';

/** A request of `target` with `headers`, on HTTP/`version`, with a `Host` header unless `host` is false. */
function request(target: string, headers = '', opts: { method?: string; version?: string; host?: boolean } = {}): string {
  return `${opts.method ?? 'GET'} ${target} HTTP/${opts.version ?? '1.1'}\r\n${opts.host === false ? '' : 'Host: x\r\n'}${headers}\r\n`;
}

/** The one response to `bytes` on a connection of its own. */
async function one(bytes: string): Promise<RawResponse> {
  const r = await exchange(port, bytes, 1);
  expect(r.responses.length, bytes).toBe(1);
  return r.responses[0]!;
}

/** The error code of a coded JSON body, or undefined. */
function codeOf(r: RawResponse): string | undefined {
  try {
    return (JSON.parse(r.body) as { error?: { code?: string } }).error?.code;
  } catch {
    return undefined;
  }
}

describe('an Upgrade the bridge does not speak (h2c) is ignored: the request is served as HTTP', () => {
  it.each(['/status', '/healthz', '/readyz', '/', '/symbols?q=000001', '/metrics', '/nothing-here'])(
    'GET %s with Upgrade: h2c gets what a plain GET gets',
    async (target) => {
      const plain = await one(request(target, 'Connection: close\r\n'));
      const h2c = await one(request(target, H2C));
      expect(h2c.status, h2c.body).toBe(plain.status);
      expect(h2c.headers['content-type']).toBe(plain.headers['content-type']);
      expect(h2c.body).not.toContain('Sec-WebSocket');
      if (target === '/status') expect(JSON.parse(h2c.body)).toHaveProperty('clients', 0);
      if (target === '/healthz') expect(h2c.body).toBe('ok\n');
      if (target === '/metrics') expect(h2c.body).toContain('krx_');
      if (target === '/nothing-here') expect(codeOf(h2c)).toBe('not_found');
    },
  );

  it('keeps the connection alive: requests after it, with or without Upgrade, are answered in order, then it closes on Connection: close', async () => {
    const r = await exchange(port, request('/healthz', H2C) + request('/status') + request('/healthz', H2C) + request('/readyz', 'Connection: close\r\n'), 4);
    expect(r.responses.map((x) => x.status)).toEqual([200, 200, 200, 200]);
    expect(r.responses.map((x) => x.body.slice(0, 6))).toEqual(['ok\n', r.responses[1]!.body.slice(0, 6), 'ok\n', 'ready\n']);
    expect(JSON.parse(r.responses[1]!.body)).toHaveProperty('clients');
    expect(r.responses.map((x) => x.headers.connection)).toEqual(['keep-alive', 'keep-alive', 'keep-alive', 'close']);
    expect(r.closed).toBe(true);
  });

  it('stays open after its answer when the client keeps it alive', async () => {
    const r = await exchange(port, request('/healthz', H2C), 1, { settleMs: 300 });
    expect(r.responses[0]?.headers.connection).toBe('keep-alive');
    expect(r.closed).toBe(false);
  });

  it('waits its turn behind earlier pipelined requests still being answered', async () => {
    // /metrics and /status answer after an await: their answers are still pending when the h2c request is read.
    const r = await exchange(
      port,
      request('/metrics') + request('/status') + request('/healthz', H2C) + request('/symbols?q=000002', H2C) + request('/healthz', 'Connection: close\r\n'),
      5,
    );
    expect(r.responses.map((x) => x.status)).toEqual([200, 200, 200, 200, 200]);
    expect(r.responses[0]!.body).toContain('krx_');
    expect(JSON.parse(r.responses[1]!.body)).toHaveProperty('clients');
    expect(r.responses[2]!.body).toBe('ok\n');
    expect(JSON.parse(r.responses[3]!.body).symbols[0].code).toBe('000002');
    expect(r.responses[4]!.body).toBe('ok\n');
    expect(r.closed).toBe(true);
  });

  it('is not cut by the keep-alive timeout the earlier answers left running, however long its own answer takes', async () => {
    const respond = h.onDemand.respond;
    // node:http times an idle connection for keepAliveTimeout plus 1 s (its margin against resets): 1,001 ms here.
    h.server.keepAliveTimeout = 1;
    h.onDemand.respond = async (id, params) => {
      await new Promise((r) => setTimeout(r, 1300));
      return respond(id, params);
    };
    try {
      // /healthz is answered after the h2c request was read; once written, node:http times the idle connection.
      const r = await exchange(port, request('/healthz') + request('/api/v2/market/stocks/kospi/005930/master', `${H2C}Connection: close\r\n`), 2);
      expect(r.responses.map((x) => x.status)).toEqual([200, 200]);
      expect(JSON.parse(r.responses[1]!.body)).toHaveProperty('data');
    } finally {
      h.server.keepAliveTimeout = 5000;
      h.onDemand.respond = respond;
    }
  });

  it('answers 60 pipelined h2c requests in order', async () => {
    const n = 60;
    const r = await exchange(port, request('/healthz', H2C).repeat(n - 1) + request('/healthz', 'Connection: close\r\n'), n);
    expect(r.responses.length).toBe(n);
    expect(r.responses.every((x) => x.status === 200 && x.body === 'ok\n')).toBe(true);
    expect(r.closed).toBe(true);
  });

  it('closes after answering an HTTP/1.0 request', async () => {
    const r = await exchange(port, request('/healthz', 'Connection: Upgrade\r\nUpgrade: h2c\r\n', { version: '1.0', host: false }), 1, { settleMs: 1000 });
    expect(r.responses.map((x) => [x.status, x.body, x.headers.connection])).toEqual([[200, 'ok\n', 'close']]);
    expect(r.closed).toBe(true);
  });

  it('meets the checks of every request: no Host on HTTP/1.1 is a 400, another method a 405, a bad target a 400, all coded', async () => {
    const hostless = await one(request('/status', H2C, { host: false }));
    expect([hostless.status, codeOf(hostless)]).toEqual([400, 'bad_request']);
    expect(hostless.body).toContain('Host');
    const post = await exchange(
      port,
      request('/status', `${H2C}Content-Length: 5\r\n`, { method: 'POST' }) + 'hello' + request('/healthz', 'Connection: close\r\n'),
      2,
    );
    expect(post.responses.map((x) => [x.status, codeOf(x) ?? x.body])).toEqual([
      [405, 'method_not_allowed'],
      [200, 'ok\n'],
    ]);
    const bad = await one(request('/ws%zz', H2C));
    expect([bad.status, codeOf(bad)]).toEqual([400, 'bad_request']);
  });

  it('a plain GET of /ws with Upgrade: h2c is the probe: 426 upgrade_required, as without it', async () => {
    const r = await one(request('/ws', H2C));
    expect([r.status, codeOf(r), r.headers.upgrade]).toEqual([426, 'upgrade_required', 'websocket']);
  });

  it('a WebSocket upgrade on another path is refused 404 not_found, coded', async () => {
    for (const target of ['/status', '/', '/ws/other']) {
      const r = await one(request(target, WS));
      expect([r.status, codeOf(r)]).toEqual([404, 'not_found']);
    }
  });

  it('an Upgrade offering websocket among others opens a WebSocket', async () => {
    const r = await one(request('/ws', WS.replace('Upgrade: websocket', 'Upgrade: h2c, websocket')));
    expect(r.status).toBe(101);
  });
});

describe('a WebSocket upgrade meets the checks of every request', () => {
  it('is accepted with Host on HTTP/1.1', async () => {
    expect((await one(request('/ws', WS))).status).toBe(101);
  });

  it('without Host on HTTP/1.1 is a 400 bad_request, as a plain GET of /ws is', async () => {
    const up = await one(request('/ws', WS, { host: false }));
    const plain = await one(request('/ws', 'Connection: close\r\n', { host: false }));
    for (const r of [up, plain]) {
      expect([r.status, codeOf(r)]).toEqual([400, 'bad_request']);
      expect(r.body).toContain('an HTTP/1.1 request needs a Host header');
    }
  });

  it('on HTTP/1.0 is a 400 bad_request (RFC 6455 needs HTTP/1.1), with or without Host, as a plain GET of /ws is', async () => {
    for (const host of [true, false]) {
      const up = await one(request('/ws', WS, { version: '1.0', host }));
      const plain = await one(request('/ws', '', { version: '1.0', host }));
      for (const r of [up, plain]) {
        expect([r.status, codeOf(r)]).toEqual([400, 'bad_request']);
        expect(r.body).toContain('needs HTTP/1.1');
      }
    }
  });
});

describe('the plain GET of /ws and the upgrade read a target alike', () => {
  /** What a plain GET of `target` gets, and what an upgrade of it gets (426 and 101 both mean "would be accepted"). */
  async function both(target: string): Promise<{ plain: [number, string | undefined]; upgrade: [number, string | undefined] }> {
    const plain = await one(request(target, 'Connection: close\r\n'));
    const upgrade = await one(request(target, WS));
    return { plain: [plain.status, codeOf(plain)], upgrade: [upgrade.status, codeOf(upgrade)] };
  }

  it('the absolute form http://x/ws: the plain GET is 426, the upgrade is accepted', async () => {
    expect(await both('http://x/ws')).toEqual({ plain: [426, 'upgrade_required'], upgrade: [101, undefined] });
  });

  it('/ws%zz (a broken escape in the path): 400 bad_request both ways', async () => {
    expect(await both('/ws%zz')).toEqual({ plain: [400, 'bad_request'], upgrade: [400, 'bad_request'] });
  });

  it('/ws?token=%zz (a broken escape in the query): 400 bad_request both ways', async () => {
    expect(await both('/ws?token=%zz')).toEqual({ plain: [400, 'bad_request'], upgrade: [400, 'bad_request'] });
  });

  it.each([
    '/ws',
    '/ws?token=abc',
    'http://x/ws?token=abc',
    'https://other.example:8443/ws',
    '/ws/../ws',
    '/ws?x=1',
    'http://x/ws?token=a&token=b',
    '/ws?',
    '//ws',
    '/%77s',
    '/ws/',
    'http://x/ws%zz',
    '/ws?q=%',
    'http://[/ws',
  ])('agrees on %s', async (target) => {
    const { plain, upgrade } = await both(target);
    if (plain[0] === 426) expect(upgrade).toEqual([101, undefined]);
    else expect(upgrade).toEqual(plain);
  });
});
