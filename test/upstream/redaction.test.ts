import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { UpstreamClient } from '../../src/upstream/client.js';
import { UpstreamError } from '../../src/upstream/errors.js';
import { sendJson, startServer, type TestServer } from './helpers.js';

const KEY = 'sk-live-7f3a9c2e11d04b6b';
const LISTS = { marketcode: 'kospi' };

let server: TestServer;

beforeEach(async () => {
  server = await startServer();
});
afterEach(async () => {
  await server.close();
});

/** Runs calls that succeed and fail in every way, collecting log lines and errors. */
async function exercise(secrets: string[]): Promise<{ lines: string[]; errors: UpstreamError[] }> {
  const lines: string[] = [];
  const logger = createLogger({ level: 'debug', secrets, destination: { write: (s: string) => void lines.push(s) } });
  const client = new UpstreamClient({ baseUrl: server.url, apiKey: KEY, logger, timeoutMs: 150, retries: 0 });
  const errors: UpstreamError[] = [];
  const scenarios: [string, (res: import('node:http').ServerResponse, req: import('node:http').IncomingMessage) => void][] = [
    ['ok', (res) => sendJson(res, 200, { isuLists: [{ isuSrtCd: '005930', trdPrc: 1 }, { trdPrc: 2 }] })],
    // an upstream that echoes the key it was sent
    ['401', (res, req) => sendJson(res, 401, { message: `Invalid authentication credentials: ${String(req.headers.apikey)}` })],
    ['500', (res, req) => sendJson(res, 500, `<pre>upstream failed for key ${String(req.headers.apikey)}</pre>`)],
    ['malformed', (res, req) => sendJson(res, 200, `{"isuLists": "${String(req.headers.apikey)}`)],
    ['not an array', (res) => sendJson(res, 200, { isuLists: 1 })],
    ['timeout', () => undefined],
    ['reset', (_res, req) => req.socket.destroy()],
  ];
  try {
    for (const [, handler] of scenarios) {
      server.handle((req, res) => handler(res, req));
      try {
        await client.call('v3.realtime.multiquote.lists', LISTS);
      } catch (err) {
        expect(err).toBeInstanceOf(UpstreamError);
        errors.push(err as UpstreamError);
      }
    }
    // a refusal before any request, too
    await client.call('v3.realtime.multiquote.lists', { marketcode: 'kospi', apikey: KEY }).catch((err: UpstreamError) => errors.push(err));
  } finally {
    await client.close();
  }
  return { lines, errors };
}

function expectNoKey(lines: string[], errors: UpstreamError[]): void {
  for (const line of lines) expect(line).not.toContain(KEY);
  for (const err of errors) {
    expect(err.message).not.toContain(KEY);
    expect(err.stack ?? '').not.toContain(KEY);
    expect(JSON.stringify(err)).not.toContain(KEY);
    expect(inspect(err, { depth: 6 })).not.toContain(KEY);
  }
}

describe('the API key never leaks', () => {
  it('into log lines or errors, even without the logger scrubbing it', async () => {
    const { lines, errors } = await exercise([]);
    expect(server.seen.every((s) => s.headers.apikey === KEY)).toBe(true);
    expect(errors.map((e) => e.code)).toStrictEqual([
      'unauthorized',
      'upstream_error',
      'malformed_body',
      'malformed_body',
      'timeout',
      'network',
      'invalid_request',
    ]);
    // the calls were logged at debug, with their paths, and the dropped row at warn
    expect(lines.filter((l) => l.includes('"msg":"upstream call"'))).toHaveLength(1);
    expect(lines.filter((l) => l.includes('"msg":"upstream call failed"'))).toHaveLength(7);
    expect(lines.some((l) => l.includes('"path":"/v3/market/realtime/kospi/multiquote/stocks/lists"'))).toBe(true);
    expect(lines.filter((l) => l.includes('"msg":"upstream rows dropped"') && l.includes('"dropped":1'))).toHaveLength(1);
    expectNoKey(lines, errors);
  });

  it('with the logger configured with the key as a secret', async () => {
    const { lines, errors } = await exercise([KEY]);
    expect(lines.length).toBeGreaterThan(8);
    expectNoKey(lines, errors);
  });

  it('through pino path redaction of header objects', () => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'debug', destination: { write: (s: string) => void lines.push(s) } });
    logger.info({ headers: { apikey: KEY, accept: 'application/json' } }, 'request');
    logger.info({ req: { headers: { apikey: KEY } } }, 'request');
    logger.info({ apiKey: KEY }, 'options');
    expect(lines).toHaveLength(3);
    for (const line of lines) {
      expect(line).not.toContain(KEY);
      expect(line).toContain('[REDACTED]');
    }
    expect(JSON.parse(lines[0]!).headers).toStrictEqual({ apikey: '[REDACTED]', accept: 'application/json' });
  });
});
