import { SELECTIVE_MASTER_FIELDS } from '../../upstream/fields.js';
import { addDays, prevTradingDay, secsOf, timeNumber, tradingDaysBack } from '../calendar.js';
import { selectBars } from '../market/bars.js';
import { dailyBar, periodBars, type DayBar, type Period } from '../market/history.js';
import { issueFlows, withAggregates } from '../market/investors.js';
import type { Market } from '../market/market.js';
import { isEquity, isManufacturing, type Issue } from '../market/universe.js';
import { changeCode } from '../market/walk.js';
import { MEMBERS } from '../data/name-parts.js';
import { gauss, hashString, unit } from '../random.js';
import { tickDown, tickUp } from '../ticks.js';
import { dateNum, isV2, issueOf, ok, r2, Refused, type Builder, type Ctx } from './context.js';

/**
 * Per-issue stock endpoints: master data, prices, order book, investors,
 * trader ranking, short selling, foreign holding, history and intraday bars.
 */

/** Membership flags of an issue (from the index constituents). */
function inIndex(m: Market, code: string, issue: Issue): boolean {
  return m.indexByCode.get(code)?.members.includes(issue.idx) ?? false;
}

/** The price fields of the per-issue and multi-quote price endpoints. */
export function priceRow(m: Market, issue: Issue): Record<string, unknown> {
  const p = m.params[issue.idx]!;
  const l = m.live[issue.idx]!;
  return {
    isuSrtCd: issue.code,
    trdPrc: l.last,
    cmpprevddTpCd: changeCode(p, l.last),
    opnprc: l.open,
    hgprc: l.high,
    lwprc: l.low,
    accTrdvol: l.vol,
    trdTm: l.trdSecs ? timeNumber(l.trdSecs) : 0,
    trdvol: l.trdvol,
    accTrdval: l.val,
    cmpprevddPrc: l.last - p.base,
    bidordPrc_1: l.bid,
    askordPrc_1: l.ask,
    lstAskbidTpCd: l.side || 1,
  };
}

/** The CLOSE fields of an issue (current or closing quote). */
export function closeRow(m: Market, issue: Issue): Record<string, unknown> {
  const p = m.params[issue.idx]!;
  const l = m.live[issue.idx]!;
  return {
    isuSrtCd: issue.code,
    trdPrc: l.last,
    cmpprevddTpCd: changeCode(p, l.last),
    opnprc: l.open,
    hgprc: l.high,
    lwprc: l.low,
    accTrdvol: l.vol,
    accTrdval: l.val,
    cmpprevddPrc: l.last - p.base,
  };
}

/** Resting quantity at book level `level` (1 = best) of one side; stable for three generations. */
export function levelQty(m: Market, issue: Issue, side: 'ask' | 'bid', level: number): number {
  const p = m.params[issue.idx]!;
  const scale = Math.max(10, p.volPerSec * 40) * (1 + level * 0.25);
  return Math.max(1, Math.round(scale * Math.exp(0.9 * gauss(p.key, Math.floor(m.generation / 3), level, side === 'ask' ? 1 : 2))));
}

function levels(m: Market, issue: Issue, side: 'ask' | 'bid', best: number): [number, number][] {
  const p = m.params[issue.idx]!;
  const out: [number, number][] = [];
  let px = best;
  for (let i = 1; i <= 10; i++) {
    if (px <= 0 || px > p.upper || px < p.lower) {
      out.push([0, 0]);
      continue;
    }
    out.push([px, levelQty(m, issue, side, i)]);
    px = side === 'ask' ? tickUp(p.grid, px) : tickDown(p.grid, px);
  }
  return out;
}

/** The 10-level order book of an issue (ORDERBOOK-10 fields). */
export function orderbookRow(m: Market, issue: Issue): Record<string, unknown> {
  const l = m.live[issue.idx]!;
  const p = m.params[issue.idx]!;
  const halted = p.halted;
  const asks = halted ? [] : levels(m, issue, 'ask', l.ask);
  const bids = halted ? [] : levels(m, issue, 'bid', l.bid);
  const row: Record<string, unknown> = { isuSrtCd: issue.code };
  for (let i = 0; i < 10; i++) row[`askStep${i + 1}BstordPrc`] = asks[i]?.[0] ?? 0;
  for (let i = 0; i < 10; i++) row[`askStep${i + 1}BstordRqty`] = asks[i]?.[1] ?? 0;
  for (let i = 0; i < 10; i++) row[`bidStep${i + 1}BstordPrc`] = bids[i]?.[0] ?? 0;
  for (let i = 0; i < 10; i++) row[`bidStep${i + 1}BstordRqty`] = bids[i]?.[1] ?? 0;
  const afterClose = m.closed;
  const openingVol = Math.round(p.volPerSec * 120 * (0.5 + unit(p.key, 0x41)));
  Object.assign(row, {
    askordTotRqty: asks.reduce((a, [, q]) => a + q, 0),
    bidordTotRqty: bids.reduce((a, [, q]) => a + q, 0),
    pstoffhrAskTotOrdRqty: afterClose ? Math.round(p.volPerSec * 20 * unit(p.key, m.generation, 0x42)) : 0,
    pstoffhrBidTotOrdRqty: afterClose ? Math.round(p.volPerSec * 20 * unit(p.key, m.generation, 0x43)) : 0,
    accTrdvol: l.vol,
    deemTrdPrc: l.last,
    deemTrdvol: halted ? 0 : Math.round(10 * gauss(p.key, m.generation, 0x44)),
    deemAccTrdvol: halted ? 0 : openingVol,
  });
  return row;
}

function flags(m: Market, issue: Issue): Record<string, string> {
  const kospi = issue.market === 'kospi';
  return {
    mfindYn: isManufacturing(issue) ? 'Y' : 'N',
    kospi100Yn: kospi ? 'Y' : '0',
    kospi50Yn: kospi ? (inIndex(m, 'K62', issue) ? 'Y' : 'N') : ' -',
    kospiYn: kospi && inIndex(m, 'K61', issue) ? 'Y' : 'N',
    smeYn: !kospi && issue.capClass === 4 ? 'Y' : 'N',
    krx100IsuYn: inIndex(m, 'S50', issue) ? 'Y' : 'N',
  };
}

function fundamentals(issue: Issue, base: number): Record<string, number> {
  if (!isEquity(issue)) return { eps: 0, bps: 0, per: 0, pbr: 0, divYd: 0, dps: 0 };
  const eps = Math.max(1, Math.round(issue.ref * (0.02 + 0.1 * unit(issue.key, 0x61))));
  const bps = Math.max(1, Math.round(issue.ref * (0.4 + 1.6 * unit(issue.key, 0x62))));
  const dps = Math.round(eps * 0.25);
  return { eps, bps, per: r2(base / eps), pbr: r2(base / bps), divYd: r2((dps / base) * 100), dps };
}

/** The master record of an issue, with the value types the provider's example has. */
export function masterRecord(m: Market, issue: Issue, v2: boolean): Record<string, unknown> {
  const p = m.params[issue.idx]!;
  const prev = dailyBar(m.specOf(issue), prevTradingDay(m.sessionDate), m.issueOverrides(issue));
  const kospi = issue.market === 'kospi';
  const f = fundamentals(issue, p.base);
  const fund = issue.group === 'EF';
  return {
    isuSrtCd: issue.code,
    prevddClsprc: p.base,
    prevddAccTrdvol: prev.vol,
    prevddAccTrdval: prev.val,
    prevddNav: fund ? r2(p.base * (1 + 0.001 * gauss(issue.key, prev.date.length, 0x63))) : 0,
    trdDd: dateNum(m.sessionDate),
    acntclsMm: '12',
    acntclsCd: '000000000001',
    ...f,
    basPrc: p.base,
    arrantrdYn: 'N',
    isuKorAbbrv: issue.korAbbrv,
    [v2 ? 'IsuEngNm' : 'isuEngNm']: issue.engName,
    isuCd: issue.isin,
    listDd: dateNum(issue.listDd),
    parval: issue.parval,
    admisuYn: unit(issue.key, 0x64) < 0.01 ? 'Y' : 'N',
    mktWarnTpCd: unit(issue.key, 0x65) < 0.01 ? '01' : '00',
    haltYn: p.halted ? 'Y' : 'N',
    isuPrc: kospi ? 0 : null,
    uplmtprc: p.upper,
    lwlmtprc: p.lower,
    sbPrc: Math.floor((p.base * (kospi ? 0.8 : 0.7)) / 10) * 10,
    listShrs: issue.listShrs,
    regulssQtyUnit: 1,
    mktcapScaleCd: issue.capClass,
    invstcautnRemndIsuYn: kospi ? ' -' : 'N',
    srttrmOverheatIsuTpCd: '0',
    secugrpId: issue.group,
    creditOrdPosblYn: isEquity(issue) && issue.capClass !== 4 ? 'Y' : 'N',
    adjStkprcCalcYn: 'N',
    idxIndMidclssCd: issue.sector,
    ...flags(m, issue),
  };
}

/** Daily bars of an issue over `days` trading days back from the last complete day. */
function recent(m: Market, issue: Issue, days: number): DayBar[] {
  const over = m.issueDaily(issue);
  return tradingDaysBack(m.lastCompleteDay(), days).map((d) => dailyBar(m.specOf(issue), d, over));
}

function shortRow(m: Market, issue: Issue, bar: DayBar): Record<string, number> {
  const key = hashString(bar.date) ^ issue.key;
  const lend = Math.round(issue.listShrs * (0.01 + 0.02 * unit(issue.key, 0x81)) * (1 + 0.05 * Math.sin(Number(bar.date) / 37)));
  const vol = Math.round(bar.vol * (0.02 + 0.04 * unit(key, 0x82)));
  return {
    trdDd: dateNum(bar.date),
    lendBalQty: lend,
    lendBalAmt: Math.round((lend * bar.close) / 1000),
    srtsellBal: Math.round(lend * 0.07),
    srtsellTrdVol: vol,
    srtsellTrdAmt: vol * bar.close,
  };
}

function extraFields(m: Market, issue: Issue): Record<string, unknown> {
  const bars = recent(m, issue, 250);
  const avg = (n: number, f: (b: DayBar) => number) => Math.round(bars.slice(0, n).reduce((a, b) => a + f(b), 0) / Math.max(1, Math.min(n, bars.length)));
  const out: Record<string, unknown> = {};
  const base = m.params[issue.idx]!.base;
  for (const n of [3, 5, 10, 20, 40, 60, 120, 250]) {
    out[`dd${n}AvgPrc`] = avg(n, (b) => b.close);
    out[`dd${n}AvgTrdVol`] = avg(n, (b) => b.vol);
    out[`dd${n}AvgTrdAmt`] = avg(n, (b) => b.val);
  }
  for (const n of [5, 20, 60, 120]) out[`dd${n}AvgDp`] = r2((base / Math.max(1, avg(n, (b) => b.close))) * 100);
  const hi = bars.reduce((a, b) => (b.high > a.high ? b : a), bars[0]!);
  const lo = bars.reduce((a, b) => (b.low < a.low ? b : a), bars[0]!);
  const short = shortRow(m, issue, bars[0]!);
  return {
    ...out,
    srtsellTrdvol: short.srtsellTrdVol,
    srtsellTrdVol: short.srtsellTrdVol,
    srtsellTrdAmt: short.srtsellTrdAmt,
    lendBalQty: short.lendBalQty,
    lendBalAmt: short.lendBalAmt,
    srtsellOverheatDd: 0,
    BzDd: dateNum(m.sessionDate),
    wk52HgstPrc: hi.high,
    wk52LwstPrc: lo.low,
    wk52HgstprcDd: dateNum(hi.date),
    wk52LwstprcDd: dateNum(lo.date),
    wk52HgstTrdvol: Math.max(...bars.map((b) => b.vol)),
    wk52LwstTrdvol: Math.min(...bars.map((b) => b.vol)),
    liquShrs: Math.round(issue.listShrs * (0.5 + 0.4 * unit(issue.key, 0x66))),
    DebtRt: isEquity(issue) ? r2(30 + 150 * unit(issue.key, 0x67)) : 0,
    CrdtGrd: isEquity(issue) ? ['AAA', 'AA+', 'AA', 'A+', 'A', 'BBB+'][Math.floor(unit(issue.key, 0x68) * 6)]! : '',
    Cap: issue.listShrs * issue.parval,
  };
}

const stockMaster: Builder = (ctx) => ok(masterRecord(ctx.market, issueOf(ctx), isV2(ctx)));

const selectiveMaster: Builder = (ctx) => {
  const issue = issueOf(ctx);
  const wanted = (ctx.params.fields as string[] | undefined) ?? ['prevddClsprc'];
  const master = masterRecord(ctx.market, issue, false);
  master.IsuEngNm = master.isuEngNm;
  const needsExtra = wanted.some((f) => !(f in master));
  const all = needsExtra ? { ...master, ...extraFields(ctx.market, issue) } : master;
  const out: Record<string, unknown> = { isuSrtCd: issue.code };
  for (const f of wanted) if (SELECTIVE_MASTER_FIELDS.includes(f)) out[f] = all[f] ?? null;
  return ok(out);
};

const closePrice: Builder = (ctx) => ok(closeRow(ctx.market, issueOf(ctx)));

const price: Builder = (ctx) => ok(priceRow(ctx.market, issueOf(ctx)));

const orderbook: Builder = (ctx) => ok(orderbookRow(ctx.market, issueOf(ctx)));

/** Investor rows of flows, values in thousand KRW. */
export function investorRows(flows: ReturnType<typeof withAggregates>): Record<string, unknown>[] {
  return flows.map(([code, f]) => ({
    invstCd: code,
    askTrdvol: f.askVol,
    askTrdval: Math.round(f.askVal / 1000),
    bidTrdvol: f.bidVol,
    bidTrdval: Math.round(f.bidVal / 1000),
  }));
}

const investors: Builder = (ctx) => {
  const issue = issueOf(ctx);
  const m = ctx.market;
  const l = m.live[issue.idx]!;
  const rows = investorRows(withAggregates(issueFlows(issue.key, Number(m.sessionDate), l.vol, l.val)));
  return ok(isV2(ctx) ? { isuSrtCd: issue.code, invstLists: rows } : { isuCd: issue.isin, isuSrtCd: issue.code, invstLists: rows });
};

function rankSide(issue: Issue, m: Market, side: 'bid' | 'ask', out: Record<string, unknown>): void {
  const l = m.live[issue.idx]!;
  const day = Number(m.sessionDate);
  const salt = side === 'bid' ? 1 : 2;
  const order = [...MEMBERS.keys()].sort((a, b) => unit(issue.key, day, salt, a) - unit(issue.key, day, salt, b)).slice(0, 5);
  let share = 0.28;
  const avg = l.vol > 0 ? l.val / l.vol : l.last;
  order.forEach((member, i) => {
    const vol = Math.floor(l.vol * share);
    const prc = Math.round(avg * (1 + 0.001 * gauss(issue.key, day, salt, i)));
    out[`${side}TrdMbr${i + 1}`] = MEMBERS[member];
    out[`${side}TrdVolMbr${i + 1}`] = vol;
    out[`${side}TrdAmtMbr${i + 1}`] = vol * prc;
    out[`${side}TrdPrcMbr${i + 1}`] = vol > 0 ? prc : 0;
    out[`${side}TrdWtMbr${i + 1}`] = l.vol > 0 ? r2((vol / l.vol) * 100) : 0;
    share *= 0.6 + 0.35 * unit(issue.key, day, salt, i, 9);
  });
}

const traderanking: Builder = (ctx) => {
  const issue = issueOf(ctx);
  const out: Record<string, unknown> = { isuSrtCd: `${issue.code}*${issue.board}` };
  rankSide(issue, ctx.market, 'ask', out);
  rankSide(issue, ctx.market, 'bid', out);
  return ok(out);
};

/** Trading days in the request's date range up to the last complete day, newest first. */
export function daysInRange(m: Market, from: string | undefined, to: string, limit: number): string[] {
  const end = to < m.lastCompleteDay() ? to : m.lastCompleteDay();
  return tradingDaysBack(end, limit, from ?? addDays(end, -31));
}

const shortsell: Builder = (ctx) => {
  const issue = issueOf(ctx);
  const m = ctx.market;
  const days = daysInRange(m, ctx.params.inqStrtDd as string | undefined, String(ctx.params.inqEndDd), 100);
  const over = m.issueDaily(issue);
  return ok({ isuSrtCd: issue.code, hisLists: days.map((d) => shortRow(m, issue, dailyBar(m.specOf(issue), d, over))) });
};

const foreignHistory: Builder = (ctx) => {
  const issue = issueOf(ctx);
  const m = ctx.market;
  const limit = (ctx.params.reqCnt as number | undefined) ?? 100;
  const days = daysInRange(m, String(ctx.params.inqStrtDd), String(ctx.params.inqEndDd), limit);
  const baseRatio = issue.idx < 10 ? 0.5 : 0.02 + 0.3 * unit(issue.key, 0x83);
  const held = (d: string) => Math.round(issue.listShrs * baseRatio * (1 + 0.03 * Math.sin(Number(d) / 53) + 0.002 * gauss(issue.key, hashString(d), 0x84)));
  return ok({
    isuSrtCd: issue.code,
    hisLists: days.map((d) => {
      const vol = held(d);
      return { FornHdVol: vol, cmpprevddFornHdVol: vol - held(prevTradingDay(d)), FornHdVolRt: r2((vol / issue.listShrs) * 100), trdDd: dateNum(d) };
    }),
  });
};

/** HISTORY rows of bars, newest first, with the change code of each bar. */
export function historyRows(bars: readonly DayBar[], limitCodes: boolean, extra?: (b: DayBar) => Record<string, unknown>): Record<string, unknown>[] {
  return bars.map((b) => {
    const up = b.close > b.prevClose;
    const tp = limitCodes && b.close >= Math.floor(b.prevClose * 1.3) ? '1' : limitCodes && b.close <= Math.ceil(b.prevClose * 0.7) ? '4' : up ? '2' : b.close < b.prevClose ? '5' : '3';
    return {
      trdDd: dateNum(b.date),
      trdPrc: b.close,
      cmpprevddTpCd: tp,
      opnprc: b.open,
      hgprc: b.high,
      lwprc: b.low,
      accTrdvol: b.vol,
      accTrdval: b.val,
      ...(extra ? extra(b) : {}),
      cmpprevddPrc: Math.round((b.close - b.prevClose) * 100) / 100,
    };
  });
}

/** Validated history range of a request: period, from, to (clamped), row limit. */
export function historyRange(ctx: Ctx): { period: Period; from: string; to: string; limit: number } {
  const from = String(ctx.params.inqStrtDd);
  const to0 = String(ctx.params.inqEndDd);
  if (from > to0) throw new Refused('badParameter');
  const last = ctx.market.lastCompleteDay();
  return { period: ctx.params.trnsmCycleTpCd as Period, from, to: to0 < last ? to0 : last, limit: (ctx.params.reqCnt as number | undefined) ?? 100 };
}

const history: Builder = (ctx) => {
  const issue = issueOf(ctx);
  const m = ctx.market;
  const r = historyRange(ctx);
  const bars = periodBars(m.specOf(issue), r.period, r.from, r.to, r.limit, m.issueDaily(issue));
  return ok({ isuSrtCd: issue.code, hisLists: historyRows(bars, r.period === 'D') });
};

/** Intraday rows of bars within the request's time window, newest first. */
export function intradayRows(ctx: Ctx, bars: Parameters<typeof selectBars>[0]): Record<string, unknown>[] {
  const from = secsOf(String(ctx.params.strtTm));
  const to = secsOf(String(ctx.params.endTm));
  if (from > to) throw new Refused('badParameter');
  return selectBars(bars, from + 1, to).map((b) => ({
    inddTm: String(timeNumber(b.end)),
    inddOpnprc: b.open,
    inddHgprc: b.high,
    inddLwprc: b.low,
    inddClsprc: b.close,
    inddTrdvol: b.vol,
    inddTrdval: b.val,
    inddAccTrdvol: b.accVol,
    inddAccTrdval: b.accVal,
  }));
}

const intraday: Builder = (ctx) => {
  const issue = issueOf(ctx);
  const rows = intradayRows(ctx, ctx.market.issueBars(issue, Number(ctx.params.inddCycleTpCd)));
  return ok(isV2(ctx) ? { isuSrtCd: issue.code, isuNm: issue.korName, hisLists: rows } : { isuSrtCd: issue.code, hisLists: rows });
};

/** Builders of the per-issue stock operations, by the path's last segment. */
export const STOCK_BUILDERS: Readonly<Record<string, Builder>> = {
  master: stockMaster,
  selectivemaster: selectiveMaster,
  closeprice: closePrice,
  price,
  orderbook,
  investors,
  traderanking,
  shortsell,
  foreignhistory: foreignHistory,
  history,
  intraday,
};
