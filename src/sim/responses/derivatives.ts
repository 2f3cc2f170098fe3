import { dayNumber, timeNumber, tradingDaysBack } from '../calendar.js';
import { dailyBar, type DayBar } from '../market/history.js';
import { dayPathBars } from '../market/daypath.js';
import {
  CD_RATE,
  CONTINUOUS_CODE,
  MULTIPLIER,
  contractGrid,
  contractTick,
  gridPrice,
  impliedVol,
  theoretical,
  yearsTo,
  type Contract,
} from '../market/derivatives.js';
import { issueFlows, withAggregates } from '../market/investors.js';
import type { Market } from '../market/market.js';
import { gauss, unit } from '../random.js';
import { dateNum, isV2, ok, r2, Refused, type Builder, type Ctx } from './context.js';
import { barsOfDay, historyRange, historyRows, intradayRows } from './stocks.js';

/**
 * Futures and options endpoints. Contracts are listed on the `kospi200`
 * market; the other derivative markets answer empty lists and refuse codes.
 */

function product(ctx: Ctx): 'futures' | 'options' {
  return ctx.endpoint.path.includes('/futures/') ? 'futures' : 'options';
}

function contracts(ctx: Ctx): Contract[] {
  if (ctx.params.marketcode !== 'kospi200') return [];
  return ctx.market.contracts.filter((c) => c.product === product(ctx));
}

function contractOf(ctx: Ctx): Contract {
  const c = ctx.params.marketcode === 'kospi200' ? ctx.market.contract(String(ctx.params.issuecode)) : undefined;
  if (!c || c.product !== product(ctx)) throw new Refused('invalidCode');
  return c;
}

function k200On(m: Market, date: string): number {
  const def = m.indexByCode.get('K51')!;
  return dailyBar(def.spec, date, m.indexDaily('K51')).close;
}

/** Daily bar of a contract, priced from the KOSPI 200 close of each day. */
function contractDay(m: Market, c: Contract, date: string): DayBar {
  const price = (d: string) => gridPrice(c, theoretical(c, k200On(m, d), yearsTo(c, d)));
  const close = price(date);
  const prevClose = price(m.calendar.prevTradingDay(date));
  const day = dayNumber(date);
  const open = gridPrice(c, prevClose * (1 + 0.002 * gauss(c.key, day, 1)));
  const high = gridPrice(c, Math.max(open, close) * (1 + Math.abs(0.003 * gauss(c.key, day, 2))));
  const low = gridPrice(c, Math.min(open, close) * (1 - Math.abs(0.003 * gauss(c.key, day, 3))));
  const vol = Math.round(c.volPerSec * 22_800 * (0.6 + 0.8 * unit(c.key, day, 4)));
  return { date, open, high: Math.max(high, open, close), low: Math.min(low, open, close), close, prevClose, vol, val: Math.round(vol * close * MULTIPLIER) };
}

const lists: Builder = (ctx) => {
  const m = ctx.market;
  const rows = contracts(ctx).map((c) => ({
    isuSrtCd: c.code,
    isuCd: c.isin,
    isuKorNm: c.korName,
    isuKorAbbr: c.korAbbrv,
    map_to: `${c.code}*${c.product === 'futures' ? '005' : '006'}`,
  }));
  const front = rows[0];
  if (front && product(ctx) === 'futures') rows.push({ ...front, isuSrtCd: CONTINUOUS_CODE, map_to: CONTINUOUS_CODE });
  return ok({ trdDd: m.sessionDate, mktEndTm: '1550', isuLists: rows });
};

function limits(m: Market, c: Contract, base: number): Record<string, number> {
  const s = m.indexLive.get('K51')!.prevClose;
  const out: Record<string, number> = {};
  [0.08, 0.15, 0.2].forEach((pct, i) => {
    const band = c.product === 'futures' ? base * pct : s * pct;
    out[`prcLmtStep${i + 1}Uplmtprc`] = gridPrice(c, base + band);
    out[`prcLmtStep${i + 1}Lwlmtprc`] = gridPrice(c, Math.max(contractTick(c, 0.01), base - band));
  });
  return out;
}

const master: Builder = (ctx) => {
  const m = ctx.market;
  const c = contractOf(ctx);
  const l = m.contractLive.get(c.code)!;
  const prevDay = m.calendar.prevTradingDay(m.sessionDate);
  const prev = contractDay(m, c, prevDay);
  const year = tradingDaysBack(m.calendar, prevDay, 250).map((d) => contractDay(m, c, d));
  const hi = year.reduce((a, b) => (b.high > a.high ? b : a));
  const lo = year.reduce((a, b) => (b.low < a.low ? b : a));
  const fut = c.product === 'futures';
  const k = m.indexLive.get('K51')!.prevClose;
  return ok({
    isuSrtCd: c.code,
    midyyHgstprc: hi.high,
    midyyHgstprcDd: dateNum(hi.date),
    midyyLwstprc: lo.low,
    midyyLwstprcDd: dateNum(lo.date),
    inlistHgstprc: hi.high,
    inlistHgstprcDd: dateNum(hi.date),
    inlistLwstprc: lo.low,
    inlistLwstprcDd: dateNum(lo.date),
    prevddClsprc: l.base,
    prevddOpnprc: prev.open,
    prevddHgprc: prev.high,
    prevddLwprc: prev.low,
    prevddAccTrdvol: prev.vol,
    prevddAccTrdval: prev.val,
    prevddOpnintQty: Math.round(prev.vol * 1.3),
    setlPrcTheoPrcDivrgRt: r2(0.2 * gauss(c.key, dayNumber(prevDay), 5)),
    ...(fut ? {} : { impVolt: r2(impliedVol(c, k) * 100) }),
    trdDd: dateNum(m.sessionDate),
    basPrc: l.base,
    isuKorNm: c.korName,
    isuKorAbbrv: c.korAbbrv,
    isuCd: c.isin,
    listDd: dateNum(c.listDd),
    remainDys: Math.max(0, dayNumber(c.lastDay) - dayNumber(m.sessionDate)),
    cdInt: CD_RATE,
    lsttrdDd: dateNum(c.lastDay),
    expDd: Number(c.expMonth),
    ...(fut ? {} : { exerPrc: c.strike }),
    ulyId: 'KOSPI200',
    ...limits(m, c, l.base),
    ...(fut ? { opnintLmtQty: null } : {}),
    setlmult: MULTIPLIER,
    setlTheoPrc: fut ? null : 0,
    basTheoPrc: fut ? null : r2(theoretical(c, k, yearsTo(c, prevDay))),
  });
};

const closeprice: Builder = (ctx) => {
  const c = contractOf(ctx);
  const l = ctx.market.contractLive.get(c.code)!;
  const tp = l.last > l.base ? '2' : l.last < l.base ? '5' : '3';
  return ok({
    isuSrtCd: c.code,
    trdPrc: l.last,
    cmpprevddTpCd: tp,
    opnprc: l.open,
    hgprc: l.high,
    lwprc: l.low,
    accTrdvol: l.vol,
    accTrdval: l.val,
    cmpprevddPrc: r2(l.last - l.base),
  });
};

const price: Builder = (ctx) => {
  const m = ctx.market;
  const c = contractOf(ctx);
  const l = m.contractLive.get(c.code)!;
  const lim = limits(m, c, l.base);
  const fut = c.product === 'futures';
  const futures = m.contracts.filter((x) => x.product === 'futures');
  return ok({
    isuSrtCd: fut ? c.code : `${c.code}*006`,
    trdPrc: l.last,
    opnprc: l.open,
    hgprc: l.high,
    lwprc: l.low,
    accTrdvol: l.vol,
    trdTm: l.trdSecs ? timeNumber(l.trdSecs) : 0,
    trdvol: l.trdvol,
    lstTrdTpCd: l.side,
    accTrdval: l.val,
    isuCd: c.isin,
    negoBlkAccTrdvol: 0,
    ...(fut
      ? {
          fstmmAgndaContrtPrc: m.contractLive.get(futures[0]!.code)!.last,
          futrmmAgndaContrtPrc: m.contractLive.get(futures[futures.length - 1]!.code)!.last,
        }
      : {}),
    realtmUplmtprc: lim.prcLmtStep1Uplmtprc,
    realtmLwlmtprc: lim.prcLmtStep1Lwlmtprc,
  });
};

const orderbook: Builder = (ctx) => {
  const m = ctx.market;
  const c = contractOf(ctx);
  const l = m.contractLive.get(c.code)!;
  const row: Record<string, unknown> = { isuSrtCd: c.code };
  const bucket = Math.floor(m.generation / 3);
  let askTot = 0;
  let bidTot = 0;
  let askCnt = 0;
  let bidCnt = 0;
  let ask = l.ask;
  let bid = l.bid;
  for (let i = 1; i <= 5; i++) {
    const aq = Math.max(1, Math.round(c.volPerSec * 15 * (1 + unit(c.key, bucket, i, 1))));
    const bq = Math.max(1, Math.round(c.volPerSec * 15 * (1 + unit(c.key, bucket, i, 2))));
    const an = Math.max(1, Math.round(aq / 3));
    const bn = Math.max(1, Math.round(bq / 3));
    Object.assign(row, { [`askStep${i}BstordPrc`]: ask, [`askStep${i}BstordRqty`]: aq, [`askStep${i}BstordCnt`]: an });
    Object.assign(row, { [`bidStep${i}BstordPrc`]: bid, [`bidStep${i}BstordRqty`]: bq, [`bidStep${i}BstordCnt`]: bn });
    askTot += aq;
    bidTot += bq;
    askCnt += an;
    bidCnt += bn;
    ask = r2(ask + contractTick(c, ask));
    bid = Math.max(0, r2(bid - contractTick(c, bid - 0.001)));
  }
  // Totals cover the whole book, deeper than the five published levels.
  Object.assign(row, { askTotOrdRqty: askTot * 20, bidTotOrdRqty: bidTot * 20, askValidOrdCnt: askCnt * 18, bidValidOrdCnt: bidCnt * 18 });
  return ok({ ...row, ordAcptTm: timeNumber(m.time.secs), deemTrdPrc: l.last });
};

const investors: Builder = (ctx) => {
  const m = ctx.market;
  const day = Number(m.sessionDate);
  const fut = product(ctx) === 'futures';
  const sum = (right?: 'C' | 'P') => {
    const total = new Map<string, { askVol: number; askVal: number; bidVol: number; bidVal: number }>();
    for (const c of contracts(ctx)) {
      if (right && c.right !== right) continue;
      const l = m.contractLive.get(c.code)!;
      for (const [code, f] of withAggregates(issueFlows(c.key, day, l.vol, l.val))) {
        const t = total.get(code) ?? { askVol: 0, askVal: 0, bidVol: 0, bidVal: 0 };
        t.askVol += f.askVol;
        t.askVal += f.askVal;
        t.bidVol += f.bidVol;
        t.bidVal += f.bidVal;
        total.set(code, t);
      }
    }
    return total;
  };
  const codes = Array.from({ length: 16 }, (_, i) => String(i + 1).padStart(2, '0'));
  const z = { askVol: 0, askVal: 0, bidVol: 0, bidVal: 0 };
  const k = (v: number) => Math.round(v / 1000);
  if (fut) {
    const t = sum();
    const rows = codes.map((code) => {
      const f = t.get(code) ?? z;
      return { invstCd: code, MktAccAskTrdvol: f.askVol, MktAccAskTrdval: k(f.askVal), MktAccBidTrdvol: f.bidVol, MktAccBidTrdval: k(f.bidVal) };
    });
    return ok({ Tm: String(timeNumber(m.time.secs)), invstLists: rows });
  }
  const calls = sum('C');
  const puts = sum('P');
  const rows = codes.map((code) => {
    const cf = calls.get(code) ?? z;
    const pf = puts.get(code) ?? z;
    return {
      invstCd: code,
      CallAccAskTrdvol: cf.askVol,
      CallAccAskTrdval: k(cf.askVal),
      CallAccBidTrdvol: cf.bidVol,
      CallAccBidTrdval: k(cf.bidVal),
      PutAccAskTrdvol: pf.askVol,
      PutAccAskTrdval: k(pf.askVal),
      PutAccBidTrdvol: pf.bidVol,
      PutAccBidTrdval: k(pf.bidVal),
    };
  });
  return ok({ Tm: String(timeNumber(m.time.secs)), invstLists: rows });
};

const intraday: Builder = (ctx) => {
  const m = ctx.market;
  const c = contractOf(ctx);
  const cycle = Number(ctx.params.inddCycleTpCd);
  // A past day's bars follow the contract's daily bar as `history` serves it; none before the contract was listed.
  const bars = barsOfDay(
    ctx,
    () => m.contractLive.get(c.code)!.bars.bars(cycle),
    (date) => (date < c.listDd ? [] : dayPathBars(contractDay(m, c, date), m.hoursOn(date), cycle, { key: c.key, grid: contractGrid(c) })),
  );
  const rows = intradayRows(ctx, bars);
  const code = String(ctx.params.issuecode);
  return ok(isV2(ctx) ? { isuSrtCd: code, isuNm: c.korName, hisLists: rows } : { isuSrtCd: code, hisLists: rows });
};

const history: Builder = (ctx) => {
  const m = ctx.market;
  const c = contractOf(ctx);
  const r = historyRange(ctx);
  const days = tradingDaysBack(m.calendar, r.to, r.period === 'D' ? r.limit : r.limit * (r.period === 'W' ? 5 : 23), r.from).filter((d) => d >= c.listDd);
  const bars =
    r.period === 'D'
      ? days.map((d) => contractDay(m, c, d))
      : aggregate(
          days.map((d) => contractDay(m, c, d)),
          r.period,
          r.limit,
        );
  const rows = historyRows(bars, false, (b) => ({ opnintQty: Math.round(b.vol * 1.2) }));
  return ok({ isuSrtCd: String(ctx.params.issuecode), hisLists: rows });
};

function aggregate(days: DayBar[], period: 'W' | 'M', limit: number): DayBar[] {
  const key = (d: string) => (period === 'M' ? d.slice(0, 6) : String(Math.floor((dayNumber(d) + 3) / 7)));
  const out: DayBar[] = [];
  for (const b of days) {
    const last = out[out.length - 1];
    if (last && key(last.date) === key(b.date)) {
      out[out.length - 1] = {
        ...last,
        open: b.open,
        high: Math.max(last.high, b.high),
        low: Math.min(last.low, b.low),
        prevClose: b.prevClose,
        vol: last.vol + b.vol,
        val: last.val + b.val,
      };
    } else if (out.length < limit) out.push(b);
    else break;
  }
  return out;
}

/** Builders of the futures and options operations, by the path's last segment. */
export const DERIVATIVE_BUILDERS: Readonly<Record<string, Builder>> = {
  lists,
  master,
  closeprice,
  price,
  orderbook,
  investors,
  intraday,
  history,
};
