import { afterEach, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { rawRequest, requestLine } from '../hostile/raw.js';
import { startBridge, until, type TestBridge } from '../bridge/helpers.js';
import { EnglishNames } from '../../src/state/names.js';
import { SymbolDirectory } from '../../src/state/symbols.js';
import { silentLogger } from '../../src/log.js';

/** `/symbols` as a search box and a browser use it: English names, browsing, raw UTF-8, other origins. */

let tb: TestBridge | undefined;
afterEach(async () => {
  await tb?.bridge.stop();
  tb = undefined;
});

type Found = { symbols: { code: string; engName?: string }[] };

describe('/symbols', () => {
  it('finds issues by their English name once the bridge has learned it, subscribed codes first', async () => {
    tb = await startBridge({ NAMES_PER_DAY: 50 });
    await until(() => tb!.bridge.symbols.loaded('kospi'), 10_000, 'symbols');
    const found = async (q: string) => ((await (await request(`${tb!.url}/symbols?q=${encodeURIComponent(q)}&market=kospi`)).body.json()) as Found).symbols;
    expect(await found('samsung')).toEqual([]); // the lists have Korean names only
    await until(() => tb!.bridge.symbols.hasEnglish('kospi', '005930'), 10_000, 'the English name of 005930');
    // The simulator names it as the provider does in its examples: SamsungElec.
    expect((await found('samsung')).map((s) => s.code)).toContain('005930');
    expect((await found('Samsung Elec'))[0]).toMatchObject({ code: '005930', engName: 'SamsungElec' });
  });

  it('browses a market without a query, page by page', async () => {
    tb = await startBridge();
    await until(() => tb!.bridge.symbols.loaded('kosdaq'), 10_000, 'symbols');
    const page = async (offset: number) => ((await (await request(`${tb!.url}/symbols?market=kosdaq&limit=50&offset=${offset}`)).body.json()) as Found).symbols;
    const a = await page(0);
    const b = await page(50);
    expect(a).toHaveLength(50);
    expect(b).toHaveLength(50);
    expect(new Set([...a, ...b].map((s) => s.code)).size).toBe(100);
    expect((await request(`${tb.url}/symbols?offset=-1`)).statusCode).toBe(400);
  });

  it('reads a percent-encoded UTF-8 query, and says how to send a raw one', async () => {
    tb = await startBridge();
    await until(() => tb!.bridge.symbols.loaded('kospi'), 10_000, 'symbols');
    const ok = (await (await request(`${tb.url}/symbols?q=${encodeURIComponent('삼성전자')}&market=kospi`)).body.json()) as Found;
    expect(ok.symbols[0]?.code).toBe('005930');
    // Node's strict HTTP parser refuses raw bytes in the request line; the answer says what to do instead.
    const r = await rawRequest(Number(new URL(tb.url).port), Buffer.from(requestLine('/symbols?q=삼성전자&market=kospi'), 'utf8'));
    expect(r.status).toBe(400);
    expect(Buffer.from(r.text, 'latin1').toString('utf8')).toContain(
      '"code":"bad_request","message":"the request target holds raw non-ASCII bytes: percent-encode them',
    );
    expect((await request(`${tb.url}/healthz`)).statusCode).toBe(200);
  });

  it('lets the allowed origins read /symbols and /api across origins, preflight included; no one else', async () => {
    tb = await startBridge({ ALLOWED_ORIGINS: ['https://screens.example'] });
    await until(() => tb!.bridge.symbols.loaded('kospi'), 10_000, 'symbols');
    const ok = await request(`${tb.url}/symbols?q=005930`, { headers: { origin: 'https://screens.example' } });
    await ok.body.dump();
    expect(ok.headers['access-control-allow-origin']).toBe('https://screens.example');
    expect(ok.headers.vary).toBe('Origin');
    const api = await request(`${tb.url}/api/v2/market/stocks/kospi/005930/master`, { headers: { origin: 'https://screens.example' } });
    await api.body.dump();
    expect(api.headers['access-control-allow-origin']).toBe('https://screens.example');
    const pre = await request(`${tb.url}/api/v2/market/stocks/kospi/005930/master`, {
      method: 'OPTIONS',
      headers: { origin: 'https://screens.example', 'access-control-request-headers': 'authorization' },
    });
    await pre.body.dump();
    expect(pre.statusCode).toBe(204);
    expect(pre.headers['access-control-allow-headers']).toBe('Authorization');
    const other = await request(`${tb.url}/symbols?q=005930`, { headers: { origin: 'https://elsewhere.example' } });
    await other.body.dump();
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
    const otherPre = await request(`${tb.url}/symbols`, { method: 'OPTIONS', headers: { origin: 'https://elsewhere.example' } });
    await otherPre.body.dump();
    expect(otherPre.statusCode).toBe(405);
  });
});

describe('EnglishNames', () => {
  it('spends at most its calls a day, wanted codes first, and tries a code once a day', async () => {
    const symbols = new SymbolDirectory();
    symbols.load(
      'kospi',
      ['000001', '000002', '000003', '005930'].map((c) => ({ isuSrtCd: c, isuKorNm: `이름${c}` })),
    );
    const asked: string[] = [];
    let now = Date.parse('2026-11-24T01:00:00Z');
    const names = new EnglishNames({
      symbols,
      markets: ['kospi'],
      perDay: 3,
      logger: silentLogger(),
      now: () => now,
      dayEnd: (t) => Math.floor(t / 86_400_000) * 86_400_000 + 86_400_000,
      wanted: () => [['kospi', '005930']],
      lookup: async (_m, code) => {
        asked.push(code);
        return code === '000002' ? undefined : `Name ${code}`;
      },
    });
    for (let i = 0; i < 6; i++) await names.step();
    expect(asked).toEqual(['005930', '000001', '000002']);
    expect(symbols.search('name 0059', 5)[0]?.code).toBe('005930');
    now += 86_400_000;
    for (let i = 0; i < 6; i++) await names.step();
    expect(asked.slice(3)).toEqual(['000002', '000003']);
  });
});
