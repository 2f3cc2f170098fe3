/**
 * The upstream simulator: public surface.
 */
export { Simulator, DEFAULT_API_KEY, DEFAULT_DAILY_LIMIT, type SimulatorOptions, type SimulatorAddress } from './simulator.js';
export { SimClock, type ClockMode, type ClockOptions } from './clock.js';
export { Market, sessionDateFor } from './market/market.js';
export { FaultsSchema, FaultSwitch, NON_NUMERIC, type Faults, type FaultsInput } from './server/faults.js';
export { Stats, type StatsSnapshot } from './server/stats.js';
export { DailyBudget } from './server/budget.js';
export { CONTROL_PREFIX } from './server/control.js';
export { krStandardCode, isinCheckDigit, isValidIsin } from './isin.js';
export { stockTick, tickAt, onGrid, priceLimits, FUND_TICK } from './ticks.js';
export { SimEnv, parseSimEnv } from './env.js';
