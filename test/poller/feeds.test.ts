import { describe, expect, it } from 'vitest';
import { callsPerCycle, planCycle } from '../../src/poller/feeds.js';
import { endpoint } from '../../src/upstream/catalogue.js';

const codes = (n: number) => new Set(Array.from({ length: n }, (_, i) => String(100000 + i)));

describe('planCycle', () => {
  it('one call per list channel cycle', () => {
    expect(planCycle('quote', 'kospi', 'v2', codes(3), false)).toEqual([{ endpointId: 'v2.multiquote.lists', params: { marketcode: 'kospi' } }]);
    expect(planCycle('ohlc', 'kosdaq', 'v3', new Set(), true)).toEqual([{ endpointId: 'v3.realtime.multiquote.ohlclists', params: { marketcode: 'kosdaq' } }]);
    expect(planCycle('quote', 'kospi', 'v2', new Set(), false)).toEqual([]);
  });
  it('book for 45 codes is exactly 3 calls of at most 20 codes, sorted', () => {
    const calls = planCycle('book', 'kospi', 'v2', codes(45), false);
    expect(calls.map((c) => (c.params.isuCd as string[]).length)).toEqual([20, 20, 5]);
    expect(callsPerCycle('book', 45, false)).toBe(3);
    const all = calls.flatMap((c) => c.params.isuCd as string[]);
    expect(all).toEqual([...all].sort());
  });
  it('index is one call per industry code', () => {
    const calls = planCycle('index', 'kospi', 'v3', new Set(['K1', 'K2']), false);
    expect(calls).toEqual([
      { endpointId: 'v3.realtime.index.index', params: { marketcode: 'kospi', issuecode: 'K1' } },
      { endpointId: 'v3.realtime.index.index', params: { marketcode: 'kospi', issuecode: 'K2' } },
    ]);
  });
  it('every planned call is valid for its catalogue entry', () => {
    for (const fam of ['v2', 'v3'] as const) {
      for (const ch of ['quote', 'ohlc', 'top', 'aht', 'price', 'book'] as const) {
        for (const c of planCycle(ch, 'kosdaq', fam, codes(25), false)) expect(endpoint(c.endpointId).params.safeParse(c.params).success).toBe(true);
      }
      for (const c of planCycle('index', 'kosdaq', fam, new Set(['Q1']), false)) expect(endpoint(c.endpointId).params.safeParse(c.params).success).toBe(true);
    }
  });
});
