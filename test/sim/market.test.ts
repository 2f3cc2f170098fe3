import { describe, expect, it } from 'vitest';
import { isValidIsin, krStandardCode, isinCheckDigit } from '../../src/sim/isin.js';
import { KrxCalendar } from '../../src/market/calendar.js';
import { Sessions } from '../../src/market/session.js';
import { Market } from '../../src/sim/market/market.js';
import { COUNTS, buildUniverse } from '../../src/sim/market/universe.js';
import { floorToGrid, onGrid, priceLimits, stockTick, tickAt, tickDown, tickUp } from '../../src/sim/ticks.js';
import { changeCode } from '../../src/sim/market/walk.js';

/**
 * The market model: price grid, limits, standard codes, listing counts,
 * determinism and the invariants every issue keeps while it trades.
 */

const START = { date: '20250604', secs: 10 * 3600 };

describe('price grid', () => {
  it.each([
    [1_999, 1],
    [2_000, 5],
    [4_995, 5],
    [5_000, 10],
    [19_990, 10],
    [20_000, 50],
    [49_950, 50],
    [50_000, 100],
    [199_900, 100],
    [200_000, 500],
    [499_500, 500],
    [500_000, 1_000],
  ])('tick at %d is %d', (p, t) => {
    expect(stockTick(p)).toBe(t);
  });

  it('funds tick by 5 at every price', () => {
    expect(tickAt('fund', 1_000)).toBe(5);
    expect(tickAt('fund', 100_000)).toBe(5);
  });

  it('steps across band edges onto the grid', () => {
    expect(tickUp('stock', 1_999)).toBe(2_000);
    expect(tickDown('stock', 2_000)).toBe(1_999);
    expect(tickDown('stock', 5_000)).toBe(4_995);
    expect(tickUp('stock', 49_950)).toBe(50_000);
    expect(floorToGrid('stock', 52_345)).toBe(52_300);
  });

  it('limits are ±30% truncated onto the grid', () => {
    expect(priceLimits('stock', 67_400)).toEqual({ upper: 87_600, lower: 47_200 });
    expect(priceLimits('stock', 505_000)).toEqual({ upper: 656_000, lower: 353_500 });
    expect(priceLimits('fund', 35_290)).toEqual({ upper: 45_875, lower: 24_705 });
  });
});

describe('standard codes', () => {
  it('computes KRX check digits', () => {
    expect(krStandardCode('005930')).toBe('KR7005930003');
    expect(krStandardCode('000660')).toBe('KR7000660001');
    expect(krStandardCode('069500')).toBe('KR7069500007');
    expect(krStandardCode('247540')).toBe('KR7247540008');
    expect(isinCheckDigit('KR4101S6000')).toBe(8);
  });

  it('validates foreign and derivative codes', () => {
    for (const c of ['HK0000057197', 'USU652221081', 'KR4201S62101', 'KR4201S62127', 'US0378331005']) expect(isValidIsin(c)).toBe(true);
    expect(isValidIsin('KR7005930004')).toBe(false);
  });
});

describe('universe', () => {
  const u = buildUniverse(7);

  it('lists 4,000–5,000 issues in the documented proportions', () => {
    expect(u.issues.length).toBeGreaterThanOrEqual(4_000);
    expect(u.issues.length).toBeLessThanOrEqual(5_000);
    expect(u.byMarket.kospi.filter((i) => i.group === 'EF').length).toBe(COUNTS.etfs);
    expect(u.byMarket.kospi.filter((i) => i.group === 'EN').length).toBe(COUNTS.etns);
    expect(u.byMarket.kosdaq.length).toBe(COUNTS.kosdaq);
    expect(u.byMarket.konex.length).toBe(COUNTS.konex);
  });

  it('has unique codes, valid standard codes and the real large caps', () => {
    expect(new Set(u.issues.map((i) => i.code)).size).toBe(u.issues.length);
    for (const i of u.issues) expect(isValidIsin(i.isin), i.isin).toBe(true);
    expect(u.byCode.get('000660')).toMatchObject({ korAbbrv: 'SK하이닉스', isin: 'KR7000660001', market: 'kospi' });
    expect(u.byCode.get('247540')).toMatchObject({ korAbbrv: '에코프로비엠', market: 'kosdaq' });
    expect(u.byCode.get('069500')).toMatchObject({ group: 'EF', grid: 'fund' });
    const foreign = u.byMarket.kosdaq.filter((i) => i.group === 'FS');
    expect(foreign.length).toBeGreaterThanOrEqual(5);
    for (const f of foreign) expect(f.code).toMatch(/^9\d{5}$/);
    expect(new Set(foreign.map((f) => f.isin.slice(0, 2)))).toEqual(new Set(['HK', 'KY', 'US']));
    expect(u.issues.some((i) => /[A-Z]/.test(i.code))).toBe(true);
    expect(u.byMarket.kospi.some((i) => i.korAbbrv.startsWith('KODEX ') || i.korAbbrv.startsWith('TIGER '))).toBe(true);
    expect(u.byMarket.kospi.filter((i) => i.group === 'EN').every((i) => i.korAbbrv.includes('ETN'))).toBe(true);
  });
});

describe('market', () => {
  it('is deterministic for a seed', () => {
    const a = new Market(11, START);
    const b = new Market(11, START);
    for (let k = 1; k <= 20; k++) {
      a.advance({ ...START, secs: START.secs + k });
      b.advance({ ...START, secs: START.secs + k });
      expect(a.live.map((l) => l.last)).toEqual(b.live.map((l) => l.last));
    }
    expect(a.live).toEqual(b.live);
    const c = new Market(12, START);
    expect(c.live.map((l) => l.last)).not.toEqual(a.live.map((l) => l.last));
  });

  it('keeps every issue on the grid, inside its limits and consistent after many ticks', () => {
    const m = new Market(3, START);
    for (let k = 1; k <= 200; k++) m.advance({ ...START, secs: START.secs + k });
    // Limit runners reach their limit in the afternoon.
    const late = { date: START.date, secs: 15 * 3600 };
    m.advance(late);
    for (let k = 1; k <= 100; k++) m.advance({ ...late, secs: late.secs + k });
    let limitMoves = 0;
    const bad: string[] = [];
    const check = (ok: boolean, what: string) => {
      if (!ok) bad.push(what);
    };
    for (const issue of m.universe.issues) {
      if (issue.market === 'konex') continue;
      const p = m.params[issue.idx]!;
      const l = m.live[issue.idx]!;
      const c = issue.code;
      check(onGrid(issue.grid, p.base), `${c} base ${p.base} off grid`);
      check(onGrid(issue.grid, l.last), `${c} last ${l.last} off grid`);
      check(l.last >= p.lower && l.last <= p.upper, `${c} last ${l.last} outside ${p.lower}..${p.upper}`);
      check(p.upper <= p.base * 1.3 && p.lower >= p.base * 0.7, `${c} limits wider than ±30%`);
      if (p.halted) {
        check(l.trades === 0, `${c} halted but traded`);
        continue;
      }
      if (l.trades > 0) check(l.low <= Math.min(l.open, l.last) && l.high >= Math.max(l.open, l.last), `${c} OHLC inconsistent`);
      check(l.val >= l.vol * p.lower && l.val <= l.vol * p.upper, `${c} value inconsistent with volume`);
      const code = changeCode(p, l.last);
      if (code === '1' || code === '4') limitMoves++;
      else if (l.bid > 0 && l.ask > 0) check(l.ask > l.bid, `${c} crossed book`);
    }
    expect(bad).toEqual([]);
    expect(limitMoves).toBeGreaterThan(0);
    expect(m.params.filter((p) => p.halted).length).toBeGreaterThan(0);
  });

  it('moves list prices from one tick to the next, large caps nearly always trading', () => {
    const m = new Market(5, START);
    const before = m.live.map((l) => l.last);
    const samsung = m.universe.byCode.get('005930')!;
    const vol0 = m.live[samsung.idx]!.vol;
    m.advance({ ...START, secs: START.secs + 1 });
    const changed = m.live.filter((l, i) => l.last !== before[i]).length;
    expect(changed).toBeGreaterThan(100);
    expect(m.live[samsung.idx]!.vol).toBeGreaterThan(vol0);
  });

  it('replays an issue day into bars that add up to its live totals', () => {
    const m = new Market(9, START);
    for (let k = 1; k <= 30; k++) m.advance({ ...START, secs: START.secs + k * 7 });
    const issue = m.universe.byCode.get('005930')!;
    const l = m.live[issue.idx]!;
    const bars = m.issueBars(issue, 60);
    expect(bars.reduce((a, b) => a + b.vol, 0)).toBe(l.vol);
    expect(bars.at(-1)!.accVal).toBe(l.val);
    expect(bars.at(-1)!.close).toBe(l.last);
    expect(Math.max(...bars.map((b) => b.high))).toBe(l.high);
  });

  it('chains the previous close into base prices and history', () => {
    const m = new Market(2, START);
    const issue = m.universe.byCode.get('005930')!;
    // 2025-06-03 was the presidential election, a holiday: the trading day before June 4 is June 2.
    const prev = m.issueDay(issue, '20250602');
    expect(m.params[issue.idx]!.base).toBe(prev.close);
    expect(m.issueDay(issue, '20250530').close).toBe(prev.prevClose);
  });

  it('rolls the day at 08:30 and carries the live close into the next base price', () => {
    const m = new Market(4, { date: '20250604', secs: 15 * 3600 });
    m.advance({ date: '20250604', secs: 19 * 3600 });
    const issue = m.universe.byCode.get('000660')!;
    const close = m.live[issue.idx]!.last;
    expect(m.closed).toBe(true);
    m.advance({ date: '20250605', secs: 8.5 * 3600 + 1 });
    expect(m.sessionDate).toBe('20250605');
    expect(m.params[issue.idx]!.base).toBe(close);
    expect(m.issueDay(issue, '20250604').close).toBe(close);
  });

  it('trades on the sessions it is given: a late pre-market, an operator’s closure', () => {
    // 2027-01-04, the first trading day: the pre-market starts at 09:30, so at 09:10 the market still holds 2026-12-30.
    const late = new Market(4, { date: '20270104', secs: 9 * 3600 + 600 });
    expect(late.sessionDate).toBe('20261230');
    late.advance({ date: '20270104', secs: 9 * 3600 + 1800 });
    expect(late.sessionDate).toBe('20270104');
    expect(late.phase()).toBe('pre');
    late.advance({ date: '20270104', secs: 10 * 3600 + 300 });
    expect(late.phase()).toBe('regular');
    const closedWed = new Market(4, START, new Sessions(new KrxCalendar(['20250604'])));
    expect(closedWed.sessionDate).toBe('20250602');
    expect(closedWed.phase()).toBe('closed');
  });
});
