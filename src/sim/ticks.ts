/**
 * The KRX price grid: tick sizes, rounding to the grid and daily price
 * limits. Pure functions; prices in KRW.
 */

/** Tick size of a stock at price `p` (KRW), per the KRX table. */
export function stockTick(p: number): number {
  if (p < 2_000) return 1;
  if (p < 5_000) return 5;
  if (p < 20_000) return 10;
  if (p < 50_000) return 50;
  if (p < 200_000) return 100;
  if (p < 500_000) return 500;
  return 1_000;
}

/** Tick size of ETFs, ETNs and ELWs: 5 KRW at every price. */
export const FUND_TICK = 5;

/** How a symbol's price grid is defined. */
export type Grid = 'stock' | 'fund';

/** Tick size at price `p` on a grid. */
export function tickAt(grid: Grid, p: number): number {
  return grid === 'fund' ? FUND_TICK : stockTick(p);
}

/** True when `p` is a positive price on the grid. */
export function onGrid(grid: Grid, p: number): boolean {
  return p > 0 && Number.isInteger(p) && p % tickAt(grid, p) === 0;
}

/** The highest grid price not above `p` (at least one tick). */
export function floorToGrid(grid: Grid, p: number): number {
  const t = tickAt(grid, p);
  return Math.max(t, Math.floor(p / t) * t);
}

/** The lowest grid price not below `p`. */
export function ceilToGrid(grid: Grid, p: number): number {
  const f = floorToGrid(grid, p);
  return f >= p ? f : tickUp(grid, f);
}

/** The nearest grid price to `p`. */
export function roundToGrid(grid: Grid, p: number): number {
  const lo = floorToGrid(grid, p);
  const hi = tickUp(grid, lo);
  return p - lo < hi - p ? lo : hi;
}

/** One tick above grid price `p` (the tick of the band `p` is in). */
export function tickUp(grid: Grid, p: number): number {
  return p + tickAt(grid, p);
}

/** One tick below grid price `p` (the tick of the band just below `p`). */
export function tickDown(grid: Grid, p: number): number {
  return p - tickAt(grid, p - 1);
}

/** Daily price limits: base ±30%, truncated towards the base onto the grid. */
export function priceLimits(grid: Grid, base: number, pct = 0.3): { upper: number; lower: number } {
  return { upper: floorToGrid(grid, base * (1 + pct)), lower: ceilToGrid(grid, base * (1 - pct)) };
}
