import { SELECTIVE_MASTER_FIELDS } from '../../upstream/fields.js';
import { tradingDaysBack } from '../calendar.js';
import { dailyBar, type DayBar } from '../market/history.js';
import type { Market } from '../market/market.js';
import { isEquity, isManufacturing, type Issue } from '../market/universe.js';
import { gauss, hashString, unit } from '../random.js';
import { dateNum, isV2, issueOf, ok, r2, type Builder } from './context.js';

/**
 * Master data of an issue (master, selectivemaster) and the previous-day
 * figures derived from its history (short selling, moving averages, 52-week
 * range).
 */

/** Membership flags of an issue (from the index constituents). */
function inIndex(m: Market, code: string, issue: Issue): boolean {
  return m.indexByCode.get(code)?.members.includes(issue.idx) ?? false;
}

/** The price fields of the per-issue and multi-quote price endpoints. */

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
  const prev = dailyBar(m.specOf(issue), m.calendar.prevTradingDay(m.sessionDate), m.issueOverrides(issue));
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
  return tradingDaysBack(m.calendar, m.lastCompleteDay(), days).map((d) => dailyBar(m.specOf(issue), d, over));
}

/** Short-selling and lending figures of an issue on one day (a shortsell row). */
export function shortRow(issue: Issue, bar: DayBar): Record<string, number> {
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
  for (const n of [5, 20, 60, 120])
    out[`dd${n}AvgDp`] = r2(
      (base /
        Math.max(
          1,
          avg(n, (b) => b.close),
        )) *
        100,
    );
  const hi = bars.reduce((a, b) => (b.high > a.high ? b : a), bars[0]!);
  const lo = bars.reduce((a, b) => (b.low < a.low ? b : a), bars[0]!);
  const short = shortRow(issue, bars[0]!);
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

/** Builder of the master endpoints. */
export const stockMaster: Builder = (ctx) => ok(masterRecord(ctx.market, issueOf(ctx), isV2(ctx)));

/** Builder of the selectivemaster endpoints: only the asked fields (default `prevddClsprc`), plus isuSrtCd. */
export const selectiveMaster: Builder = (ctx) => {
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
