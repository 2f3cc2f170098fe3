import { describe, expect, it } from 'vitest';
import type { BookRow, IntradayRow, PriceRow } from '../../src/client/index.js';
import { CandleBook, candlesOf } from '../../src/demo/bars.js';
import { compareValues, sortValue } from '../../src/demo/board.js';
import { ladder, priceDirection } from '../../src/demo/book.js';
import {
  changePct,
  chartTime,
  direction,
  fmtCompact,
  fmtDuration,
  fmtInt,
  fmtPct,
  fmtSigned,
  fmtTime,
  isoDate,
  kstClock,
  kstDate,
  secsOfTime,
} from '../../src/demo/format.js';
import { choiceProblem, dayLabel, endInputOf, endOfInput, inputOfTime, kstEpoch, timeOfInput } from '../../src/demo/replay.js';
import { rankMatches, type SymbolMatch } from '../../src/demo/search.js';
import { budgetSummary } from '../../src/demo/status.js';
import { Watchlist } from '../../src/demo/watchlist.js';

/** Pure parts of the demo page: formatting, candles, the ladder, sorting, the budget and the watchlist. */

describe('formatting', () => {
  it('writes numbers with separators and signs', () => {
    expect(fmtInt(1234567)).toBe('1,234,567');
    expect(fmtInt(null)).toBe('–');
    expect(fmtSigned(1200)).toBe('+1,200');
    expect(fmtSigned(-300)).toBe('-300');
    expect(fmtSigned(0)).toBe('0');
    expect(fmtPct(1.234)).toBe('+1.23%');
    expect(fmtPct(-0.5)).toBe('-0.50%');
    expect(fmtPct(undefined)).toBe('–');
    expect(fmtCompact(143_841_595_300)).toBe('143.8B');
    expect(fmtCompact(1_389_960_975_375)).toBe('1.4T');
    expect(fmtCompact(62_200_000)).toBe('62.2M');
    expect(fmtCompact(9_999)).toBe('9,999');
  });

  it('colours by cmpprevddTpCd, falling back to the sign of the change', () => {
    expect(['1', '2', '3', '4', '5'].map((c) => direction(c))).toEqual(['up', 'up', 'flat', 'down', 'down']);
    expect(direction(null, 500)).toBe('up');
    expect(direction(undefined, -1)).toBe('down');
    expect(direction(null, 0)).toBe('flat');
    expect(direction('3', 500)).toBe('flat');
  });

  it('computes the change in percent against the previous close', () => {
    expect(changePct(85_400, -1_200)).toBeCloseTo((-1200 / 86_600) * 100, 10);
    expect(changePct(100, 0)).toBe(0);
    expect(changePct(null, 5)).toBeUndefined();
    expect(changePct(5, 5)).toBeUndefined();
  });

  it('reads KRX times, with or without the leading zero', () => {
    expect(secsOfTime('09300356')).toBe(9 * 3600 + 30 * 60 + 3);
    expect(secsOfTime('9544500')).toBe(9 * 3600 + 54 * 60 + 45);
    expect(secsOfTime('153000')).toBe(15.5 * 3600);
    expect(secsOfTime('0930')).toBe(9.5 * 3600);
    expect(secsOfTime(9544500)).toBe(9 * 3600 + 54 * 60 + 45);
    expect(secsOfTime('25000000')).toBeUndefined();
    expect(secsOfTime(' -')).toBeUndefined();
    expect(secsOfTime(null)).toBeUndefined();
    expect(fmtTime('09300356')).toBe('09:30:03');
    expect(fmtTime(null)).toBe('–');
  });

  it('converts dates and clocks to KST and chart time', () => {
    const t = Date.UTC(2026, 10, 19, 15, 30); // 00:30 KST on the 20th
    expect(kstDate(t)).toBe('20261120');
    expect(kstClock(t)).toBe('00:30');
    expect(kstClock(Date.UTC(2026, 10, 20, 0, 0))).toBe('09:00');
    expect(chartTime('20261120', 9 * 3600)).toBe(Date.UTC(2026, 10, 20, 9, 0) / 1000);
    expect(isoDate('20261120')).toBe('2026-11-20');
    expect(fmtDuration(850)).toBe('850 ms');
    expect(fmtDuration(1000)).toBe('1.0 s');
    expect(fmtDuration(4 * 60_000)).toBe('4 min');
    expect(fmtDuration(125 * 60_000)).toBe('2 h 5 min');
  });
});

const bar = (inddTm: string, o: number, h: number, l: number, c: number, vol: number, acc: number): IntradayRow => ({
  inddTm,
  inddOpnprc: o,
  inddHgprc: h,
  inddLwprc: l,
  inddClsprc: c,
  inddTrdvol: vol,
  inddAccTrdvol: acc,
});

describe('intraday candles', () => {
  const day = '20261120';
  const at = (hhmm: number) => chartTime(day, Math.floor(hhmm / 100) * 3600 + (hhmm % 100) * 60);
  // Newest first, as the upstream sends them; each bar labelled by its END.
  const rows = [
    bar('09310000', 85_300, 85_500, 85_300, 85_400, 300, 1_000),
    bar('09290000', 85_400, 85_400, 85_400, 85_400, 200, 700),
    bar('9270000', 85_600, 85_600, 85_600, 85_600, 500, 500),
  ];

  it('puts each bar at its start, oldest first, skipping unusable rows', () => {
    const c = candlesOf([...rows, { inddTm: ' -' } as IntradayRow, { inddTm: '09320000', inddClsprc: null } as IntradayRow], day);
    expect(c.map((x) => x.time)).toEqual([at(926), at(928), at(930)]);
    expect(c[2]).toEqual({ time: at(930), open: 85_300, high: 85_500, low: 85_300, close: 85_400, volume: 300 });
  });

  it('extends the last candle with trades of its minute and starts new ones after', () => {
    const b = new CandleBook(day);
    b.load(rows);
    const u = b.trade(85_700, '09304512', 1_050);
    expect(u).toEqual({ kind: 'update', candle: { time: at(930), open: 85_300, high: 85_700, low: 85_300, close: 85_700, volume: 350 } });
    const a = b.trade(85_200, '09310100', 1_080);
    expect(a).toEqual({ kind: 'append', candle: { time: at(931), open: 85_200, high: 85_200, low: 85_200, close: 85_200, volume: 30 } });
    expect(b.trade(85_100, '09312000', 1_100)).toEqual({
      kind: 'update',
      candle: { time: at(931), open: 85_200, high: 85_200, low: 85_100, close: 85_100, volume: 50 },
    });
    expect(b.candles()).toHaveLength(4);
  });

  it('ignores late trades and asks for a reload when a new day starts', () => {
    const b = new CandleBook(day);
    b.load(rows);
    expect(b.trade(85_000, '09290000', 900)).toEqual({ kind: 'ignored' });
    expect(b.trade(85_000, 'garbage', 900)).toEqual({ kind: 'ignored' });
    b.trade(85_000, '15190000', 9_000);
    expect(b.trade(84_000, '09000500', 10)).toEqual({ kind: 'reset' });
  });

  it('takes a time of 00:00:00 for no trade (the pre-market rows before the first), not for a new day', () => {
    const b = new CandleBook(day);
    b.load(rows);
    expect(b.trade(85_000, '00000000', 0)).toEqual({ kind: 'ignored' });
    expect(b.newDay('00000000')).toBe(false);
    expect(b.candles()).toHaveLength(3);
  });

  it('tells a trade of a new day before it is applied, so a reload that still holds the last day starts the day from nothing', () => {
    const b = new CandleBook(day);
    b.load(rows);
    b.trade(85_000, '15190000', 9_000);
    expect(b.newDay('09000500')).toBe(true);
    expect(b.newDay('15000000')).toBe(false);
    expect(b.newDay('garbage')).toBe(false);
    expect(new CandleBook(day).newDay('09000500')).toBe(false);
  });

  it('starts from nothing when there is no history yet', () => {
    const b = new CandleBook(day);
    b.load([]);
    expect(b.trade(1_000, '09000100', 5)).toEqual({ kind: 'append', candle: { time: at(900), open: 1_000, high: 1_000, low: 1_000, close: 1_000, volume: 0 } });
  });
});

describe('the order-book ladder', () => {
  const row = { isuSrtCd: '005930', askordTotRqty: 900, bidordTotRqty: 1_100 } as Record<string, unknown>;
  for (let i = 1; i <= 10; i++) {
    row[`askStep${i}BstordPrc`] = 85_400 + (i - 1) * 100;
    row[`askStep${i}BstordRqty`] = i * 10;
    row[`bidStep${i}BstordPrc`] = 85_300 - (i - 1) * 100;
    row[`bidStep${i}BstordRqty`] = i === 3 ? 500 : i * 5;
  }

  it('lists ten levels a side, best first, and the largest quantity', () => {
    const l = ladder(row as unknown as BookRow);
    expect(l.asks).toHaveLength(10);
    expect(l.bids).toHaveLength(10);
    expect(l.asks[0]).toEqual({ price: 85_400, qty: 10 });
    expect(l.bids[9]).toEqual({ price: 84_400, qty: 50 });
    expect(l.maxQty).toBe(500);
    expect([l.askTotal, l.bidTotal]).toEqual([900, 1_100]);
  });

  it('keeps empty levels empty', () => {
    const l = ladder({ isuSrtCd: 'X', askStep1BstordPrc: null } as BookRow);
    expect(l.asks[0]).toEqual({ price: null, qty: null });
    expect(l.maxQty).toBe(0);
    expect(l.askTotal).toBeNull();
  });

  it('colours a level against the previous close', () => {
    expect(priceDirection(86_000, 85_000)).toBe('up');
    expect(priceDirection(84_000, 85_000)).toBe('down');
    expect(priceDirection(85_000, 85_000)).toBe('flat');
    expect(priceDirection(85_000, undefined)).toBe('flat');
  });
});

describe('board sorting', () => {
  const r = (trdPrc: number, cmpprevddPrc: number, trdTm = '09300000'): PriceRow => ({ isuSrtCd: 'X', trdPrc, cmpprevddPrc, trdTm, accTrdvol: trdPrc * 2 });

  it('reads each column’s value', () => {
    const row = r(110, 10, '09300500');
    expect(sortValue('price', 'a', row)).toBe(110);
    expect(sortValue('pct', 'a', row)).toBeCloseTo(10);
    expect(sortValue('time', 'a', row)).toBe(9 * 3600 + 30 * 60 + 5);
    expect(sortValue('volume', 'a', row)).toBe(220);
    expect(sortValue('name', '삼성전자', undefined)).toBe('삼성전자');
    expect(sortValue('price', 'a', undefined)).toBeUndefined();
  });

  it('orders numbers either way with missing values last, and names in Korean order', () => {
    const vals = [3, undefined, 10, 1];
    expect([...vals].sort((a, b) => compareValues(a, b, -1))).toEqual([10, 3, 1, undefined]);
    expect([...vals].sort((a, b) => compareValues(a, b, 1))).toEqual([1, 3, 10, undefined]);
    expect(['현대차', '기아', '삼성전자'].sort((a, b) => compareValues(a, b, 1))).toEqual(['기아', '삼성전자', '현대차']);
  });
});

describe('the budget summary', () => {
  it('reports the share left, the spending rate and the runway', () => {
    const s = budgetSummary(
      [
        { at: 0, remaining: 50_000 },
        { at: 30_000, remaining: 49_940 },
      ],
      50_000,
    );
    expect(s.left).toBeCloseTo(0.9988);
    expect(s.perMinute).toBeCloseTo(120);
    expect(s.lastsMs).toBeCloseTo((49_940 / 120) * 60_000);
  });

  it('says nothing it cannot know', () => {
    expect(budgetSummary([], null)).toEqual({ left: undefined, perMinute: undefined, lastsMs: undefined });
    expect(budgetSummary([{ at: 0, remaining: 10 }], 100)).toEqual({ left: 0.1, perMinute: undefined, lastsMs: undefined });
    expect(
      budgetSummary(
        [
          { at: 0, remaining: 10 },
          { at: 5000, remaining: 10 },
        ],
        100,
      ).lastsMs,
    ).toBeUndefined();
  });
});

describe('the watchlist', () => {
  const defaults = { kospi: ['005930', '000660'], kosdaq: ['247540'] };
  const memory = () => {
    const m = new Map<string, string>();
    return { getItem: (k: string) => m.get(k) ?? null, setItem: (k: string, v: string) => void m.set(k, v) };
  };

  it('starts from the defaults and remembers changes across page loads', () => {
    const store = memory();
    const a = new Watchlist(defaults, store);
    expect(a.codes()).toEqual(['005930', '000660']);
    expect(a.add('kospi', '000020')).toBe(true);
    expect(a.add('kospi', '000020')).toBe(false);
    a.remove('kospi', '000660');
    a.show('kosdaq');
    const b = new Watchlist(defaults, store);
    expect(b.market).toBe('kosdaq');
    expect(b.codes('kospi')).toEqual(['005930', '000020']);
    expect(b.codes()).toEqual(['247540']);
  });

  it('ignores stored garbage and works without storage', () => {
    const store = memory();
    store.setItem('krx-bridge.demo.v1', '{"market":"nyse"}');
    expect(new Watchlist(defaults, store).codes()).toEqual(['005930', '000660']);
    store.setItem('krx-bridge.demo.v1', 'not json');
    expect(new Watchlist(defaults, store).market).toBe('kospi');
    const none = new Watchlist(defaults, undefined);
    none.add('kospi', '000050');
    expect(none.codes()).toContain('000050');
  });
});

describe('search ranking', () => {
  const m = (code: string, abbr: string): SymbolMatch => ({ market: 'kosdaq', code, name: abbr, abbr });
  const found = [
    m('001540', '한국에코솔루션'),
    m('002340', '에코플라스틱스'),
    m('086520', '에코프로'),
    m('247540', '에코프로비엠'),
    m('112040', '코리아에코텍'),
  ];

  it('puts the exact code first, then code prefixes, then names that start with the query, shortest first', () => {
    expect(rankMatches('에코', found).map((x) => x.code)).toEqual(['086520', '247540', '002340', '112040', '001540']);
    expect(rankMatches('2475', found)[0]!.code).toBe('247540');
    expect(rankMatches('086520', [...found].reverse())[0]!.code).toBe('086520');
    expect(rankMatches('에코', found, 2)).toHaveLength(2);
  });
});

describe('marketMarker', () => {
  it('says closed and when the market opens only when every feed is closed', async () => {
    const { marketMarker, kstWeekdayTime } = await import('../../src/demo/format.js');
    const mon = Date.parse('2026-11-30T09:00:00+09:00');
    const sat = Date.parse('2026-11-28T12:00:00+09:00');
    expect(kstWeekdayTime(mon)).toBe('Mon 09:00');
    expect(
      marketMarker([
        { state: 'closed', opensAt: mon, asOf: sat },
        { state: 'closed', opensAt: mon },
      ]),
    ).toBe('Closed · opens Mon 09:00 · as of Sat 12:00');
    expect(marketMarker([{ state: 'closed', opensAt: mon }, { state: 'live' }])).toBeUndefined();
    expect(marketMarker([])).toBeUndefined();
    expect(marketMarker([{ state: 'closed' }])).toBe('Closed');
  });
});

describe('the chart caption', () => {
  it("says the candles are the last session's, dated, when every feed is closed on data of another day; else today's", async () => {
    const { chartCaption } = await import('../../src/demo/format.js');
    const fri = Date.parse('2026-11-27T18:00:00+09:00');
    const satNoon = Date.parse('2026-11-28T12:00:00+09:00');
    const friNight = Date.parse('2026-11-27T21:00:00+09:00');
    expect(chartCaption(satNoon, [{ state: 'closed', asOf: fri }, { state: 'closed' }])).toBe('1-minute candles · last session, Fri 27 Nov · KST');
    // Closed after the day's session: the candles are today's.
    expect(chartCaption(friNight, [{ state: 'closed', asOf: fri }])).toBe('1-minute candles · today · KST');
    // One feed live: not the closed market's last session.
    expect(chartCaption(satNoon, [{ state: 'closed', asOf: fri }, { state: 'live' }])).toBe('1-minute candles · today · KST');
    expect(chartCaption(satNoon, [{ state: 'closed' }])).toBe('1-minute candles · today · KST');
    expect(chartCaption(satNoon, [])).toBe('1-minute candles · today · KST');
    // The pre-market: live, but the symbol has not traded today (its row's time is 00:00:00); its bars are the last session's.
    const monPre = Date.parse('2026-11-30T08:45:00+09:00');
    expect(chartCaption(monPre, [{ state: 'live' }], '00000000')).toBe('1-minute candles · last session, until the day’s first trade · KST');
    expect(chartCaption(monPre, [{ state: 'live' }], '09000012')).toBe('1-minute candles · today · KST');
    expect(chartCaption(monPre, [{ state: 'live' }], null)).toBe('1-minute candles · today · KST');
    expect(chartCaption(monPre, [{ state: 'live' }], '0')).toBe('1-minute candles · last session, until the day’s first trade · KST');
    expect(chartCaption(monPre, [{ state: 'live' }], '')).toBe('1-minute candles · today · KST');
  });
});

describe('the replay control', () => {
  const day = { date: '20261124', from: '090000', to: '153001', feeds: [{ feed: 'price.kospi' }, { feed: 'book.kospi' }] };

  it('reads and writes the time inputs as HHMMSS', () => {
    expect(timeOfInput('10:01:23')).toBe('100123');
    expect(timeOfInput('10:01')).toBe('100100');
    expect(timeOfInput('24:00:00')).toBeUndefined();
    expect(timeOfInput('')).toBeUndefined();
    expect(inputOfTime('100123')).toBe('10:01:23');
    // The end input: a time input cannot show 24:00:00, the end of a day recorded to its last second.
    expect(endInputOf('240000')).toBe('23:59:59');
    expect(endInputOf('153001')).toBe('15:30:01');
    expect(endOfInput('23:59:59')).toBe('240000');
    expect(endOfInput('15:30:01')).toBe('153001');
    expect(endOfInput('24:00:00')).toBeUndefined();
  });

  it('labels a recorded day, and says why a window cannot be replayed', () => {
    expect(dayLabel(day)).toBe('2026-11-24 · 09:00:00–15:30:01 · 2 feeds');
    expect(choiceProblem(undefined, '090000', '100000')).toBe('pick a recorded day');
    expect(choiceProblem(day, undefined, '100000')).toBe('times are HH:MM:SS');
    expect(choiceProblem(day, '100000', '100000')).toBe('the start must be before the end');
    expect(choiceProblem(day, '153001', '160000')).toBe('the recording of 2026-11-24 runs from 09:00:00 to 15:30:01');
    expect(choiceProblem(day, '080000', '090000')).toBe('the recording of 2026-11-24 runs from 09:00:00 to 15:30:01');
    expect(choiceProblem(day, '080000', '090001')).toBeUndefined();
    expect(choiceProblem(day, '153000', '235959')).toBeUndefined();
  });

  it('places a KST time of a day on the epoch', () => {
    expect(kstEpoch('20261124', '100000')).toBe(Date.parse('2026-11-24T10:00:00+09:00'));
    expect(kstEpoch('20261124', '000000')).toBe(Date.parse('2026-11-23T15:00:00Z'));
  });
});
