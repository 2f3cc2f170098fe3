import { describe, expect, it } from 'vitest';
import { NEW_YEAR_HOURS, REGULAR_HOURS } from '../../src/market/session.js';
import type { Bar } from '../../src/sim/market/bars.js';
import { apportion, dayPathBars, type PriceGrid } from '../../src/sim/market/daypath.js';
import type { DayBar } from '../../src/sim/market/history.js';
import { INDEX_GRID } from '../../src/sim/market/indexes.js';
import { onGrid, roundToGrid, tickDown, tickUp } from '../../src/sim/ticks.js';

/**
 * A past day's intraday bars synthesised from its daily bar: the path's
 * open, extremes and close, the volumes, the grid and the hours.
 */

const STOCK: PriceGrid = { round: (p) => roundToGrid('stock', p), up: (p) => tickUp('stock', p), down: (p) => tickDown('stock', p) };

const day = (o: Partial<DayBar>): DayBar => ({
  date: '20261124',
  open: 50_100,
  high: 51_000,
  low: 49_500,
  close: 50_600,
  prevClose: 50_000,
  vol: 1_234_567,
  val: 62_000_000_000,
  ...o,
});

const sum = (bars: readonly Bar[], f: (b: Bar) => number) => bars.reduce((a, b) => a + f(b), 0);
const firstAt = (bars: readonly Bar[], f: (b: Bar) => boolean) => bars.findIndex(f);

/** The checks every synthesised day passes. */
function expectConsistent(d: DayBar, bars: readonly Bar[]): void {
  expect(bars.length).toBeGreaterThan(0);
  expect(bars[0]!.open).toBe(d.open);
  expect(bars.at(-1)!.close).toBe(d.close);
  expect(Math.max(...bars.map((b) => b.high))).toBe(d.high);
  expect(Math.min(...bars.map((b) => b.low))).toBe(d.low);
  expect(sum(bars, (b) => b.vol)).toBe(d.vol);
  expect(sum(bars, (b) => b.val)).toBe(d.val);
  expect(bars.at(-1)!.accVol).toBe(d.vol);
  expect(bars.at(-1)!.accVal).toBe(d.val);
  let acc = 0;
  for (const b of bars) {
    acc += b.vol;
    expect(b.accVol).toBe(acc);
    expect(b.low).toBeLessThanOrEqual(Math.min(b.open, b.close));
    expect(b.high).toBeGreaterThanOrEqual(Math.max(b.open, b.close));
  }
}

describe('a past day from its daily bar', () => {
  it.each([
    ['an ordinary day', day({})],
    ['opening at the high', day({ open: 51_000 })],
    ['opening at the low', day({ open: 49_500 })],
    ['closing at the high', day({ close: 51_000 })],
    ['closing at the low', day({ close: 49_500 })],
    ['from the high to the low', day({ open: 51_000, close: 49_500 })],
    ['a flat day', day({ open: 50_000, high: 50_000, low: 50_000, close: 50_000 })],
    ['three shares', day({ vol: 3, val: 150_000 })],
  ])('%s: open, high, low, close, volume and value as the daily bar says, on the grid', (_name, d) => {
    for (const cycle of [10, 60, 600]) {
      for (const key of [1, 2, 3]) {
        const bars = dayPathBars(d, REGULAR_HOURS, cycle, { key, grid: STOCK });
        expectConsistent(d, bars);
        for (const b of bars) for (const p of [b.open, b.high, b.low, b.close]) expect(onGrid('stock', p)).toBe(true);
      }
    }
  });

  it('reaches the extreme the open or the close does not fix first, the other by a hash of key and date', () => {
    const order = (d: DayBar, key: number) => {
      const bars = dayPathBars(d, REGULAR_HOURS, 10, { key, grid: STOCK });
      return firstAt(bars, (b) => b.high === d.high) < firstAt(bars, (b) => b.low === d.low) ? 'high' : 'low';
    };
    for (let key = 1; key <= 10; key++) {
      expect(order(day({ open: 51_000 }), key)).toBe('high');
      expect(order(day({ close: 51_000 }), key)).toBe('low');
    }
    const ordinary = Array.from({ length: 40 }, (_, key) => order(day({}), key));
    expect(new Set(ordinary)).toEqual(new Set(['high', 'low']));
    const byDate = ['20261123', '20261124', '20261125', '20261126', '20261127', '20261130', '20261201', '20261202'].map((date) => order(day({ date }), 1));
    expect(new Set(byDate)).toEqual(new Set(['high', 'low']));
  });

  it('trades from the open to the closing auction, labelled by the end of each bar, heavier at both ends than at midday', () => {
    const bars = dayPathBars(day({}), REGULAR_HOURS, 10, { key: 7, grid: STOCK });
    expect(bars[0]!.end).toBe(9 * 3600 + 10);
    expect(bars.at(-1)!.end).toBe(15.5 * 3600 + 10);
    expect(bars.every((b, i) => i === 0 || b.end > bars[i - 1]!.end)).toBe(true);
    const hourly = dayPathBars(day({}), REGULAR_HOURS, 600, { key: 7, grid: STOCK });
    const volIn = (from: number, to: number) =>
      sum(
        hourly.filter((b) => b.end > from * 3600 && b.end <= to * 3600),
        (b) => b.vol,
      );
    expect(volIn(9, 10)).toBeGreaterThan(1.5 * volIn(12, 13));
    expect(volIn(14.5, 15.7)).toBeGreaterThan(1.5 * volIn(12, 13));
  });

  it('starts at 10:00 on a late-open day', () => {
    const bars = dayPathBars(day({}), NEW_YEAR_HOURS, 10, { key: 7, grid: STOCK });
    expect(bars[0]!.end).toBe(10 * 3600 + 10);
    expectConsistent(day({}), bars);
  });

  it('is the same for the same inputs, other for another key', () => {
    const a = dayPathBars(day({}), REGULAR_HOURS, 60, { key: 5, grid: STOCK });
    expect(dayPathBars(day({}), REGULAR_HOURS, 60, { key: 5, grid: STOCK })).toEqual(a);
    expect(dayPathBars(day({}), REGULAR_HOURS, 60, { key: 6, grid: STOCK })).not.toEqual(a);
  });

  it('has no bars for a day without trades; an index prints every step even without volume', () => {
    expect(dayPathBars(day({ open: 50_000, high: 50_000, low: 50_000, close: 50_000, vol: 0, val: 0 }), REGULAR_HOURS, 60, { key: 1, grid: STOCK })).toEqual(
      [],
    );
    const index = { ...day({}), open: 2650.12, high: 2671.42, low: 2640.05, close: 2660.5, vol: 12, val: 900 };
    const bars = dayPathBars(index, REGULAR_HOURS, 10, { key: 3, grid: INDEX_GRID, idle: true });
    expect(bars).toHaveLength((15 * 3600 + 20 * 60 - 9 * 3600) / 10 + 1);
    expectConsistent(index, bars);
    for (const b of bars) expect(Math.round(b.close * 100) / 100).toBe(b.close);
  });
});

describe('apportion', () => {
  it.each([
    [10, [1, 1, 1], [3, 4, 3]],
    [0, [1, 2], [0, 0]],
    [7, [0, 0], [0, 7]],
    [5, [1, 0, 4], [1, 0, 4]],
  ])('%i over %j is %j', (total, weights, out) => {
    expect(apportion(total, weights)).toEqual(out);
  });
});
