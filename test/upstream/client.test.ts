import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Budget, nextReset } from '../../src/upstream/budget.js';
import { UpstreamClient, type CallEvent, type UpstreamClientOptions } from '../../src/upstream/client.js';
import { UpstreamError } from '../../src/upstream/errors.js';
import { ListReader } from '../../src/upstream/listread.js';
import { ERROR_BODIES } from '../../src/upstream/wire.js';
import { limits, sendJson, startServer, type TestServer } from './helpers.js';

const KEY = 'test-key-0123456789';
const T0 = Date.parse('2024-03-04T10:00:00+09:00');

let server: TestServer;
let client: UpstreamClient;
let clock: number;
let delays: number[];
let events: CallEvent[];

function makeClient(opts: Partial<UpstreamClientOptions> = {}): UpstreamClient {
  const c = new UpstreamClient({
    baseUrl: server.url,
    apiKey: KEY,
    now: () => clock,
    sleep: async (ms) => {
      delays.push(ms);
    },
    random: () => 0.5,
    ...opts,
  });
  c.on('call', (e) => events.push(e));
  return c;
}

async function failure(p: Promise<unknown>): Promise<UpstreamError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(UpstreamError);
  return err as UpstreamError;
}

const PRICE = { marketcode: 'kospi', isuCd: ['005930', '000660'] };
const LISTS = { marketcode: 'kosdaq' };

beforeEach(async () => {
  server = await startServer();
  clock = T0;
  delays = [];
  events = [];
  client = makeClient();
});

afterEach(async () => {
  await client.close();
  await server.close();
});

describe('UpstreamClient success', () => {
  it('calls a bare list endpoint and normalises its rows', async () => {
    server.handle((_req, res) =>
      sendJson(res, 200, { trdDd: 20220602, trdTm: '93039', isuLists: [{ isuSrtCd: '900110', trdPrc: 305 }] }, limits(50000, 49999)),
    );
    const r = await client.call('v3.realtime.multiquote.lists', LISTS);
    expect(server.seen.map((s) => s.url)).toStrictEqual(['/v3/market/realtime/kosdaq/multiquote/stocks/lists']);
    expect(r.endpoint.id).toBe('v3.realtime.multiquote.lists');
    expect(r.status).toBe(200);
    expect(r.rows).toStrictEqual([{ isuSrtCd: '900110', trdPrc: 305 }]);
    expect(r.data).toMatchObject({ trdDd: '20220602', trdTm: '093039' });
    expect(r.dropped).toBe(0);
    expect(r.receivedAt).toBe(T0);
    expect(r.ms).toBeGreaterThan(0);
    expect(events).toMatchObject([{ endpointId: 'v3.realtime.multiquote.lists', status: 200, dropped: 0, attempts: 1 }]);
    expect(events[0]).not.toHaveProperty('code');
  });

  it('calls a wrapped multi-quote endpoint, sending the key and the code list', async () => {
    server.handle((_req, res) =>
      sendJson(res, 200, {
        jsonrpc: '2.0',
        result: {
          isulist: [
            { isuSrtCd: '005930', trdPrc: 66700, trdTm: 9544500 },
            { isuSrtCd: '000660', trdPrc: 'x' },
          ],
        },
      }),
    );
    const r = await client.call('v3.realtime.multiquote.price', PRICE);
    const seen = server.seen[0]!;
    expect(seen.url).toBe('/v3/market/realtime/kospi/multiquote/stocks/price?isuCd=005930,000660');
    expect(seen.headers.apikey).toBe(KEY);
    expect(seen.headers.accept).toBe('application/json');
    expect(r.rows).toStrictEqual([{ isuSrtCd: '005930', trdPrc: 66700, trdTm: '09544500' }]);
    expect(r.dropped).toBe(1);
    expect(r.issues[0]).toMatchObject({ index: 1 });
    expect(events[0]).toMatchObject({ status: 200, dropped: 1 });
  });

  it('keeps a path prefix of the base URL and reuses connections', async () => {
    await client.close();
    client = makeClient({ baseUrl: `${server.url}/api/`, connections: 1 });
    server.handle((_req, res) => sendJson(res, 200, { jsonrpc: '2.0', result: { isuSrtCd: 'K1', trdPrc: 2669.78 } }));
    await client.call('v3.realtime.index.index', { marketcode: 'kospi', issuecode: 'K1' });
    await client.call('v3.realtime.index.index', { marketcode: 'kospi', issuecode: 'K1' });
    expect(server.seen.map((s) => s.url)).toStrictEqual(['/api/v3/market/realtime/index/kospi/K1/index', '/api/v3/market/realtime/index/kospi/K1/index']);
    expect(server.seen[1]!.port).toBe(server.seen[0]!.port);
  });
});

describe('UpstreamClient refusals before any request', () => {
  it('refuses parameters the entry does not accept, naming them', async () => {
    const codes = Array.from({ length: 21 }, (_, i) => String(i).padStart(6, '0'));
    const tooMany = await failure(client.call('v3.realtime.multiquote.price', { marketcode: 'kospi', isuCd: codes }));
    expect(tooMany.code).toBe('invalid_request');
    expect(tooMany.message).toBe('v3.realtime.multiquote.price: isuCd: at most 20 codes per call');
    expect(tooMany.retryable).toBe(false);

    const unknown = await failure(client.call('v3.realtime.multiquote.lists', { marketcode: 'kospi', foo: 1 }));
    expect(unknown.message).toBe('v3.realtime.multiquote.lists: unknown parameter foo');

    const market = await failure(client.call('v3.realtime.multiquote.lists', { marketcode: 'nyse' }));
    expect(market.message).toMatch(/^v3\.realtime\.multiquote\.lists: marketcode: /);

    const missing = await failure(client.call('v3.closed.history', { marketcode: 'kospi', issuecode: '005930' }));
    expect(missing.message).toMatch(/trnsmCycleTpCd: .*inqStrtDd: .*inqEndDd: /);

    const id = await failure(client.call('v9.nothing', {}));
    expect(id.code).toBe('invalid_request');

    expect(server.seen).toHaveLength(0);
    expect(events.map((e) => [e.code, e.attempts, e.status])).toStrictEqual(Array(5).fill(['invalid_request', 0, null]));
  });

  it('refuses calls while the budget is spent, until the reset', async () => {
    server.handle((_req, res) => sendJson(res, 429, ERROR_BODIES.rateLimited, limits(100, 0)));
    const first = await failure(client.call('v3.realtime.multiquote.lists', LISTS));
    expect(first.code).toBe('rate_limited');
    expect(first.status).toBe(429);
    expect(first.resetAt).toBe(nextReset(T0));
    expect(server.seen).toHaveLength(1);

    clock = nextReset(T0) - 1;
    const blocked = await failure(client.call('v3.realtime.multiquote.lists', LISTS));
    expect(blocked.code).toBe('rate_limited');
    expect(blocked.status).toBeUndefined();
    expect(blocked.resetAt).toBe(nextReset(T0));
    expect(blocked.message).toContain('2024-03-05T00:00:00.000Z');
    expect(server.seen).toHaveLength(1);
    expect(events[1]).toMatchObject({ code: 'rate_limited', attempts: 0, status: null });

    clock = nextReset(T0);
    server.handle((_req, res) => sendJson(res, 200, { isuLists: [] }, limits(100, 99)));
    await client.call('v3.realtime.multiquote.lists', LISTS);
    expect(server.seen).toHaveLength(2);
    expect(client.budget.remaining).toBe(99);
  });

  it('shares a budget given to it', async () => {
    const budget = new Budget();
    budget.exhaust(T0);
    await client.close();
    client = makeClient({ budget });
    expect((await failure(client.call('v3.realtime.multiquote.lists', LISTS))).code).toBe('rate_limited');
    expect(server.seen).toHaveLength(0);
  });
});

describe('UpstreamClient retries', () => {
  it('retries a 503 with backoff, then succeeds', async () => {
    server.handle((_req, res, n) =>
      n < 3 ? sendJson(res, 503, { message: 'unavailable' }, limits(100, 100 - n)) : sendJson(res, 200, { isuLists: [] }, limits(100, 97)),
    );
    const r = await client.call('v3.realtime.multiquote.lists', LISTS);
    expect(r.status).toBe(200);
    expect(server.seen).toHaveLength(3);
    // full jitter with random() = 0.5: half of 100 ms, then half of 200 ms
    expect(delays).toStrictEqual([50, 100]);
    expect(events).toMatchObject([{ status: 200, attempts: 3 }]);
    expect(client.budget.remaining).toBe(97);
  });

  it('gives up after the retries with upstream_error', async () => {
    server.handle((_req, res) => sendJson(res, 500, 'Internal Server Error'));
    const err = await failure(client.call('v3.realtime.multiquote.lists', LISTS));
    expect(err.code).toBe('upstream_error');
    expect(err.status).toBe(500);
    expect(err.retryable).toBe(true);
    expect(err.message).toBe('v3.realtime.multiquote.lists: HTTP 500 "Internal Server Error"');
    expect(server.seen).toHaveLength(3);
    expect(events).toMatchObject([{ code: 'upstream_error', status: 500, attempts: 3 }]);
  });

  it('never retries a 400, 401, 404 or 429', async () => {
    const bodies: [number, unknown, string][] = [
      [400, ERROR_BODIES.invalidCode, 'invalid_code'],
      [400, ERROR_BODIES.notProvided, 'not_provided_now'],
      [401, ERROR_BODIES.badKey, 'unauthorized'],
      [404, ERROR_BODIES.notFound, 'not_found'],
      [429, ERROR_BODIES.rateLimited, 'rate_limited'],
    ];
    for (const [status, body, code] of bodies) {
      server.seen.length = 0;
      server.handle((_req, res) => sendJson(res, status, body));
      const err = await failure(client.call('v3.realtime.multiquote.price', PRICE));
      expect([err.code, err.status, server.seen.length]).toStrictEqual([code, status, 1]);
    }
    expect(delays).toStrictEqual([]);
  });

  it('stops retrying once a response says the budget is spent', async () => {
    server.handle((_req, res) => sendJson(res, 503, {}, limits(100, 0)));
    const err = await failure(client.call('v3.realtime.multiquote.lists', LISTS));
    expect(err.code).toBe('upstream_error');
    expect(server.seen).toHaveLength(1);
    expect(client.budget.isExhausted(clock)).toBe(true);
  });

  it('retries a reset connection, then reports network', async () => {
    server.handle((req) => req.socket.destroy());
    const err = await failure(client.call('v3.realtime.multiquote.lists', LISTS));
    expect(err.code).toBe('network');
    expect(err.status).toBeUndefined();
    expect(err.cause).toBeInstanceOf(Error);
    expect(err.message).toMatch(/^v3\.realtime\.multiquote\.lists: network error: /);
    expect(server.seen).toHaveLength(3);
    expect(events).toMatchObject([{ code: 'network', status: null, attempts: 3 }]);
  });

  it('recovers when only the first connection is reset', async () => {
    server.handle((req, res, n) => (n === 1 ? req.socket.destroy() : sendJson(res, 200, { isuLists: [] })));
    const r = await client.call('v3.realtime.multiquote.lists', LISTS);
    expect(r.status).toBe(200);
    expect(server.seen).toHaveLength(2);
  });

  it('reports network when nothing listens', async () => {
    const url = server.url;
    await server.close();
    await client.close();
    client = makeClient({ baseUrl: url, retries: 0 });
    const err = await failure(client.call('v3.realtime.multiquote.lists', LISTS));
    expect(err.code).toBe('network');
    expect(err.message).toMatch(/ECONNREFUSED/);
    server = await startServer();
  });
});

describe('UpstreamClient timeouts and bodies', () => {
  it('cuts a hanging server at the timeout and does not retry it', async () => {
    await client.close();
    client = makeClient({ timeoutMs: 150 });
    server.handle(() => undefined);
    const started = performance.now();
    const err = await failure(client.call('v3.realtime.multiquote.lists', LISTS));
    const took = performance.now() - started;
    expect(err.code).toBe('timeout');
    expect(err.message).toBe('v3.realtime.multiquote.lists: no complete response within 150 ms');
    expect(took).toBeGreaterThanOrEqual(140);
    expect(took).toBeLessThan(2000);
    expect(server.seen).toHaveLength(1);
  });

  it('cuts a body that stops half way', async () => {
    await client.close();
    client = makeClient({ timeoutMs: 150 });
    server.handle((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"isuLists":[');
    });
    expect((await failure(client.call('v3.realtime.multiquote.lists', LISTS))).code).toBe('timeout');
  });

  it('retries timeouts when asked to', async () => {
    await client.close();
    client = makeClient({ timeoutMs: 100, retryTimeouts: true });
    server.handle((_req, res, n) => (n < 2 ? undefined : sendJson(res, 200, { isuLists: [] })));
    expect((await client.call('v3.realtime.multiquote.lists', LISTS)).status).toBe(200);
    expect(server.seen).toHaveLength(2);
  });

  it('reports malformed bodies', async () => {
    const bodies = ['{"isuLists": [', '<html>oops</html>', '[1,2]', '"text"', '{"isuLists": {"a": 1}}', ''];
    for (const body of bodies) {
      server.handle((_req, res) => sendJson(res, 200, body));
      const err = await failure(client.call('v3.realtime.multiquote.lists', LISTS));
      expect([body, err.code, err.status]).toStrictEqual([body, 'malformed_body', 200]);
      expect(err.message.startsWith('v3.realtime.multiquote.lists: ')).toBe(true);
    }
    expect(server.seen).toHaveLength(bodies.length);
  });

  it('reads a list body against the last one through the reader it is given, the same bodies with or without it', async () => {
    const row = (code: string, trdPrc: number) => ({ isuSrtCd: code, trdPrc, accTrdvol: 5 });
    const bodies: unknown[] = [
      { trdDd: '20240603', trdTm: '090500', isuLists: [row('005930', 100), row('000660', 200)] },
      { trdDd: '20240603', trdTm: '090501', isuLists: [row('005930', 100), row('000660', 210)] },
      { jsonrpc: '2.0', result: { trdDd: '20240603', trdTm: '090502', isuLists: [row('005930', 100)] }, extra: [1] },
      { note: { x: [{ a: 1 }] }, isuLists: [row('005930', 100)] },
      '{"isuLists": [{"isuSrtCd": "005930", "trdPrc": 1}, 7]}',
      '{"isuLists": [{"isuSrtCd": "005930", "trdPrc": 1},]}',
    ];
    const reader = new ListReader();
    const got: unknown[] = [];
    for (const body of bodies) {
      server.handle((_req, res) => sendJson(res, 200, body));
      const plain = await client.call('v3.realtime.multiquote.lists', LISTS).then(
        (r) => ({ data: r.data, dropped: r.dropped, issues: r.issues }),
        (e: UpstreamError) => e.message,
      );
      const read = await client.call('v3.realtime.multiquote.lists', LISTS, { list: reader }).then(
        (r) => {
          got.push({ delta: r.delta !== undefined, plain: r.plain });
          return { data: r.data, dropped: r.dropped, issues: r.issues };
        },
        (e: UpstreamError) => e.message,
      );
      expect(read).toStrictEqual(plain);
    }
    // Bare and wrapped envelopes read incrementally; then an array before the list, an element that is not a row, bytes that are not JSON.
    expect(got).toStrictEqual([
      { delta: true, plain: undefined },
      { delta: true, plain: undefined },
      { delta: true, plain: undefined },
      { delta: false, plain: 'envelope' },
      { delta: false, plain: 'rows' },
    ]);
    expect(events.filter((e) => e.plain !== undefined).map((e) => [e.plain, e.code])).toStrictEqual([
      ['envelope', undefined],
      ['rows', undefined],
      ['syntax', 'malformed_body'],
    ]);
  });

  it('updates the budget from success and error responses', async () => {
    await client.close();
    client = makeClient({ retries: 0 });
    server.handle((_req, res) => sendJson(res, 200, { isuLists: [] }, limits(50000, 41000)));
    await client.call('v3.realtime.multiquote.lists', LISTS);
    expect(client.budget.snapshot()).toStrictEqual({ limit: 50000, remaining: 41000, resetAt: nextReset(T0), observedAt: T0 });
    clock += 1000;
    server.handle((_req, res) => sendJson(res, 400, ERROR_BODIES.invalidCode, limits(50000, 40999)));
    await failure(client.call('v3.realtime.multiquote.price', PRICE));
    expect(client.budget.remaining).toBe(40999);
    clock += 1000;
    server.handle((_req, res) => sendJson(res, 502, 'bad gateway', limits(50000, 40998)));
    await failure(client.call('v3.realtime.multiquote.lists', LISTS));
    expect(client.budget.remaining).toBe(40998);
    expect(client.budget.observedAt).toBe(T0 + 2000);
  });
});

describe('UpstreamClient lifecycle', () => {
  it('rejects with the reason when the caller aborts', async () => {
    server.handle(() => undefined);
    const ac = new AbortController();
    const p = client.call('v3.realtime.multiquote.lists', LISTS, { signal: ac.signal });
    setTimeout(() => ac.abort(new Error('stop')), 50);
    await expect(p).rejects.toThrow('stop');
    expect(events).toMatchObject([{ code: 'aborted' }]);
  });

  it('survives a call listener that throws', async () => {
    client.on('call', () => {
      throw new Error('listener');
    });
    server.handle((_req, res) => sendJson(res, 200, { isuLists: [] }));
    expect((await client.call('v3.realtime.multiquote.lists', LISTS)).status).toBe(200);
  });

  it('fails calls after close', async () => {
    await client.close();
    const err = await failure(client.call('v3.realtime.multiquote.lists', LISTS));
    expect(err.code).toBe('network');
    expect(server.seen).toHaveLength(0);
  });
});
