import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { request, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Authenticator } from '../../src/access/auth.js';
import { resolveUnder } from '../../src/http/static.js';
import { Client, startHarness, type Harness } from '../gateway/harness.js';

const FAKE_KEY = 'FAKE-API-KEY-http-51ab';

interface Res {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A raw HTTP request (paths are sent as given, unlike fetch, which normalises `..`). */
function call(base: string, path: string, opts: { method?: string; headers?: Record<string, string> } = {}): Promise<Res> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path, method: opts.method ?? 'GET', headers: opts.headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

const bodies: string[] = [];
let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** Asserts that `path` is refused with 400 `invalid_params` and exactly `message`. */
async function expectInvalidParams(path: string, message: string): Promise<void> {
  const r = await get(path);
  expect(r.status, path).toBe(400);
  expect((JSON.parse(r.body) as { error: unknown }).error, path).toEqual({ code: 'invalid_params', message });
}

async function get(path: string, opts: { method?: string; headers?: Record<string, string> } = {}): Promise<Res> {
  const r = await call(h!.httpUrl, path, opts);
  bodies.push(r.body, JSON.stringify(r.headers));
  return r;
}

describe('routes', () => {
  it('serves the placeholder page, health and readiness', async () => {
    let ready = false;
    h = await startHarness({}, { ready: () => ready, version: '9.9.9' });
    const page = await get('/');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.body).toContain('krx-bridge is running');
    expect(page.body).toContain('href="/status"');
    expect(page.body).toContain('9.9.9');
    expect((await get('/healthz')).body).toBe('ok\n');
    expect((await get('/readyz')).status).toBe(503);
    ready = true;
    expect((await get('/readyz')).status).toBe(200);
    const head = await get('/', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
    expect((await get('/nope')).status).toBe(404);
  });

  it('allows only GET and HEAD', async () => {
    h = await startHarness();
    for (const method of ['POST', 'PUT', 'DELETE']) {
      const r = await get('/status', { method });
      expect(r.status).toBe(405);
      expect(r.headers.allow).toBe('GET, HEAD');
      expect(JSON.parse(r.body).error.code).toBe('method_not_allowed');
    }
  });

  it('/status merges the provider with gateway counts', async () => {
    h = await startHarness({}, { status: () => ({ epoch: 'e1', budget: { remaining: 10 } }) });
    const c = await Client.connect(h.url);
    await c.request({ op: 'subscribe', id: 1, channel: 'quote', market: 'kospi', codes: ['000001', '000002'] });
    await c.request({ op: 'subscribe', id: 2, channel: 'ohlc', market: 'kospi', codes: ['*'] });
    const r = JSON.parse((await get('/status')).body);
    expect(r).toMatchObject({
      epoch: 'e1',
      budget: { remaining: 10 },
      clients: 1,
      topics: 3,
      behind: 0,
      subscribers: { 'quote.kospi': { sessions: 1, wildcards: 0, topics: 2 }, 'ohlc.kospi': { sessions: 1, wildcards: 1, topics: 0 } },
    });
    c.close();
  });

  it('/metrics renders Prometheus text with the gateway metrics', async () => {
    h = await startHarness();
    const c = await Client.connect(h.url);
    const r = await get('/metrics');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/^text\/plain/);
    expect(r.body).toMatch(/^krx_clients 1$/m);
    expect(r.body).toContain('krx_http_requests_total');
    c.close();
  });

  it('/symbols searches the directory without any upstream call', async () => {
    h = await startHarness();
    const r = JSON.parse((await get('/symbols?q=%EC%BD%94%EC%8A%A4%EB%8B%A5&limit=3')).body);
    expect(r.symbols).toHaveLength(3);
    expect(r.symbols[0]).toMatchObject({ market: 'kosdaq', code: '500001' });
    const k = JSON.parse((await get(`/symbols?q=${encodeURIComponent('코스피000042')}&market=kospi`)).body);
    expect(k.symbols).toEqual([{ market: 'kospi', code: '000042', stdCode: 'KR7000042003', name: '코스피000042', abbr: '코스피000042' }]);
    expect(JSON.parse((await get(`/symbols?q=${encodeURIComponent('코스피000042')}&market=kosdaq`)).body).symbols).toEqual([]);
    // No query: the first symbols in list order (browsing).
    expect(JSON.parse((await get('/symbols?q=&limit=3')).body).symbols.map((s: { code: string }) => s.code)).toEqual(['000001', '000002', '000003']);
    expect((await get('/symbols?q=1&market=nyse')).status).toBe(400);
    expect((await get('/symbols?q=1&limit=0')).status).toBe(400);
    expect((await get('/symbols?q=1&limit=x')).status).toBe(400);
    // A misspelt parameter, or one given twice, is refused: not the first symbols of the list in place of a search.
    await expectInvalidParams('/symbols?qu=005930', '1 unknown query parameter; this takes q, market, limit, offset');
    await expectInvalidParams('/symbols?q=1&limit=3&limit=5', 'limit is given more than once');
    // The token too: access control would read the first, the client may have meant the other.
    await expectInvalidParams('/symbols?q=1&token=a&token=b', 'token is given more than once');
    expect(h.onDemand.calls).toHaveLength(0);
  });
});

describe('static directory', () => {
  it('serves files with content types, index.html for /, and nothing outside the directory', async () => {
    const base = mkdtempSync(join(tmpdir(), 'krx-static-'));
    const root = join(base, 'www');
    mkdirSync(join(root, 'css'), { recursive: true });
    writeFileSync(join(root, 'index.html'), '<h1>demo</h1>');
    writeFileSync(join(root, 'app.js'), 'console.log(1)');
    writeFileSync(join(root, 'css', 'x.css'), 'body{}');
    writeFileSync(join(base, 'secret.txt'), 'top secret');
    symlinkSync(join(base, 'secret.txt'), join(root, 'link.txt'));
    h = await startHarness({}, { staticDir: root });
    const index = await get('/');
    expect(index.body).toBe('<h1>demo</h1>');
    expect(index.headers['content-type']).toBe('text/html; charset=utf-8');
    const js = await get('/app.js');
    expect([js.status, js.headers['content-type'], js.body]).toEqual([200, 'text/javascript; charset=utf-8', 'console.log(1)']);
    expect((await get('/css/x.css')).headers['content-type']).toBe('text/css; charset=utf-8');
    expect((await get('/css/')).status).toBe(404);
    for (const p of ['/../secret.txt', '/%2e%2e/secret.txt', '/css/..%2f..%2fsecret.txt', '/link.txt', '/..\\secret.txt', '/%00', '/%zz']) {
      const r = await get(p);
      // A NUL, a backslash or a broken escape is a malformed target (400); the others name nothing served (404).
      expect(r.status, p).toBe(p === '/%00' || p === '/%zz' || p.includes('\\') ? 400 : 404);
      expect(r.body).not.toContain('top secret');
    }
    expect((await get('/healthz')).body).toBe('ok\n');
  });

  it('resolveUnder keeps paths inside the root', () => {
    expect(resolveUnder('/srv/www', '/a/b.js')).toBe('/srv/www/a/b.js');
    expect(resolveUnder('/srv/www', '/a/../b.js')).toBe('/srv/www/b.js');
    expect(resolveUnder('/srv/www', '/')).toBe('/srv/www');
    expect(resolveUnder('/srv/www', '/../x')).toBeUndefined();
    expect(resolveUnder('/srv/www', '/%2e%2e/%2e%2e/etc/passwd')).toBeUndefined();
    expect(resolveUnder('/srv/www', '/../www-other/x')).toBeUndefined();
    expect(resolveUnder('/srv/www', '/a%00')).toBeUndefined();
    expect(resolveUnder('/srv/www', '/%E0%A4%A')).toBeUndefined();
  });
});

describe('REST passthrough', () => {
  it('validates against the catalogue and answers from the on-demand cache', async () => {
    h = await startHarness();
    const r = await get('/api/v2/market/stocks/kospi/005930/master');
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body)).toEqual({
      ts: 1_700_000_000_000,
      cached: false,
      data: { endpoint: 'v2.stocks.master', params: { marketcode: 'kospi', issuecode: '005930' } },
    });
    await get('/api/v3/market/closed/kosdaq/247540/history?trnsmCycleTpCd=W&inqStrtDd=20260101&inqEndDd=20260301&reqCnt=5');
    await get('/api/v2/market/multiquote/stocks/kospi/price?isuCd=005930,000660');
    expect(h.onDemand.calls.slice(1)).toEqual([
      {
        id: 'v3.closed.history',
        params: { marketcode: 'kosdaq', issuecode: '247540', trnsmCycleTpCd: 'W', inqStrtDd: '20260101', inqEndDd: '20260301', reqCnt: 5 },
      },
      { id: 'v2.multiquote.price', params: { marketcode: 'kospi', isuCd: ['005930', '000660'] } },
    ]);
    const bad = await get('/api/v2/market/stocks/kospi/005930/history?trnsmCycleTpCd=D&inqStrtDd=2026&inqEndDd=20260301');
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body).error.code).toBe('invalid_params');
    expect((await get('/api/v2/market/stocks/nyse/005930/master')).status).toBe(400);
    // A parameter given twice, or in the path and the query: refused, not the last one taken or the path's code replaced.
    await expectInvalidParams('/api/v2/market/stocks/kospi/005930/master?issuecode=000660', 'issuecode is in the path; it cannot be given in the query too');
    await expectInvalidParams('/api/v2/market/stocks/kospi/005930/history?trnsmCycleTpCd=D&trnsmCycleTpCd=W', 'trnsmCycleTpCd is given more than once');
    await expectInvalidParams('/api/v2/market/stocks/kospi/005930/master?token=a&token=b', 'token is given more than once');
    const missing = await get('/api/v2/market/nothing/here');
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.body).error.code).toBe('not_found');
    expect(h.onDemand.calls).toHaveLength(3);
  });

  it('maps upstream errors to HTTP statuses without leaking the API key', async () => {
    h = await startHarness();
    const cases: [string, number, string][] = [
      ['invalid_code', 400, 'invalid_code'],
      ['not_provided_now', 400, 'not_provided_now'],
      ['rate_limited', 429, 'upstream_rate_limited'],
      ['unauthorized', 502, 'upstream_unavailable'],
      ['timeout', 502, 'upstream_unavailable'],
      ['upstream_error', 502, 'upstream_unavailable'],
      ['network', 502, 'upstream_unavailable'],
      ['malformed_body', 502, 'upstream_unavailable'],
      ['not_found', 404, 'not_found'],
      ['bad_request', 400, 'invalid_params'],
    ];
    let next = '';
    h.onDemand.respond = async () => {
      throw Object.assign(new Error(`upstream said no to apikey=${FAKE_KEY}`), { code: next, resetAt: Date.now() + 30_000, key: FAKE_KEY });
    };
    for (const [code, status, wire] of cases) {
      next = code;
      const r = await get('/api/v3/market/realtime/kospi/stocks/005930/price');
      expect(r.status, code).toBe(status);
      const body = JSON.parse(r.body);
      expect(body.error.code).toBe(wire);
      expect(typeof body.error.message).toBe('string');
      if (code === 'rate_limited') expect(Number(r.headers['retry-after'])).toBeGreaterThanOrEqual(29);
    }
    const all = bodies.join('\n');
    expect(all).not.toContain(FAKE_KEY);
    expect(all).not.toContain('apikey');
  });

  it('limits requests per client', async () => {
    h = await startHarness({}, { apiPerMinute: 3 });
    for (let i = 0; i < 3; i++) expect((await get('/api/v2/market/stocks/kospi/005930/master')).status).toBe(200);
    const r = await get('/api/v2/market/stocks/kospi/005930/master');
    expect(r.status).toBe(429);
    expect(JSON.parse(r.body).error.code).toBe('rate_limited');
    expect(h.onDemand.calls).toHaveLength(3);
    expect((await get('/status')).status).toBe(200);
  });

  it('times the per-address and per-client rates on the monotonic clock: a wall clock stepped a minute on refills nothing, the monotonic minute does', async () => {
    let wall = Date.parse('2026-11-24T01:00:00Z');
    let mono = 1_000;
    h = await startHarness({}, { apiPerMinute: 2, infoPerMinute: 2, now: () => wall, monotonic: () => mono });
    const api = () => get('/api/v2/market/stocks/kospi/005930/master');
    for (const path of ['/status', '/status']) expect((await get(path)).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await api()).status).toBe(200);
    expect((await get('/status')).status).toBe(429);
    expect((await api()).status).toBe(429);
    // An NTP step, a resumed VM: the wall clock jumps an hour.
    wall += 3_600_000;
    expect((await get('/status')).status).toBe(429);
    expect((await api()).status).toBe(429);
    mono += 60_000;
    expect((await get('/status')).status).toBe(200);
    expect((await api()).status).toBe(200);
  });

  it('uses the gateway access control when enabled; the token is not an upstream parameter', async () => {
    const auth = new Authenticator({ tokens: ['http-token-1', 'http-token-2'] });
    h = await startHarness({ auth }, { auth, apiPerMinute: 2 });
    const denied = await get('/api/v2/market/stocks/kospi/005930/master');
    expect(denied.status).toBe(401);
    expect(JSON.parse(denied.body).error.code).toBe('unauthorized');
    expect((await get('/api/v2/market/stocks/kospi/005930/master?token=http-token-1')).status).toBe(200);
    expect((await get('/api/v2/market/stocks/kospi/005930/master', { headers: { Authorization: 'Bearer http-token-1' } })).status).toBe(200);
    expect(h.onDemand.calls[0]!.params).toEqual({ marketcode: 'kospi', issuecode: '005930' });
    // The limit is per token, not per address.
    expect((await get('/api/v2/market/stocks/kospi/005930/master?token=http-token-1')).status).toBe(429);
    expect((await get('/api/v2/market/stocks/kospi/005930/master?token=http-token-2')).status).toBe(200);
  });

  it('counts requests against their address before checking the token: guessing is rate-limited too', async () => {
    const auth = new Authenticator({ tokens: ['http-token-1'] });
    h = await startHarness({ auth }, { auth, apiPerMinute: 3, recordings: { dir: mkdtempSync(join(tmpdir(), 'krx-rec-')) } });
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await get(`/api/v2/market/stocks/kospi/005930/master?token=guess-${i}`)).status);
    const over = await get('/api/v2/market/stocks/kospi/005930/master?token=guess-3');
    expect([...statuses, over.status]).toEqual([401, 401, 401, 429]);
    expect(JSON.parse(over.body).error).toEqual({ code: 'rate_limited', message: 'at most 3 requests per minute' });
    expect(over.headers['retry-after']).toBe('1');
    // The same count for the recordings, and for a valid token from that address: it is refused before it is checked.
    expect((await get('/recordings', { headers: { Authorization: 'Bearer guess-4' } })).status).toBe(429);
    expect((await get('/api/v2/market/stocks/kospi/005930/master?token=http-token-1')).status).toBe(429);
    expect(h.onDemand.calls).toHaveLength(0);
  });

  it('counts /recordings guesses too, and valid tokens against their token, not their address', async () => {
    const auth = new Authenticator({ tokens: ['http-token-1'] });
    h = await startHarness({ auth }, { auth, apiPerMinute: 2, recordings: { dir: mkdtempSync(join(tmpdir(), 'krx-rec-')) } });
    // A valid token spends its own minute, and gives back its address's.
    expect((await get('/recordings?token=http-token-1')).status).toBe(200);
    expect((await get('/api/v2/market/stocks/kospi/005930/master?token=http-token-1')).status).toBe(200);
    expect((await get('/recordings?token=http-token-1')).status).toBe(429);
    // The address's minute is whole: two guesses are refused as such, the third is over the rate.
    const guesses = [];
    for (let i = 0; i < 3; i++) guesses.push((await get('/recordings', { headers: { Authorization: `Bearer guess-${i}` } })).status);
    expect(guesses).toEqual([401, 401, 429]);
  });
});
