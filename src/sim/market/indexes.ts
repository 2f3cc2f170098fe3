import type { KrxCalendar } from '../../market/calendar.js';
import { INDUSTRY_CODES } from '../data/industries.js';
import { hashString, unit } from '../random.js';
import { LiveBars } from './bars.js';
import type { PriceGrid } from './daypath.js';
import type { SeriesSpec } from './history.js';
import { isEquity, isManufacturing, type Issue, type Universe } from './universe.js';

/**
 * Market and sector indexes by the provider's industry codes, computed from
 * their constituents' live prices: value = previous close × (constituents'
 * value now / their value at the base prices).
 */

/** One index. */
export interface IndexDef {
  readonly code: string;
  readonly name: string;
  readonly market: 'kospi' | 'kosdaq' | 'sector';
  readonly members: readonly number[];
  readonly weighting: 'cap' | 'equal';
  /** Daily history spec (values with 2 decimals). */
  readonly spec: SeriesSpec;
}

/** Live state of an index during a session day. */
export interface IndexLive {
  prevClose: number;
  value: number;
  open: number;
  high: number;
  low: number;
  /** Constituents' cumulative volume (shares) and value (KRW). */
  vol: number;
  val: number;
  /** Constituents' market cap at the base prices (KRW), the divisor. */
  baseCap: number;
  trdSecs: number;
  bars: LiveBars;
}

const LEVELS: Readonly<Record<string, number>> = {
  K1: 2650,
  K2: 2620,
  K3: 2930,
  K4: 2360,
  K51: 352,
  K61: 2680,
  K62: 2470,
  K175: 9800,
  K176: 8900,
  K401: 1480,
  K402: 1650,
  K403: 1390,
  Q1: 870,
  Q2: 1790,
  Q3: 1260,
  Q4: 2340,
  Q203: 1390,
  Q204: 1210,
  S50: 5520,
  S300: 1620,
  S301: 1480,
  S441: 1330,
};

const KOSDAQ_MANUFACTURING = new Set([56, 58, 62, 65, 66, 67, 68, 70, 72, 74, 75, 77]);
const KOSDAQ_IT = new Set([41, 42, 43, 63]);

const round2 = (p: number): number => Math.max(0.01, Math.round(p * 100) / 100);

/** The grid of index levels: hundredths. */
export const INDEX_GRID: PriceGrid = { round: round2, up: (p) => round2(p + 0.01), down: (p) => round2(p - 0.01) };

function byCap(list: readonly Issue[]): Issue[] {
  return [...list].sort((a, b) => b.ref * b.listShrs - a.ref * a.listShrs);
}

function subset(code: string, parent: readonly Issue[], share: number): Issue[] {
  const h = hashString(code);
  const picked = parent.filter((i) => unit(h, i.key) < share);
  return picked.length >= 5 ? picked : parent.slice(0, Math.min(parent.length, 10));
}

function kospiMembers(code: string, n: number, eq: readonly Issue[], top: Issue[]): Issue[] {
  if (n === 1) return [...eq];
  if (n >= 2 && n <= 4) return eq.filter((i) => i.capClass === n);
  if (n === 21) return eq.filter((i) => i.sector === 21);
  if (n === 22 || n === 24 || n === 25) return eq.filter((i) => i.lowerClass === n);
  if (n === 27) return eq.filter(isManufacturing);
  if (n <= 26) return eq.filter((i) => i.sector === n);
  const k200 = top.slice(0, 200);
  if (n === 51 || n === 175 || n === 176 || n === 401) return k200;
  if (n === 61 || n === 402) return top.slice(0, 100);
  if (n === 62 || n === 403) return top.slice(0, 50);
  if (n === 165) return eq.filter((i) => i.preferred);
  if (n === 167) return k200.slice(50);
  if (n === 182) return k200.slice(10);
  if (n === 163 || n === 164) return subset(code, top.slice(0, 300), 0.17);
  return subset(code, k200, 0.3);
}

function kosdaqMembers(code: string, n: number, eq: readonly Issue[], top: Issue[]): Issue[] {
  if (n === 1) return [...eq];
  if (n === 2) return top.slice(0, 100);
  if (n === 3) return top.slice(100, 400);
  if (n === 4) return top.slice(400);
  if (n === 15) return eq.filter((i) => KOSDAQ_IT.has(i.sector));
  if (n === 24) return eq.filter((i) => KOSDAQ_MANUFACTURING.has(i.sector));
  if (n >= 151 && n <= 160)
    return subset(
      code,
      eq.filter((i) => KOSDAQ_IT.has(i.sector)),
      0.12,
    );
  if (n >= 181 && n <= 184) return eq.filter((i) => (i.key >>> 0) % 4 === n - 181);
  if (n === 203 || n === 204) return top.slice(0, 150);
  if (n > 204) return subset(code, top.slice(0, 150), 0.3);
  return eq.filter((i) => i.sector === n);
}

function sectorMembers(code: string, n: number, top: Issue[]): Issue[] {
  if (n === 50 || n === 441) return top.slice(0, 100);
  if (n === 300) return top.slice(0, 300);
  if (n === 301) return top.slice(100, 300);
  return subset(code, top.slice(0, 300), 0.15);
}

/** Every index of the provider's table with its constituents, for a universe trading on `calendar`. */
export function buildIndexes(u: Universe, seed: number, calendar: KrxCalendar): IndexDef[] {
  const eqK = u.byMarket.kospi.filter(isEquity);
  const eqQ = u.byMarket.kosdaq.filter(isEquity);
  const topK = byCap(eqK.filter((i) => !i.preferred));
  const topQ = byCap(eqQ);
  const topAll = byCap([...topK, ...topQ]);
  return INDUSTRY_CODES.map((ic) => {
    const n = Number(ic.code.slice(1));
    const members =
      ic.market === 'kospi'
        ? kospiMembers(ic.code, n, eqK, topK)
        : ic.market === 'kosdaq'
          ? kosdaqMembers(ic.code, n, eqQ, topQ)
          : sectorMembers(ic.code, n, topAll);
    const key = hashString(ic.code) ^ seed;
    const dailyVol = members.reduce((a, i) => a + i.listShrs * i.turnover, 0);
    const dailyVal = members.reduce((a, i) => a + i.listShrs * i.turnover * i.ref, 0);
    return {
      code: ic.code,
      name: ic.name,
      market: ic.market,
      members: members.map((i) => i.idx),
      weighting: /^K40|^Q204$|^S441$/.test(ic.code) ? ('equal' as const) : ('cap' as const),
      // History volumes in thousand shares and values in million KRW, as index payloads carry them.
      spec: {
        key,
        ref: LEVELS[ic.code] ?? 600 + unit(key, 7) * 4000,
        sigma: 0.011,
        round: round2,
        dailyVol: dailyVol / 1000,
        valPerVol: dailyVol > 0 ? dailyVal / dailyVol / 1000 : 0,
        calendar,
      },
    };
  });
}

/** Per-issue numbers an index reads, indexed by issue position. */
export interface Quotes {
  readonly base: Float64Array;
  readonly shares: Float64Array;
  readonly last: Float64Array;
  readonly vol: Float64Array;
  readonly val: Float64Array;
}

/** The live state of an index at the start of a day. */
export function initialIndexLive(def: IndexDef, prevClose: number, q: Quotes): IndexLive {
  let baseCap = 0;
  for (const m of def.members) baseCap += q.base[m]! * q.shares[m]!;
  return { prevClose, value: prevClose, open: 0, high: 0, low: 0, vol: 0, val: 0, baseCap, trdSecs: 0, bars: new LiveBars() };
}

/** Recomputes an index from its constituents after a step at `secs`. */
export function updateIndex(def: IndexDef, s: IndexLive, q: Quotes, secs: number): void {
  let cap = 0;
  let rel = 0;
  let vol = 0;
  let val = 0;
  const { base, shares, last } = q;
  for (const m of def.members) {
    const px = last[m]!;
    cap += px * shares[m]!;
    rel += px / base[m]!;
    vol += q.vol[m]!;
    val += q.val[m]!;
  }
  const ratio = def.weighting === 'equal' ? rel / Math.max(1, def.members.length) : s.baseCap > 0 ? cap / s.baseCap : 1;
  const value = round2(s.prevClose * ratio);
  const dVol = vol - s.vol;
  const dVal = val - s.val;
  if (dVol > 0 || s.open === 0) {
    if (s.open === 0) {
      s.open = value;
      s.high = value;
      s.low = value;
    }
    s.high = Math.max(s.high, value);
    s.low = Math.min(s.low, value);
    s.trdSecs = secs;
  }
  s.value = value;
  s.vol = vol;
  s.val = val;
  s.bars.add(secs, value, Math.round(dVol / 1000), Math.round(dVal / 1e6), Math.round(vol / 1000), Math.round(val / 1e6));
}
