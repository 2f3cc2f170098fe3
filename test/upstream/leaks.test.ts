import { createServer as createTlsServer } from 'node:tls';
import { checkServerIdentity } from 'node:tls';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger, cutScrubbed, MIN_SECRET_PREFIX, scrubSecrets } from '../../src/log.js';
import { jsonErrorText } from '../../src/upstream/body.js';
import { UpstreamClient } from '../../src/upstream/client.js';
import { MAX_QUOTED, UpstreamError, errorFromResponse, upstreamText } from '../../src/upstream/errors.js';
import { networkErrorCode } from '../../src/upstream/transport.js';
import { sendJson, startServer, type TestServer } from './helpers.js';

/**
 * What the upstream's answers and failures put in an error's message (the
 * text every subscriber of a stale feed and the public `/status` see): never
 * the API key or a part of it, never the upstream's host, address or port.
 */

const KEY = 'sk-live-0123456789abcdefghijklmnopqrstuv';
const LISTS = { marketcode: 'kospi' };
const ID = 'v3.realtime.multiquote.lists';

/** Every piece of the key `MIN_SECRET_PREFIX` characters long found in `text`. */
function keyParts(text: string, key = KEY): string[] {
  const found: string[] = [];
  for (let i = 0; i + MIN_SECRET_PREFIX <= key.length; i++) {
    const part = key.slice(i, i + MIN_SECRET_PREFIX);
    if (text.includes(part)) found.push(part);
  }
  return found;
}

/** The `reason` a feed shows for a failed poll (src/poller/feed.ts: `${code}: ${message}`, cut to 200). */
function feedReason(err: UpstreamError): string {
  return `${err.code}: ${err.message}`.slice(0, 200);
}

/** Every text of `err` a client can see: the feed reason and the wire form. */
function clientTexts(err: UpstreamError): string[] {
  return [err.message, feedReason(err), JSON.stringify(err), JSON.stringify({ ...err })];
}

describe('an API key the upstream echoes in an error', () => {
  it('is scrubbed before the text is cut: the reported 503 shows no part of it', () => {
    // The outsider's case: 120 characters, then the key straddling the 160-character cut.
    const body = JSON.stringify({ message: `${'A'.repeat(120)} key=${KEY} rejected` });
    const err = errorFromResponse(503, body, 'v2.multiquote.lists', { secrets: [KEY] });
    expect(err.code).toBe('upstream_error');
    expect(err.message).toBe(`v2.multiquote.lists: HTTP 503 "${'A'.repeat(120)} key=[REDACTED] rejected"`);
    for (const t of clientTexts(err)) expect(keyParts(t)).toStrictEqual([]);
  });

  it('shows no part of the key wherever the cut falls', () => {
    fc.assert(
      fc.property(fc.nat(400), fc.string({ maxLength: 40 }), fc.boolean(), (pad, tail, asJson) => {
        const text = `${'x'.repeat(pad)}${KEY}${tail}`;
        const err = errorFromResponse(500, asJson ? JSON.stringify({ error: text }) : text, ID, { secrets: [KEY] });
        expect(upstreamText(text, [KEY]).length).toBeLessThanOrEqual(MAX_QUOTED);
        for (const t of clientTexts(err)) expect(keyParts(t)).toStrictEqual([]);
      }),
      { numRuns: 500 },
    );
  });

  it('is scrubbed where the upstream itself cut it short (a start of 8+ characters ending the text or before "...")', () => {
    expect(scrubSecrets(`key ${KEY.slice(0, 20)}`, [KEY])).toBe('key [REDACTED]');
    expect(scrubSecrets(`key ${KEY.slice(0, 12)}... is not valid`, [KEY])).toBe('key [REDACTED]... is not valid');
    expect(scrubSecrets(`key ${KEY.slice(0, 9)}\u2026`, [KEY])).toBe('key [REDACTED]\u2026');
    // Shorter starts, and starts followed by more text, are left: too common to tell apart.
    expect(scrubSecrets(`key ${KEY.slice(0, 7)}...`, [KEY])).toBe(`key ${KEY.slice(0, 7)}...`);
    expect(scrubSecrets(`key ${KEY.slice(0, 20)} rejected`, [KEY])).toBe(`key ${KEY.slice(0, 20)} rejected`);
    const err = errorFromResponse(401, JSON.stringify({ message: `bad key ${KEY.slice(0, 24)}...` }), ID, { secrets: [KEY] });
    expect(err.message).toBe(`${ID}: HTTP 401 "bad key [REDACTED]..."`);
  });

  it('cutScrubbed scrubs first, then cuts to at most max characters, and scrubs a start the cut leaves', () => {
    for (let max = 4; max < 80; max++) {
      for (let pad = 0; pad < 60; pad++) {
        const out = cutScrubbed(`${'y'.repeat(pad)}${KEY} and more`, max, [KEY]);
        expect(out.length).toBeLessThanOrEqual(max);
        expect(keyParts(out)).toStrictEqual([]);
      }
    }
    // A start of the key in a text cut short, with no whole key to match before the cut.
    expect(cutScrubbed(`${'y'.repeat(10)}${KEY.slice(0, 30)}zzzz`, 30, [KEY])).toBe(`${'y'.repeat(10)}[REDACTED]...`);
    expect(cutScrubbed('short', 30, [KEY])).toBe('short');
  });
});

describe('an API key the upstream echoes in a body that is not JSON', () => {
  it("leaves no part of it in the message: V8's excerpt of the body is dropped", () => {
    let message = '';
    try {
      JSON.parse(`x${KEY}`);
    } catch (err) {
      message = (err as Error).message;
    }
    // V8 quotes the start of the body, cut where it likes: `Unexpected token 'x', "xsk-live-0"... is not valid JSON`.
    expect(message).toMatch(/^Unexpected token 'x', "xsk-live-/);
    expect(jsonErrorText(message)).toBe("Unexpected token 'x' in JSON");
    expect(jsonErrorText('Unexpected token \'<\', ..."ey=sk-live-"... is not valid JSON')).toBe("Unexpected token '<' in JSON");
    expect(jsonErrorText('"sk-live-01" is not valid JSON')).toBe('not valid JSON');
    expect(jsonErrorText('Unexpected end of JSON input')).toBe('Unexpected end of JSON input');
    expect(jsonErrorText("Expected ',' or '}' after property value in JSON at position 187")).toBe(
      "Expected ',' or '}' after property value in JSON at position 187",
    );
  });
});

describe('the upstream API key through the client', () => {
  let server: TestServer;
  beforeEach(async () => {
    server = await startServer();
  });
  afterEach(async () => {
    await server.close();
  });

  async function failing(handler: Parameters<TestServer['handle']>[0], lines: string[] = []): Promise<UpstreamError> {
    server.handle(handler);
    const logger = createLogger({ level: 'debug', destination: { write: (s: string) => void lines.push(s) } });
    const client = new UpstreamClient({ baseUrl: server.url, apiKey: KEY, logger, retries: 0, timeoutMs: 2000 });
    try {
      await client.call(ID, LISTS);
    } catch (err) {
      expect(err).toBeInstanceOf(UpstreamError);
      return err as UpstreamError;
    } finally {
      await client.close();
    }
    throw new Error('the call succeeded');
  }

  it('never reaches a client or the log, in part, from a 503 that echoes it (logger not scrubbing)', async () => {
    const lines: string[] = [];
    const err = await failing((req, res) => sendJson(res, 503, { message: `${'A'.repeat(120)} key=${String(req.headers.apikey)} rejected` }), lines);
    expect(err.code).toBe('upstream_error');
    expect(err.message).toContain('key=[REDACTED] rejected');
    for (const t of [...clientTexts(err), ...lines]) expect(keyParts(t)).toStrictEqual([]);
  });

  it('never reaches a client from a 2xx body that is not JSON and starts with it', async () => {
    const err = await failing((req, res) => sendJson(res, 200, `x${String(req.headers.apikey)}`));
    expect(err.code).toBe('malformed_body');
    expect(err.message).toBe(`${ID}: body is not JSON (Unexpected token 'x' in JSON)`);
    for (const t of clientTexts(err)) expect(keyParts(t)).toStrictEqual([]);
  });

  it("never reaches the log from a dropped row's quoted value (cut short after 37 characters)", async () => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'debug', destination: { write: (s: string) => void lines.push(s) } });
    const client = new UpstreamClient({ baseUrl: server.url, apiKey: KEY, logger, retries: 0 });
    server.handle((req, res) =>
      sendJson(res, 200, {
        isuLists: [
          { isuSrtCd: '005930', trdPrc: 1 },
          { isuSrtCd: '000660', trdPrc: `price for ${String(req.headers.apikey)}` },
        ],
      }),
    );
    try {
      const r = await client.call(ID, LISTS);
      expect(r.dropped).toBe(1);
      expect(r.issues).toStrictEqual([{ index: 1, reason: 'trdPrc: "price for [REDACTED]... is not a valid number' }]);
      const dropped = lines.filter((l) => l.includes('"msg":"upstream rows dropped"'));
      expect(dropped).toHaveLength(1);
      for (const t of [...lines, JSON.stringify(r.issues)]) expect(keyParts(t)).toStrictEqual([]);
    } finally {
      await client.close();
    }
  });
});

describe("a failed connection's message names no host, address or port", () => {
  const HOST = 'upstream-secret-host.invalid';

  /** Calls through a client on `baseUrl`; returns the error and the log lines (debug, not scrubbing). */
  async function fail(baseUrl: string, timeoutMs = 3000): Promise<{ err: UpstreamError; lines: string[] }> {
    const lines: string[] = [];
    const logger = createLogger({ level: 'debug', destination: { write: (s: string) => void lines.push(s) } });
    const client = new UpstreamClient({ baseUrl, apiKey: KEY, logger, retries: 0, timeoutMs });
    try {
      await client.call(ID, LISTS);
    } catch (err) {
      expect(err).toBeInstanceOf(UpstreamError);
      return { err: err as UpstreamError, lines };
    } finally {
      await client.close();
    }
    throw new Error('the call succeeded');
  }

  /** The message, the feed reason and the wire form hold none of `words`; the key is in no text, log lines included. */
  function expectClean(err: UpstreamError, lines: string[], words: string[]): void {
    for (const t of clientTexts(err)) {
      for (const w of words) expect(t).not.toContain(w);
      expect(t).not.toMatch(/\d+\.\d+\.\d+\.\d+|:\d{2,5}\b|\[[0-9a-f:]+\]/i);
      expect(keyParts(t)).toStrictEqual([]);
    }
    for (const l of lines) expect(keyParts(l)).toStrictEqual([]);
  }

  /** A port nothing listens on. */
  async function closedPort(): Promise<number> {
    const s = await startServer();
    const port = Number(new URL(s.url).port);
    await s.close();
    return port;
  }

  it('refused: `network error: ECONNREFUSED`; the address only in the log', async () => {
    const port = await closedPort();
    const { err, lines } = await fail(`http://127.0.0.1:${port}`);
    expect(err.code).toBe('network');
    expect(err.message).toBe(`${ID}: network error: ECONNREFUSED`);
    expect(feedReason(err)).toBe(`network: ${ID}: network error: ECONNREFUSED`);
    expectClean(err, lines, ['127.0.0.1', String(port)]);
    // The operator's log keeps the whole story.
    expect(err.detail).toContain(`127.0.0.1:${port}`);
    const failed = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((o) => o.msg === 'upstream call failed');
    expect(failed?.detail).toContain(`127.0.0.1:${port}`);
    // `detail` is not part of the error's own enumerable fields or wire form.
    expect(Object.keys(err)).not.toContain('detail');
    expect(JSON.stringify(err)).not.toContain('detail');
  });

  it('DNS failure: `network error: ENOTFOUND` (or EAI_AGAIN), never the host name', async () => {
    const { err, lines } = await fail(`http://${HOST}:18199`);
    expect(err.code === 'network' || err.code === 'timeout').toBe(true);
    expect(err.message).toMatch(
      new RegExp(`^${ID.replace(/\./g, '\\.')}: (network error: (ENOTFOUND|EAI_AGAIN|EAI_FAIL|EAI_NONAME)|no complete response within 3000 ms)$`),
    );
    expectClean(err, lines, [HOST, 'upstream-secret-host', '18199', 'getaddrinfo']);
  });

  it('reset by the upstream: `network error: UND_ERR_SOCKET`', async () => {
    const server = await startServer();
    try {
      server.handle((req) => req.socket.destroy());
      const { err, lines } = await fail(server.url);
      expect(err.code).toBe('network');
      expect(err.message).toBe(`${ID}: network error: UND_ERR_SOCKET`);
      expectClean(err, lines, [new URL(server.url).port]);
    } finally {
      await server.close();
    }
  });

  it('no answer: a timeout naming the limit only', async () => {
    const server = await startServer();
    try {
      server.handle(() => undefined);
      const { err, lines } = await fail(server.url, 150);
      expect(err.code).toBe('timeout');
      expect(err.message).toBe(`${ID}: no complete response within 150 ms`);
      expectClean(err, lines, [new URL(server.url).port]);
    } finally {
      await server.close();
    }
  });

  it("TLS to a server that does not speak it: the OpenSSL code, not OpenSSL's text", async () => {
    const server = await startServer();
    try {
      const { err, lines } = await fail(server.url.replace('http:', 'https:'));
      expect(err.code).toBe('network');
      expect(err.message).toMatch(new RegExp(`^${ID.replace(/\./g, '\\.')}: network error: [A-Z][A-Z0-9_]+$`));
      expect(err.message).not.toMatch(/SSL routines|openssl/);
      expectClean(err, lines, [new URL(server.url).port]);
    } finally {
      await server.close();
    }
  });

  it('TLS handshake cut off by the upstream: an error code only', async () => {
    const tls = createTlsServer((s) => s.destroy());
    tls.on('connection', (s) => s.destroy());
    await new Promise<void>((resolve) => tls.listen(0, '127.0.0.1', resolve));
    const { port } = tls.address() as AddressInfo;
    try {
      const { err, lines } = await fail(`https://127.0.0.1:${port}`);
      expect(err.code).toBe('network');
      expect(err.message).toMatch(new RegExp(`^${ID.replace(/\./g, '\\.')}: network error(: [A-Z][A-Z0-9_]+)?$`));
      expectClean(err, lines, [String(port)]);
    } finally {
      await new Promise<void>((resolve) => tls.close(() => resolve()));
    }
  });

  it('networkErrorCode takes the code, never the text, of the errors Node and undici give', () => {
    // A certificate that does not name the host: Node's own error names the host in its text.
    const altname = checkServerIdentity(HOST, { subject: { CN: 'other.example' }, subjectaltname: 'DNS:other.example' } as never);
    expect(altname?.message).toContain(HOST);
    expect(networkErrorCode(altname)).toBe('ERR_TLS_CERT_ALTNAME_INVALID');
    // Happy eyeballs: an AggregateError with no code of its own, one per address tried.
    const attempts = [
      Object.assign(new Error(`connect ECONNREFUSED ::1:18199`), { code: 'ECONNREFUSED', address: '::1', port: 18199 }),
      Object.assign(new Error(`connect ECONNREFUSED 127.0.0.1:18199`), { code: 'ECONNREFUSED', address: '127.0.0.1', port: 18199 }),
    ];
    expect(networkErrorCode(new AggregateError(attempts, ''))).toBe('ECONNREFUSED');
    // A code in the cause only.
    expect(networkErrorCode(new Error(`fetch to ${HOST} failed`, { cause: Object.assign(new Error('x'), { code: 'ECONNRESET' }) }))).toBe('ECONNRESET');
    // Nothing that looks like a code: no code at all (the text is never used).
    expect(networkErrorCode(Object.assign(new Error(HOST), { code: `connect to ${HOST}` }))).toBeUndefined();
    expect(networkErrorCode(new Error(`getaddrinfo ENOTFOUND ${HOST}`))).toBeUndefined();
    expect(networkErrorCode('ECONNRESET')).toBeUndefined();
    // A cause cycle ends.
    const a = new Error('a') as Error & { cause?: unknown };
    a.cause = a;
    expect(networkErrorCode(a)).toBeUndefined();
  });
});
