import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ResultMsg } from '../../src/protocol/messages.js';
import { Client, startHarness, type Harness } from './harness.js';

/** The fake upstream key: it must never reach a client. */
const FAKE_KEY = 'FAKE-API-KEY-7c1e9d';

let h: Harness;
beforeEach(async () => {
  h = await startHarness(); // families: KOSPI v2, KOSDAQ v3
});
afterEach(async () => {
  await h.close();
});

/** [get request, endpoint id, upstream params] with KOSPI on v2 and KOSDAQ on v3. */
const RESOURCE_CASES: [Record<string, unknown>, string, Record<string, unknown>][] = [
  [{ resource: 'master', market: 'kospi', code: '000001' }, 'v2.stocks.master', { marketcode: 'kospi', issuecode: '000001' }],
  [
    { resource: 'selectivemaster', market: 'kosdaq', code: '500001', params: { fields: ['listShrs'] } },
    'v3.closed.selectivemaster',
    { marketcode: 'kosdaq', issuecode: '500001', fields: ['listShrs'] },
  ],
  [
    { resource: 'history', market: 'kosdaq', code: '500002', params: { period: 'M', from: '20250101', to: '20251231', count: 12 } },
    'v3.closed.history',
    { marketcode: 'kosdaq', issuecode: '500002', trnsmCycleTpCd: 'M', inqStrtDd: '20250101', inqEndDd: '20251231', reqCnt: 12 },
  ],
  [
    { resource: 'intraday', market: 'kospi', code: '000002', params: { interval: '10', date: '20261120', from: '0900', to: '0910' } },
    'v2.stocks.intraday',
    { marketcode: 'kospi', issuecode: '000002', inddCycleTpCd: '10', inqStrtDd: '20261120', strtTm: '0900', endTm: '0910' },
  ],
  [{ resource: 'lists', market: 'konex' }, 'v2.stocks.lists', { marketcode: 'konex' }],
  [{ resource: 'lists', market: 'kosdaq' }, 'v3.closed.lists', { marketcode: 'kosdaq' }],
  [{ resource: 'closeprice', market: 'kosdaq', code: '500003' }, 'v3.closed.closeprice', { marketcode: 'kosdaq', issuecode: '500003' }],
  [{ resource: 'investors', market: 'kospi', code: '000003' }, 'v2.stocks.investors', { marketcode: 'kospi', issuecode: '000003' }],
  [{ resource: 'investors', market: 'kosdaq' }, 'v3.investors.market', { marketcode: 'kosdaq' }],
  [
    { resource: 'shortsell', market: 'kospi', code: '000004', params: { to: '20261120' } },
    'v2.stocks.shortsell',
    { marketcode: 'kospi', issuecode: '000004', inqStrtDd: '20261026', inqEndDd: '20261120' },
  ],
  [
    { resource: 'foreignhistory', market: 'kosdaq', code: '500004', params: { from: '20261101', to: '20261120' } },
    'v3.closed.foreignhistory',
    { marketcode: 'kosdaq', issuecode: '500004', inqStrtDd: '20261101', inqEndDd: '20261120' },
  ],
  [{ resource: 'traderanking', market: 'kosdaq', code: '500005' }, 'v3.realtime.stocks.traderanking', { marketcode: 'kosdaq', issuecode: '500005' }],
  [{ resource: 'closenav', market: 'kospi', code: '000005' }, 'v2.stocks.closenav', { marketcode: 'kospi', issuecode: '000005' }],
  [{ resource: 'index', market: 'kosdaq', code: 'Q1' }, 'v3.realtime.index.index', { marketcode: 'kosdaq', issuecode: 'Q1' }],
  [{ resource: 'index', market: 'kospi' }, 'v2.stocks.index', { marketcode: 'kospi' }],
  [{ resource: 'price', market: 'kosdaq', code: '500006' }, 'v3.realtime.stocks.price', { marketcode: 'kosdaq', issuecode: '500006' }],
  [{ resource: 'orderbook', market: 'kospi', code: '000006' }, 'v2.stocks.orderbook', { marketcode: 'kospi', issuecode: '000006' }],
];

describe('get', () => {
  it.each(RESOURCE_CASES)('%o -> %s', async (req, id, params) => {
    const c = await Client.connect(h.url);
    const r = await c.request({ op: 'get', id: 'q', ...req });
    expect(ResultMsg.parse(r)).toBeTruthy();
    expect(r).toMatchObject({ type: 'result', id: 'q', resource: req.resource, market: req.market, ts: 1_700_000_000_000 });
    expect(r.code).toBe(req.code);
    expect(h.onDemand.calls).toEqual([{ id, params }]);
    c.close();
  });

  it('refuses an unlisted code without calling the upstream', async () => {
    const c = await Client.connect(h.url);
    const e = await c.request({ op: 'get', id: 1, resource: 'master', market: 'kospi', code: '999999' });
    expect(e).toMatchObject({ type: 'error', code: 'invalid_code' });
    expect(h.onDemand.calls).toHaveLength(0);
    c.close();
  });

  it('does not block the socket: replies arrive as lookups complete, matched by id', async () => {
    // Each lookup completes when the test lets it: the second asked first, the first once the second was answered.
    const gates = new Map<unknown, () => void>();
    h.onDemand.respond = async (_id, params) => {
      await new Promise<void>((r) => gates.set(params.issuecode, r));
      return { data: { code: params.issuecode }, receivedAt: 1, cached: false };
    };
    const c = await Client.connect(h.url);
    c.send({ op: 'get', id: 'slow', resource: 'master', market: 'kospi', code: '000001' });
    c.send({ op: 'get', id: 'fast', resource: 'master', market: 'kospi', code: '000002' });
    const pong = await c.request({ op: 'ping', id: 'p' });
    expect(pong.type).toBe('pong');
    await c.wait(() => gates.size === 2, 3000, 'both lookups asked');
    gates.get('000002')!();
    await c.until((m) => m.id === 'fast');
    gates.get('000001')!();
    await c.until((m) => m.id === 'slow');
    const order = c.msgs.filter((m) => m.type === 'result' || m.type === 'pong').map((m) => m.id);
    expect(order).toEqual(['p', 'fast', 'slow']);
    expect(c.msgs.find((m) => m.id === 'slow')!.data).toEqual({ code: '000001' });
    c.close();
  });

  const UPSTREAM: [string, string, boolean][] = [
    ['invalid_code', 'invalid_code', false],
    ['not_provided_now', 'not_provided_now', true],
    ['rate_limited', 'upstream_rate_limited', true],
    ['not_found', 'not_found', false],
    ['invalid_request', 'invalid_params', false],
    ['bad_request', 'invalid_params', false],
    ['unauthorized', 'upstream_unavailable', true],
    ['upstream_error', 'upstream_unavailable', true],
    ['timeout', 'upstream_unavailable', true],
    ['network', 'upstream_unavailable', true],
    ['malformed_body', 'upstream_unavailable', true],
    ['something_else', 'internal', true],
  ];
  it('maps upstream errors to wire codes and never leaks the API key', async () => {
    let next = 'timeout';
    h.onDemand.respond = async () => {
      const err = Object.assign(new Error(`GET http://up/v2?apikey=${FAKE_KEY} failed (apikey: ${FAKE_KEY})`), {
        code: next,
        retryable: true,
        headers: { apikey: FAKE_KEY },
      });
      throw err;
    };
    const c = await Client.connect(h.url);
    const raw: string[] = [];
    c.ws.on('message', (d) => raw.push(String(d)));
    for (const [upstream, wire, retryable] of UPSTREAM) {
      next = upstream;
      const e = await c.request({ op: 'get', id: upstream, resource: 'price', market: 'kospi', code: '000001' });
      expect(e).toMatchObject({ type: 'error', code: wire, retryable });
    }
    next = 'unauthorized';
    const un = await c.request({ op: 'get', id: 'cred', resource: 'price', market: 'kospi', code: '000001' });
    expect(un.message).toMatch(/credentials/);
    expect(raw.join('\n')).not.toContain(FAKE_KEY);
    expect(raw.join('\n')).not.toContain('apikey');
    expect((await c.request({ op: 'ping', id: 'still-open' })).type).toBe('pong');
    c.close();
  });
});
