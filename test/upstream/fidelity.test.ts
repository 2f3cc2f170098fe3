import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import WebSocket from 'ws';
import { KrxClient } from '../../src/client/index.js';
import { endpoint } from '../../src/upstream/catalogue.js';
import { UpstreamClient } from '../../src/upstream/client.js';
import { normaliseBody } from '../../src/upstream/normalise.js';
import { metric } from '../reliability/helpers.js';
import { connect, startBridge, type TestBridge, type TestClient } from '../bridge/helpers.js';

/**
 * Provider-shaped bodies: the v2 history-like rows are dated `BzDd` (a
 * number, or a string), and other fields arrive under a second name or type.
 * Every row comes back with its date under the one name the SDK declares.
 */

const BZDD_ROW = {
  BzDd: 20181228,
  trdPrc: 38600,
  cmpprevddTpCd: '2',
  opnprc: 38250,
  hgprc: 38900,
  lwprc: 38200,
  accTrdvol: 2955868,
  accTrdval: 113875559350,
  cmpprevddPrc: 350,
};

describe('history-like rows dated BzDd', () => {
  const bodies: [string, Record<string, unknown>, Record<string, unknown>][] = [
    ['v2.stocks.history', { isuSrtCd: '005930', hisLists: [BZDD_ROW, { ...BZDD_ROW, BzDd: '20181227' }] }, { trdPrc: 38600 }],
    ['v2.index.history', { isuSrtCd: 'K1', isuKorNm: '코스피', hisLists: [BZDD_ROW, { ...BZDD_ROW, BzDd: '20181227' }] }, { trdPrc: 38600 }],
    [
      'v2.stocks.shortsell',
      {
        isuSrtCd: '005930',
        hisLists: [
          { BzDd: 20181228, srtsellTrdVol: 10, lendBalQty: 5 },
          { BzDd: '20181227', srtsellTrdVol: 9 },
        ],
      },
      { srtsellTrdvol: 10 },
    ],
    [
      'v2.stocks.foreignhistory',
      {
        isuSrtCd: '005930',
        hisLists: [
          { BzDd: 20181228, FornHdVol: 7 },
          { BzDd: '20181227', FornHdVol: 6 },
        ],
      },
      { FornHdVol: 7 },
    ],
  ];
  it.each(bodies)('%s: every row kept, dated trdDd, whether BzDd came as a number or a string', (id, body, first) => {
    const n = normaliseBody(endpoint(id).response, { result: body });
    expect(n.ok).toBe(true);
    if (!n.ok) return;
    expect(n.value.dropped).toBe(0);
    expect(n.value.rows).toHaveLength(2);
    expect(n.value.rows[0]).toMatchObject({ trdDd: '20181228', ...first });
    expect(n.value.rows[1]).toMatchObject({ trdDd: '20181227' });
    for (const r of n.value.rows) expect(r).not.toHaveProperty('BzDd');
  });

  it('keeps BzDd where it is a field of its own (selectivemaster)', () => {
    const n = normaliseBody(endpoint('v2.stocks.selectivemaster').response, { result: { isuSrtCd: '005930', BzDd: 20261124, trdDd: 20261124 } });
    expect(n.ok && n.value.data).toMatchObject({ BzDd: '20261124' });
  });
});

describe('date-, time- and code-like fields under a second name or type', () => {
  // Each from the provider's tables and examples: the declared type is the string one; names as payloads spell them.
  const cases: [string, string, Record<string, unknown>, Record<string, unknown>][] = [
    [
      'trdTm as a number without its leading zero',
      'v2.multiquote.price',
      { isulist: [{ isuSrtCd: '005930', trdPrc: 1, trdTm: 9544500 }] },
      { trdTm: '09544500' },
    ],
    ['listDd as a number', 'v2.stocks.master', { isuSrtCd: '005930', isuCd: 'KR7005930003', listDd: 19750611 }, { listDd: '19750611' }],
    ['trdDd as a number', 'v2.stocks.history', { isuSrtCd: '005930', hisLists: [{ trdDd: 20261120, trdPrc: 1 }] }, { trdDd: '20261120' }],
    ['cmpprevddTpCd as a number', 'v2.stocks.history', { isuSrtCd: '005930', hisLists: [{ trdDd: '20261120', cmpprevddTpCd: 2 }] }, { cmpprevddTpCd: '2' }],
    ['isuKorAbbr for isuKorAbbrv', 'v2.stocks.lists', { isuLists: [{ isuSrtCd: '005930', isuKorAbbr: '삼성전자' }] }, { isuKorAbbrv: '삼성전자' }],
    ['IsuSrtCd for isuSrtCd', 'v2.stocks.lists', { isuLists: [{ IsuSrtCd: '005930' }] }, { isuSrtCd: '005930' }],
    [
      'srtsellTrdVol for srtsellTrdvol',
      'v3.closed.shortsell',
      { isuSrtCd: '005930', hisLists: [{ trdDd: '20261120', srtsellTrdVol: 3 }] },
      { srtsellTrdvol: 3 },
    ],
    ['inddTm as a number', 'v2.stocks.intraday', { isuSrtCd: '005930', hisLists: [{ inddTm: 9100000, inddClsprc: 1 }] }, { inddTm: '09100000' }],
  ];
  it.each(cases)('%s', (_what, id, body, want) => {
    const n = normaliseBody(endpoint(id).response, { result: body });
    expect(n.ok).toBe(true);
    if (!n.ok) return;
    const target = n.value.rows[0] ?? n.value.data;
    expect(target).toMatchObject(want);
  });
});

describe('an answer whose every row is unusable', () => {
  let server: Server;
  let base = '';
  let body: unknown = {};
  beforeAll(async () => {
    server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('reaches the upstream client as drift, never as an empty success', async () => {
    const c = new UpstreamClient({ baseUrl: base, apiKey: 'k', retries: 0 });
    body = { result: { isuSrtCd: '005930', hisLists: [{ trdPrc: 1 }, { trdPrc: 2 }] } };
    const r = await c.call('v2.stocks.history', { marketcode: 'kospi', issuecode: '005930', trnsmCycleTpCd: 'D', inqStrtDd: '20261101', inqEndDd: '20261120' });
    // The client reports the drop; the on-demand path turns a whole drop into an error (below, through the bridge).
    expect(r.rows).toEqual([]);
    expect(r.dropped).toBe(2);
    expect(r.issues[0]!.reason).toBe('missing trdDd');
    await c.close();
  });
});

describe('through the bridge and the simulator (v2 rows dated BzDd)', () => {
  let tb: TestBridge;
  let c: TestClient;
  beforeAll(async () => {
    tb = await startBridge({ KOSPI_FAMILY: 'v2' });
    c = await connect(tb);
  });
  afterAll(async () => {
    c?.close();
    await tb?.bridge.stop();
  });

  it('the simulator serves v2 history rows the way the provider does', async () => {
    const sim = tb.bridge.sim!;
    const r = await request(
      `${new URL(tb.bridge.upstreamOrigin)}v2/market/stocks/kospi/005930/history?trnsmCycleTpCd=D&inqStrtDd=20261101&inqEndDd=20261120&reqCnt=3`,
      {
        headers: { apikey: 'test-upstream-key-9f1c2e7a' },
      },
    );
    const raw = (await r.body.json()) as { result: { hisLists: Record<string, unknown>[] } };
    expect(raw.result.hisLists[0]).toHaveProperty('BzDd');
    expect(raw.result.hisLists[0]).not.toHaveProperty('trdDd');
    expect(sim).toBeDefined();
  });

  it('get history with only {period, count} returns that many dated rows', async () => {
    const r = (await c.request({ op: 'get', resource: 'history', market: 'kospi', code: '005930', params: { period: 'D', count: 3 } })) as unknown as {
      type: string;
      data: { hisLists: { trdDd: string }[] };
    };
    expect(r.type, JSON.stringify(r).slice(0, 300)).toBe('result');
    expect(r.data.hisLists).toHaveLength(3);
    for (const row of r.data.hisLists) expect(row.trdDd).toMatch(/^\d{8}$/);
  });

  it('every history-like resource comes back with its dates, on get and on /api', async () => {
    for (const resource of ['history', 'shortsell', 'foreignhistory']) {
      const r = (await c.request({ op: 'get', resource, market: 'kospi', code: '005930' })) as unknown as {
        type: string;
        data: { hisLists: { trdDd: string }[] };
      };
      expect(r.type, resource).toBe('result');
      expect(r.data.hisLists.length, resource).toBeGreaterThan(0);
      for (const row of r.data.hisLists) expect(row.trdDd, resource).toMatch(/^\d{8}$/);
    }
    const idx = (await c.request({ op: 'get', resource: 'history', market: 'kospi', code: 'K1' })) as { type: string };
    expect(idx.type).toBe('error'); // history takes stock codes; the index history is reached through /api:
    const api = await request(`${tb.url}/api/v2/market/index/kospi/K1/history?trnsmCycleTpCd=D&inqStrtDd=20261101&inqEndDd=20261120&reqCnt=5`);
    const body = (await api.body.json()) as { data: { hisLists: { trdDd: string }[] } };
    expect(api.statusCode).toBe(200);
    expect(body.data.hisLists.length).toBeGreaterThan(0);
    for (const row of body.data.hisLists) expect(row.trdDd).toMatch(/^\d{8}$/);
  });

  it('rows dated BzDd as a string come back dated too, through get, /api and the SDK', async () => {
    tb.bridge.sim!.faults.set({ drift: { match: '/shortsell', asString: ['BzDd'] } });
    const k = new KrxClient(tb.wsUrl, { WebSocket: WebSocket as never });
    try {
      const raw = await request(`${new URL(tb.bridge.upstreamOrigin)}v2/market/stocks/kospi/035420/shortsell?inqStrtDd=20261101&inqEndDd=20261120`, {
        headers: { apikey: 'test-upstream-key-9f1c2e7a' },
      });
      expect(typeof ((await raw.body.json()) as { result: { hisLists: { BzDd: unknown }[] } }).result.hisLists[0]!.BzDd).toBe('string');
      const g = (await c.request({ op: 'get', resource: 'shortsell', market: 'kospi', code: '035420' })) as unknown as {
        type: string;
        data: { hisLists: { trdDd: string }[] };
      };
      expect(g.type).toBe('result');
      const api = await request(`${tb.url}/api/v2/market/stocks/kospi/068270/shortsell?inqStrtDd=20261101&inqEndDd=20261120`);
      const viaApi = ((await api.body.json()) as { data: { hisLists: { trdDd: string }[] } }).data.hisLists;
      const sdk = (await k.shortsell('kospi', '105560', { count: 5 })).hisLists;
      for (const rows of [g.data.hisLists, viaApi, sdk]) {
        expect(rows.length).toBeGreaterThan(0);
        for (const row of rows) expect(row.trdDd).toMatch(/^\d{8}$/);
      }
    } finally {
      k.close();
      tb.bridge.sim!.faults.set({});
    }
  });

  it('the SDK asks for the last bars without dates', async () => {
    const k = new KrxClient(tb.wsUrl, { WebSocket: WebSocket as never });
    try {
      const h = await k.history('kospi', '005930', { period: 'D', count: 3 });
      expect(h.hisLists).toHaveLength(3);
      expect((await k.history('kospi', '000660')).hisLists).toHaveLength(20);
    } finally {
      k.close();
    }
  });

  it('an answer whose rows are all unusable is a coded error saying how many and why, and is counted', async () => {
    tb.bridge.sim!.faults.set({ drift: { match: '/foreignhistory', drop: ['BzDd', 'trdDd'] } });
    try {
      const r = (await c.request({ op: 'get', resource: 'foreignhistory', market: 'kospi', code: '000660', params: { count: 4 } })) as Record<string, unknown>;
      expect(r).toMatchObject({ type: 'error', code: 'upstream_unavailable', retryable: true });
      expect(r.message).toMatch(/schema drift\): all 4 rows were unusable \(missing trdDd\)/);
      expect(await metric(tb.bridge.metrics, 'krx_lookup_drift_total', { endpoint: 'v2.stocks.foreignhistory' })).toBe(1);
      const api = await request(`${tb.url}/api/v2/market/stocks/kospi/000660/foreignhistory?inqStrtDd=20261001&inqEndDd=20261120&reqCnt=4`);
      expect(api.statusCode).toBe(502);
      expect(((await api.body.json()) as { error: { message: string } }).error.message).toMatch(/all 4 rows were unusable/);
    } finally {
      tb.bridge.sim!.faults.set({});
    }
  });
});

describe('a partial drop', () => {
  it('is reported on the result of get and of /api as `dropped`', async () => {
    const { startHarness } = await import('../gateway/harness.js');
    const h = await startHarness();
    try {
      h.onDemand.respond = async () => ({ data: { isuSrtCd: '005930', hisLists: [{ trdDd: '20261120' }] }, receivedAt: 1, cached: false, dropped: 2 });
      const { Client } = await import('../gateway/harness.js');
      const c = await Client.connect(h.url);
      const r = await c.request({ op: 'get', id: 1, resource: 'history', market: 'kospi', code: '005930', params: { count: 3 } });
      expect(r).toMatchObject({ type: 'result', dropped: 2 });
      const api = await request(`${h.httpUrl}/api/v2/market/stocks/kospi/005930/master`);
      expect(((await api.body.json()) as { dropped?: number }).dropped).toBe(2);
      c.close();
      // The SDK tells it beside the rows.
      const k = new KrxClient(h.url, { WebSocket: WebSocket as never });
      try {
        const bars = await k.history('kospi', '005930', { count: 3 });
        expect(bars.dropped).toBe(2);
        expect(bars.hisLists).toHaveLength(1);
      } finally {
        k.close();
      }
    } finally {
      await h.close();
    }
  });
});

describe('the on-demand cache', () => {
  it('keeps how many rows were dropped with the answer, on a hit too', async () => {
    const { OnDemandCache } = await import('../../src/upstream/cache.js');
    const cache = new OnDemandCache({ caller: { call: async () => ({ data: { hisLists: [] }, receivedAt: 5, dropped: 3 }) } });
    const params = { marketcode: 'kospi', issuecode: '005930', trnsmCycleTpCd: 'D', inqStrtDd: '20261101', inqEndDd: '20261120' };
    expect(await cache.get('v2.stocks.history', params)).toMatchObject({ dropped: 3, cached: false });
    expect(await cache.get('v2.stocks.history', params)).toMatchObject({ dropped: 3, cached: true });
  });
});
