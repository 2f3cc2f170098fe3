import { gauss } from '../random.js';

/**
 * Trading by investor type: an issue's (or contract's) cumulative volume
 * split over the provider's investor codes with weights fixed per issue and
 * day. Base codes add up to the total on each side; the aggregate codes are
 * sums of base codes:
 * 08 institutions = 01+02+03+04+05+06+13, 11 foreigners = 14+15,
 * 16 other = 07+09, 12 all = 08+10+11+16.
 */

/** Base investor codes with their typical share of volume. */
const BASE: readonly (readonly [string, number])[] = [
  ['01', 0.1],
  ['02', 0.015],
  ['03', 0.03],
  ['04', 0.005],
  ['05', 0.003],
  ['06', 0.04],
  ['07', 0.002],
  ['13', 0.02],
  ['09', 0.06],
  ['10', 0.5],
  ['14', 0.2],
  ['15', 0.025],
];

const AGGREGATES: Readonly<Record<string, readonly string[]>> = {
  '08': ['01', '02', '03', '04', '05', '06', '13'],
  '11': ['14', '15'],
  '16': ['07', '09'],
};

/** Volume and value of one investor type on each side. */
export interface InvestorFlow {
  askVol: number;
  askVal: number;
  bidVol: number;
  bidVal: number;
}

/** Flows by investor code, `01`..`16`. */
export type InvestorFlows = Map<string, InvestorFlow>;

function split(total: number, weights: number[]): number[] {
  const sum = weights.reduce((a, b) => a + b, 0);
  const parts = weights.map((w) => Math.floor((total * w) / sum));
  const rest = total - parts.reduce((a, b) => a + b, 0);
  const individual = BASE.findIndex(([c]) => c === '10');
  parts[individual] = parts[individual]! + rest;
  return parts;
}

function weights(key: number, day: number, side: number): number[] {
  return BASE.map(([, w], i) => w * Math.exp(0.5 * gauss(key, day, side, i, 0x1f)));
}

/** The flows of one issue: `vol` shares worth `val` split by investor type. */
export function issueFlows(key: number, day: number, vol: number, val: number): InvestorFlows {
  const avg = vol > 0 ? val / vol : 0;
  const ask = split(vol, weights(key, day, 1));
  const bid = split(vol, weights(key, day, 2));
  const out: InvestorFlows = new Map();
  BASE.forEach(([code], i) => {
    out.set(code, { askVol: ask[i]!, askVal: ask[i]! * avg, bidVol: bid[i]!, bidVal: bid[i]! * avg });
  });
  return out;
}

/** Adds `b` into `a` (both base-code flows). */
export function addFlows(a: InvestorFlows, b: InvestorFlows): void {
  for (const [code, f] of b) {
    const t = a.get(code);
    if (!t) a.set(code, { ...f });
    else {
      t.askVol += f.askVol;
      t.askVal += f.askVal;
      t.bidVol += f.bidVol;
      t.bidVal += f.bidVal;
    }
  }
}

/** Empty base-code flows. */
export function emptyFlows(): InvestorFlows {
  return new Map(BASE.map(([code]) => [code, { askVol: 0, askVal: 0, bidVol: 0, bidVal: 0 }]));
}

/** All sixteen codes in order, aggregates included. */
export function withAggregates(base: InvestorFlows): [string, InvestorFlow][] {
  const sum = (codes: readonly string[]): InvestorFlow => {
    const t = { askVol: 0, askVal: 0, bidVol: 0, bidVal: 0 };
    for (const c of codes) {
      const f = base.get(c);
      if (!f) continue;
      t.askVol += f.askVol;
      t.askVal += f.askVal;
      t.bidVol += f.bidVol;
      t.bidVal += f.bidVal;
    }
    return t;
  };
  const all = new Map(base);
  for (const [code, parts] of Object.entries(AGGREGATES)) all.set(code, sum(parts));
  all.set('12', sum(['08', '10', '11', '16'].flatMap((c) => AGGREGATES[c] ?? [c])));
  const codes = Array.from({ length: 16 }, (_, i) => String(i + 1).padStart(2, '0'));
  return codes.map((c) => [c, all.get(c) ?? { askVol: 0, askVal: 0, bidVol: 0, bidVal: 0 }]);
}
