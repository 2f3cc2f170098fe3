import { describe, expect, it } from 'vitest';
import { CATALOGUE, endpoint, findEndpoint, type Endpoint } from '../../src/upstream/catalogue.js';
import { SELECTIVE_MASTER_FIELDS } from '../../src/upstream/fields.js';
import { matchPath, renderPath, requestParams } from '../../src/upstream/paths.js';

const SAMPLE_CODE = { stock: '005930', index: 'K1', derivative: '101S6000' } as const;
const SAMPLE_QUERY: Record<string, unknown> = {
  isuCd: ['005930', '000660'],
  trnsmCycleTpCd: 'D',
  inqStrtDd: '20220501',
  inqEndDd: '20220503',
  reqCnt: 2,
  inddCycleTpCd: 600,
  strtTm: '0900',
  endTm: '1500',
  fields: ['isuSrtCd', 'prevddClsprc'],
};

function sampleParams(e: Endpoint): Record<string, unknown> {
  const p: Record<string, unknown> = {};
  if (e.path.includes('{marketcode}')) p.marketcode = e.markets[0];
  if (e.code) p.issuecode = SAMPLE_CODE[e.code];
  if (e.path.includes('{nationcode}')) p.nationcode = 'KR';
  for (const q of e.query) p[q] = SAMPLE_QUERY[q];
  return p;
}

describe('catalogue', () => {
  it('has unique ids and unique path templates', () => {
    expect(new Set(CATALOGUE.map((e) => e.id)).size).toBe(CATALOGUE.length);
    expect(new Set(CATALOGUE.map((e) => e.path)).size).toBe(CATALOGUE.length);
  });

  it('looks entries up by id', () => {
    expect(endpoint('v3.realtime.multiquote.lists').path).toBe('/v3/market/realtime/{marketcode}/multiquote/stocks/lists');
    expect(findEndpoint('nope')).toBeUndefined();
    expect(() => endpoint('nope')).toThrow(/unknown endpoint id/);
  });

  it.each(CATALOGUE.map((e) => [e.id, e] as const))('%s renders a path that matches it and parses back', (_id, e) => {
    const parsed = e.params.safeParse(sampleParams(e));
    expect(parsed.success, parsed.error?.message).toBe(true);
    const path = renderPath(e, parsed.data!);
    const [pathname, qs] = path.split('?') as [string, string | undefined];
    const m = matchPath(pathname);
    expect(m?.endpoint.id).toBe(e.id);
    const again = e.params.safeParse(requestParams(m!, new URLSearchParams(qs ?? '')));
    expect(again.success, again.error?.message).toBe(true);
    expect(renderPath(e, again.data!)).toBe(path);
  });

  it('refuses missing required and unknown parameters', () => {
    const e = endpoint('v3.closed.history');
    expect(e.requiredQuery).toStrictEqual(['trnsmCycleTpCd', 'inqStrtDd', 'inqEndDd']);
    expect(e.params.safeParse({ marketcode: 'kospi', issuecode: '005930' }).success).toBe(false);
    const ok = { marketcode: 'kospi', issuecode: '005930', trnsmCycleTpCd: 'D', inqStrtDd: '20220501', inqEndDd: '20220503' };
    expect(e.params.safeParse(ok).success).toBe(true);
    expect(e.params.safeParse({ ...ok, extra: 1 }).success).toBe(false);
    expect(e.params.safeParse({ ...ok, marketcode: 'konex' }).success).toBe(false);
    expect(e.params.safeParse({ ...ok, reqCnt: 101 }).success).toBe(false);
  });

  it('takes at most 20 codes per multi-quote call', () => {
    const e = endpoint('v2.multiquote.price');
    const codes = Array.from({ length: 21 }, (_, i) => String(i).padStart(6, '0'));
    expect(e.limits.maxCodes).toBe(20);
    expect(e.params.safeParse({ marketcode: 'kospi', isuCd: codes.slice(0, 20) }).success).toBe(true);
    expect(e.params.safeParse({ marketcode: 'kospi', isuCd: codes }).success).toBe(false);
    expect(e.params.safeParse({ marketcode: 'kospi', isuCd: '005930, 000660' }).data).toMatchObject({ isuCd: ['005930', '000660'] });
  });

  it('uses the provider path for the v2 index closing value', () => {
    expect(endpoint('v2.index.closeindex').path).toBe('/v2/market/index/{marketcode}/{issuecode}/closeindex');
    expect(matchPath('/v2/market/index/kospi/K1/closeprice')).toBeUndefined();
  });

  it('accepts the provider spellings of selectivemaster flags and no flags at all', () => {
    expect(SELECTIVE_MASTER_FIELDS).toContain('srtsellTrdVol');
    expect(SELECTIVE_MASTER_FIELDS).toContain('IsuEngNm');
    expect(SELECTIVE_MASTER_FIELDS).toContain('srtsellTrdvol');
    const e = endpoint('v3.closed.selectivemaster');
    const p = e.params.safeParse({ marketcode: 'kospi', issuecode: '005930', fields: ['srtsellTrdVol', 'BzDd'] });
    expect(p.success).toBe(true);
    expect(renderPath(e, p.data!)).toBe('/v3/market/closed/kospi/005930/selectivemaster?srtsellTrdVol&BzDd');
    expect(e.params.safeParse({ marketcode: 'kospi', issuecode: '005930' }).success).toBe(true);
    expect(e.params.safeParse({ marketcode: 'kospi', issuecode: '005930', fields: ['nope'] }).success).toBe(false);
  });
});
