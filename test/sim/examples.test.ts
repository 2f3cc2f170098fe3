import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays } from '../../src/market/calendar.js';
import { startSim, type Running } from './helpers.js';
import { declaredOf, shapeDiff } from './shape.js';

/**
 * Every published example of the provider, asked of the simulator: the
 * answer must have the example's keys and the example's JSON type per key.
 */

const fixture = JSON.parse(readFileSync(new URL('../fixtures/provider-examples-v3.json', import.meta.url), 'utf8')) as {
  examples: Record<string, unknown>;
};
const examples = Object.entries(fixture.examples);

let s: Running;
const substitutes: Record<string, string> = {};

beforeAll(async () => {
  s = await startSim({ clock: 'open' });
  // The examples' 2022 contracts map to the structurally equal contracts the market lists today.
  const fut = s.sim.market.contracts.filter((c) => c.product === 'futures');
  const calls = s.sim.market.contracts.filter((c) => c.right === 'C');
  substitutes['101S6000'] = fut[0]!.code;
  substitutes['201S6210'] = calls[0]!.code;
  substitutes['201S6212'] = calls[1]!.code;
});

afterAll(() => s.stop());

function rewrite(path: string): string {
  let p = path;
  for (const [from, to] of Object.entries(substitutes)) p = p.replace(`/${from}/`, `/${to}/`);
  // Contracts listed this year have no 2022 history: ask for the last 30 days instead (by the calendar: in January, YYYYMMDD − 100 is month 00).
  if (p.includes('/derivative/') && p.includes('/history')) {
    const to = s.sim.market.lastCompleteDay();
    p = p.replace(/inqStrtDd=\d{8}&inqEndDd=\d{8}/, `inqStrtDd=${addDays(to, -30)}&inqEndDd=${to}`);
  }
  // Intraday bars are those of the day asked for: the stock examples ask for a Sunday (20220501), and today's contracts did not trade in 2022.
  if (p.includes('/intraday?')) p = p.replace(/inqStrtDd=\d{8}/, `inqStrtDd=${s.sim.market.lastCompleteDay()}`);
  return p;
}

describe('provider examples', () => {
  it('covers the fixture', () => {
    expect(examples.length).toBeGreaterThan(60);
  });

  it.each(examples)('%s has the example shape', async (path, example) => {
    const p = rewrite(path);
    const res = await s.get(p);
    expect(res.status, res.text).toBe(200);
    expect(shapeDiff(example, res.json(), declaredOf(p.split('?')[0]!))).toEqual([]);
  });

  it('keeps the example codes and quirks', async () => {
    const list = (await s.get('/v3/market/closed/kosdaq/lists')).json() as { isuLists: Record<string, unknown>[] };
    const ea = list.isuLists.find((r) => r.isuSrtCd === '900110')!;
    expect(ea).toMatchObject({ isuCd: 'HK0000057197', isuKorAbbr: '이스트아시아홀딩스', map_to: '900110*003' });
    const rank = (await s.get('/v3/market/realtime/kospi/stocks/005930/traderanking')).json() as { result: Record<string, unknown> };
    expect(rank.result.isuSrtCd).toBe('005930*001');
    const master = (await s.get('/v3/market/closed/kospi/005930/master')).json() as { result: Record<string, unknown> };
    expect(master.result).toMatchObject({
      isuCd: 'KR7005930003',
      isuKorAbbrv: '삼성전자',
      isuEngNm: 'SamsungElec',
      invstcautnRemndIsuYn: ' -',
      idxIndMidclssCd: 13,
    });
    expect(typeof master.result.trdDd).toBe('number');
  });
});
