import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CATALOGUE } from '../../src/upstream/catalogue.js';
import { normaliseBody, type Normalised } from '../../src/upstream/normalise.js';
import { matchPath, renderPath, requestParams } from '../../src/upstream/paths.js';

/** The provider's published response examples, keyed by request path. */
const EXAMPLES = (
  JSON.parse(readFileSync(new URL('../fixtures/provider-examples-v3.json', import.meta.url), 'utf8')) as {
    examples: Record<string, unknown>;
  }
).examples;

function split(key: string): { pathname: string; query: URLSearchParams } {
  const q = key.indexOf('?');
  return q < 0 ? { pathname: key, query: new URLSearchParams() } : { pathname: key.slice(0, q), query: new URLSearchParams(key.slice(q + 1)) };
}

function normalised(key: string): Normalised {
  const m = matchPath(split(key).pathname);
  if (!m) throw new Error(`no entry for ${key}`);
  const r = normaliseBody(m.endpoint.response, EXAMPLES[key]);
  if (!r.ok) throw new Error(r.reason);
  return r.value;
}

describe('provider examples', () => {
  const keys = Object.keys(EXAMPLES);

  it('are all present', () => {
    expect(keys.length).toBe(66);
  });

  it.each(keys)('%s matches exactly one entry and normalises without loss', (key) => {
    const { pathname, query } = split(key);
    const all = CATALOGUE.filter((e) => matchPath(pathname, [e]) !== undefined);
    expect(all.map((e) => e.id)).toHaveLength(1);
    const m = matchPath(pathname)!;
    expect(m.endpoint.id).toBe(all[0]!.id);

    const body = EXAMPLES[key] as Record<string, unknown>;
    expect('jsonrpc' in body ? 'wrapped' : 'bare').toBe(m.endpoint.envelope);
    const r = normaliseBody(m.endpoint.response, body);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.dropped).toBe(0);
    expect(r.value.issues).toStrictEqual([]);

    const params = m.endpoint.params.safeParse(requestParams(m, query));
    expect(params.success, params.error?.message).toBe(true);
    // and the validated parameters render back to a path the same entry matches
    const rendered = renderPath(m.endpoint, params.data!);
    expect(matchPath(split(rendered).pathname)?.endpoint.id).toBe(m.endpoint.id);
  });
});

describe('normalised example values', () => {
  it('master: dates, zero-padded codes and placeholders', () => {
    const d = normalised('/v3/market/closed/kospi/005930/master').data;
    expect(d.trdDd).toBe('20220602');
    expect(d.listDd).toBe('19750611');
    expect(d.idxIndMidclssCd).toBe('013');
    expect(d.mktcapScaleCd).toBe('2');
    expect(d.invstcautnRemndIsuYn).toBeNull();
    expect(d.isuEngNm).toBe('SamsungElec');
    expect(d.prevddAccTrdval).toBe(1637773742750);
    const kosdaq = normalised('/v3/market/closed/kosdaq/247540/master').data;
    expect(kosdaq.kospi50Yn).toBeNull();
    expect(kosdaq.isuPrc).toBeNull();
    expect(kosdaq.idxIndMidclssCd).toBe('072');
  });

  it('multi-quote price: trade time as 8 digits from a number', () => {
    const r = normalised('/v3/market/realtime/kospi/multiquote/stocks/price?isuCd=005930,000660');
    expect(r.rows.map((row) => [row.isuSrtCd, row.trdTm, row.lstAskbidTpCd])).toStrictEqual([
      ['005930', '15482500', '1'],
      ['000660', '15481000', '2'],
    ]);
  });

  it('options price: board suffix removed, alias of the side field, market-operation time', () => {
    const d = normalised('/v3/market/realtime/derivative/options/kospi200/201S6212/price').data;
    expect(d.isuSrtCd).toBe('201S6212');
    expect(d.lstAskbidTpCd).toBe('0');
    expect('lstTrdTpCd' in d).toBe(false);
    expect(d.trdTm).toBe('31000000');
  });

  it('options order book and investors: times padded to HHMMSSmm', () => {
    expect(normalised('/v3/market/realtime/derivative/options/kospi200/201S6210/orderbook').data.ordAcptTm).toBe('09000400');
    expect(normalised('/v3/market/realtime/derivative/options/kospi200/market/investors').data.Tm).toBe('09000400');
    expect(normalised('/v3/market/realtime/index/kospi/K1/prospectindex').data.deemTm).toBe('09000000');
  });

  it('symbol lists: abbreviated-name alias and map_to kept', () => {
    const r = normalised('/v3/market/closed/kospi/lists');
    expect(r.data.trdDd).toBe('20220603');
    expect(r.rows[0]).toStrictEqual({
      isuSrtCd: '000020',
      isuCd: 'KR7000020008',
      isuKorNm: '동화약품',
      isuKorAbbrv: '동화약품',
      map_to: '000020*001',
    });
  });

  it('history and short selling: numeric dates and the short-sell volume alias', () => {
    const h = normalised('/v3/market/closed/index/kospi/K1/history?trnsmCycleTpCd=D&inqStrtDd=20220501&inqEndDd=20220503&reqCnt=2');
    expect(h.rows.map((r) => r.trdDd)).toStrictEqual(['20220503', '20220502']);
    const s = normalised('/v3/market/closed/kospi/005930/shortsell?inqStrtDd=20181001&inqEndDd=20181231');
    expect(s.rows[0]).toMatchObject({ trdDd: '20220503', srtsellTrdvol: 304382, srtsellBal: 6962010 });
    expect(s.rows[0]).not.toHaveProperty('srtsellTrdVol');
  });

  it('intraday: a time without its leading zero', () => {
    const r = normalised('/v3/market/realtime/kospi/stocks/005930/intraday?inddCycleTpCd=600&inqStrtDd=20220501&strtTm=0900&endTm=1500');
    expect(r.rows.map((row) => row.inddTm)).toStrictEqual(['10000000', '09100000']);
  });

  it('derivative master: null fields stay null, year-month padded', () => {
    const d = normalised('/v3/market/realtime/derivative/futures/kospi200/K2FA001/master').data;
    expect(d.opnintLmtQty).toBeNull();
    expect(d.expDd).toBe('202206');
    expect(d.lsttrdDd).toBe('20220609');
    expect(d.setlmult).toBe(250000);
  });
});
