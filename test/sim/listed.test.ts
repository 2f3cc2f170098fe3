import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSim, type Running } from './helpers.js';

/**
 * Nothing trades before it is listed: the bars of `history` (and an ETF's
 * `navhistory`) start at the listing day (`listDd` of its master),
 * however far back the request reaches. (They went back to 1900, so paging
 * a code's whole history never ended.) Short selling and foreign holdings
 * by day are left as they are: the provider's own examples show them for
 * 247540 in 2018, before its listing in 2019 (test/sim/examples.test.ts).
 */
describe('history starts at the listing day', () => {
  let s: Running;
  beforeAll(async () => {
    s = await startSim({});
  });
  afterAll(() => s.stop());

  async function result(path: string): Promise<Record<string, unknown>> {
    const res = await s.get(path);
    expect(res.status, res.text).toBe(200);
    // v2 answers a list bare and an issue's data under `result` (the provider's quirk).
    const body = res.json() as Record<string, unknown>;
    return (body.result as Record<string, unknown> | undefined) ?? body;
  }

  it('no bar before listDd, and none for a range before it', async () => {
    // A KOSDAQ issue listed in the simulator's universe after 1996: its listing day is in range of a few pages.
    const lists = (await result('/v2/market/stocks/kosdaq/lists')).isuLists as { isuSrtCd: string }[];
    const code = lists[0]!.isuSrtCd;
    const listDd = String((await result(`/v2/market/stocks/kosdaq/${code}/master`)).listDd);
    expect(listDd).toMatch(/^\d{8}$/);
    const day = (r: Record<string, unknown>): string => String(r.trdDd);
    for (const path of [
      `/v2/market/stocks/kosdaq/${code}/history?trnsmCycleTpCd=D&inqStrtDd=19000101&inqEndDd=${listDd}&reqCnt=100`,
      `/v2/market/stocks/kosdaq/${code}/history?trnsmCycleTpCd=M&inqStrtDd=19000101&inqEndDd=${listDd}&reqCnt=100`,
    ]) {
      const rows = (await result(path)).hisLists as Record<string, unknown>[];
      expect(rows.length, path).toBeLessThanOrEqual(1);
      for (const r of rows) expect(day(r) >= listDd, `${path}: ${day(r)}`).toBe(true);
    }
    const before = (await result(`/v2/market/stocks/kosdaq/${code}/history?trnsmCycleTpCd=D&inqStrtDd=19000101&inqEndDd=19001231&reqCnt=100`)).hisLists;
    expect(before).toEqual([]);
  });
});
