import type { KrxCalendar } from '../../market/calendar.js';
import { addDays, dayNumber } from '../calendar.js';
import { isin } from '../isin.js';
import { gauss, hashString, unit } from '../random.js';
import { LiveBars } from './bars.js';
import type { PriceGrid } from './daypath.js';

/**
 * KOSPI200 futures and options: a few listed contracts per session day,
 * priced from the live KOSPI 200 index (futures at cost of carry, options by
 * Black–Scholes), with the provider's short-code scheme
 * (`101S6000`: futures, KOSPI200, 2022, June; `201S6210`: call, strike 210).
 */

/** One listed contract. */
export interface Contract {
  readonly code: string;
  readonly isin: string;
  readonly product: 'futures' | 'options';
  readonly right?: 'C' | 'P';
  readonly strike?: number;
  /** Expiry year-month `YYYYMM`. */
  readonly expMonth: string;
  /** Last trading day `YYYYMMDD`. */
  readonly lastDay: string;
  readonly listDd: string;
  readonly korName: string;
  readonly korAbbrv: string;
  readonly key: number;
  /** Trades per second and contracts per second. */
  readonly rate: number;
  readonly volPerSec: number;
}

/** Live state of a contract during a session day. */
export interface ContractLive {
  base: number;
  last: number;
  open: number;
  high: number;
  low: number;
  vol: number;
  val: number;
  trdvol: number;
  side: number;
  trdSecs: number;
  bid: number;
  ask: number;
  bars: LiveBars;
}

/** Contract value multiplier (KRW per index point). */
export const MULTIPLIER = 250_000;
/** Annual CD rate used for carry (percent). */
export const CD_RATE = 3.5;
/** Continuous front-month futures code of the KOSPI200 market. */
export const CONTINUOUS_CODE = 'K2FA001';

const YEAR_LETTERS = 'ABCDEFGHJKLMNPQRSTVWXYZ';

function yearLetter(year: number): string {
  return YEAR_LETTERS[(((year - 2006) % 23) + 23) % 23]!;
}

function monthLetter(m: number): string {
  return m < 10 ? String(m) : 'ABC'[m - 10]!;
}

/** The second Thursday of a month (the expiry), moved back to a trading day. */
export function expiryOf(year: number, month: number, calendar: KrxCalendar): string {
  let d = `${year}${String(month).padStart(2, '0')}01`;
  let thursdays = 0;
  for (;;) {
    if (new Date(Date.UTC(year, month - 1, Number(d.slice(6)))).getUTCDay() === 4 && ++thursdays === 2) break;
    d = addDays(d, 1);
  }
  return calendar.onOrBefore(d);
}

function nextExpiries(date: string, quarterly: boolean, n: number, calendar: KrxCalendar): { year: number; month: number; last: string }[] {
  const out: { year: number; month: number; last: string }[] = [];
  let year = Number(date.slice(0, 4));
  let month = Number(date.slice(4, 6));
  while (out.length < n) {
    if (!quarterly || month % 3 === 0) {
      const last = expiryOf(year, month, calendar);
      if (last >= date) out.push({ year, month, last });
    }
    month++;
    if (month > 12) {
      month = 1;
      year++;
    }
  }
  return out;
}

function makeContract(code: string, product: 'futures' | 'options', e: { year: number; month: number; last: string }, extra: Partial<Contract>): Contract {
  const yymm = `${String(e.year).slice(2)}${String(e.month).padStart(2, '0')}`;
  const right = extra.right;
  const strikeText = extra.strike?.toFixed(1) ?? '';
  const korName = product === 'futures' ? `KOSPI200 선물 ${yymm}` : `KOSPI 200 ${right === 'C' ? '콜' : '풋'}옵션 ${yymm} ${strikeText}`;
  const korAbbrv = product === 'futures' ? `K200 선물 ${yymm}` : `K200 옵션 ${yymm} ${right}${strikeText}`;
  return {
    code,
    isin: isin(`KR4${code}`),
    product,
    expMonth: `${e.year}${String(e.month).padStart(2, '0')}`,
    lastDay: e.last,
    listDd: addDays(e.last, product === 'futures' ? -364 * 2 : -364),
    korName,
    korAbbrv,
    key: hashString(code),
    rate: product === 'futures' ? 6 : 1,
    volPerSec: product === 'futures' ? 9 : 2,
    ...extra,
  };
}

/** The contracts listed on a session day of `calendar`, given the KOSPI 200 level. */
export function listContracts(date: string, k200: number, calendar: KrxCalendar): Contract[] {
  const futures = nextExpiries(date, true, 2, calendar).map((e) => makeContract(`101${yearLetter(e.year)}${monthLetter(e.month)}000`, 'futures', e, {}));
  const [e] = nextExpiries(date, false, 1, calendar);
  const atm = Math.round(k200 / 2.5) * 2.5;
  const strikes = [Math.round((atm * 0.6) / 2.5) * 2.5, Math.round((atm * 0.6) / 2.5) * 2.5 + 2.5];
  for (let i = -5; i <= 5; i++) strikes.push(atm + i * 2.5);
  const options: Contract[] = [];
  for (const right of ['C', 'P'] as const) {
    for (const strike of strikes) {
      const digits = String(Math.floor(strike)).padStart(3, '0').slice(-3);
      const code = `${right === 'C' ? 2 : 3}01${yearLetter(e!.year)}${monthLetter(e!.month)}${digits}`;
      const c = makeContract(code, 'options', e!, { right, strike });
      options.push({ ...c, rate: Math.abs(strike - k200) < 10 ? 2 : 0.4, volPerSec: Math.abs(strike - k200) < 10 ? 3 : 0.5 });
    }
  }
  return [...futures, ...options];
}

function normCdf(x: number): number {
  // Abramowitz–Stegun 26.2.17.
  const t = 1 / (1 + 0.2316419 * Math.abs(x));
  const d = 0.3989423 * Math.exp((-x * x) / 2);
  const p = d * t * (0.3193815 + t * (-0.3565638 + t * (1.781478 + t * (-1.821256 + t * 1.330274))));
  return x >= 0 ? 1 - p : p;
}

/** Years to a contract's last trading day from a date. */
export function yearsTo(c: Contract, date: string): number {
  return Math.max(0.5, dayNumber(c.lastDay) - dayNumber(date) + 0.5) / 365;
}

/** Implied volatility of a contract (a mild smile around the money). */
export function impliedVol(c: Contract, s: number): number {
  return 0.18 + 0.25 * Math.abs(Math.log((c.strike ?? s) / s));
}

/** Theoretical price of a contract for an index level and time to expiry. */
export function theoretical(c: Contract, s: number, years: number): number {
  const r = CD_RATE / 100;
  if (c.product === 'futures') return s * (1 + r * years);
  const k = c.strike!;
  const v = impliedVol(c, s);
  const d1 = (Math.log(s / k) + (r + (v * v) / 2) * years) / (v * Math.sqrt(years));
  const d2 = d1 - v * Math.sqrt(years);
  const call = s * normCdf(d1) - k * Math.exp(-r * years) * normCdf(d2);
  return c.right === 'C' ? call : call - s + k * Math.exp(-r * years);
}

/** Puts a price onto the contract's grid: futures 0.05; options 0.01 below 10, else 0.05. */
export function gridPrice(c: Contract, p: number): number {
  const tick = c.product === 'futures' || p >= 10 ? 0.05 : 0.01;
  return Math.max(0.01, Math.round(Math.round(p / tick) * tick * 100) / 100);
}

/** One price tick of a contract at price `p`. */
export function contractTick(c: Contract, p: number): number {
  return c.product === 'futures' || p >= 10 ? 0.05 : 0.01;
}

/** The price grid of a contract (its tick changes at 10 for options). */
export function contractGrid(c: Contract): PriceGrid {
  return {
    round: (p) => gridPrice(c, p),
    up: (p) => gridPrice(c, p + contractTick(c, p)),
    down: (p) => gridPrice(c, p - contractTick(c, p - 0.001)),
  };
}

/** The live state of a contract at the start of a day. */
export function initialContractLive(base: number): ContractLive {
  return { base, last: base, open: 0, high: 0, low: 0, vol: 0, val: 0, trdvol: 0, side: 0, trdSecs: 0, bid: base, ask: base, bars: new LiveBars() };
}

/** Moves a contract after a market step, following the index level `s`. */
export function stepContract(c: Contract, l: ContractLive, s: number, date: string, k: number, secs: number, dt: number): void {
  const fair = theoretical(c, s, yearsTo(c, date)) * (1 + 0.0004 * gauss(c.key, dayNumber(date), k, 0x31));
  const mid = gridPrice(c, fair);
  l.bid = mid;
  l.ask = Math.round((mid + contractTick(c, mid)) * 100) / 100;
  const pTrade = 1 - Math.exp(-c.rate * dt);
  if (unit(c.key, dayNumber(date), k, 0x32) >= pTrade) return;
  const buy = unit(c.key, dayNumber(date), k, 0x33) < 0.5;
  const price = buy ? l.ask : l.bid;
  const qty = Math.max(1, Math.round(((c.volPerSec * dt) / pTrade) * Math.exp(0.7 * gauss(c.key, dayNumber(date), k, 0x34) - 0.25)));
  if (l.open === 0) {
    l.open = price;
    l.high = price;
    l.low = price;
  }
  l.high = Math.max(l.high, price);
  l.low = Math.min(l.low, price);
  l.last = price;
  l.vol += qty;
  l.val += Math.round(price * qty * MULTIPLIER);
  l.trdvol = qty;
  l.side = buy ? 2 : 1;
  l.trdSecs = secs;
  l.bars.add(secs, price, qty, Math.round(price * qty * MULTIPLIER), l.vol, l.val);
}
