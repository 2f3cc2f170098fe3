import { addDays, isDate, secsOf, timeNumber, tradingDaysBack } from '../calendar.js';
import { selectBars, type Bar } from '../market/bars.js';
import { dailyBar, periodBars, type DayBar, type Period } from '../market/history.js';
import { issueFlows, withAggregates } from '../market/investors.js';
import type { Market } from '../market/market.js';
import type { Issue } from '../market/universe.js';
import { changeCode } from '../market/walk.js';
import { MEMBERS } from '../data/name-parts.js';
import { gauss, hashString, unit } from '../random.js';
import { tickDown, tickUp } from '../ticks.js';
import { dateNum, datedAs, isV2, issueOf, ok, r2, Refused, rowDateKey, type Builder, type Ctx } from './context.js';
import { selectiveMaster, shortRow, stockMaster } from './master.js';

/**
 * Per-issue stock endpoints: prices, order book, investors, trader ranking,
 * short selling, foreign holding, history and intraday bars (master data is
 * in master.ts).
 */

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
  return tradingDaysBack(m.calendar, end, limit, from ?? addDays(end, -31));
}

const shortsell: Builder = (ctx) => {
  const issue = issueOf(ctx);
  const m = ctx.market;
  const days = daysInRange(m, ctx.params.inqStrtDd as string | undefined, String(ctx.params.inqEndDd), 100);
  const over = m.issueDaily(issue);
  const key = rowDateKey(ctx);
  return ok({ isuSrtCd: issue.code, hisLists: days.map((d) => datedAs(key, shortRow(issue, dailyBar(m.specOf(issue), d, over)))) });
};

const foreignHistory: Builder = (ctx) => {
  const issue = issueOf(ctx);
  const m = ctx.market;
  const limit = (ctx.params.reqCnt as number | undefined) ?? 100;
  const days = daysInRange(m, String(ctx.params.inqStrtDd), String(ctx.params.inqEndDd), limit);
  const baseRatio = issue.idx < 10 ? 0.5 : 0.02 + 0.3 * unit(issue.key, 0x83);
  const held = (d: string) => Math.round(issue.listShrs * baseRatio * (1 + 0.03 * Math.sin(Number(d) / 53) + 0.002 * gauss(issue.key, hashString(d), 0x84)));
  const key = rowDateKey(ctx);
  return ok({
    isuSrtCd: issue.code,
    hisLists: days.map((d) => {
      const vol = held(d);
      return { FornHdVol: vol, cmpprevddFornHdVol: vol - held(m.calendar.prevTradingDay(d)), FornHdVolRt: r2((vol / issue.listShrs) * 100), [key]: dateNum(d) };
    }),
  });
};

/** HISTORY rows of bars, newest first, with the change code of each bar. */
export function historyRows(bars: readonly DayBar[], limitCodes: boolean, extra?: (b: DayBar) => Record<string, unknown>): Record<string, unknown>[] {
  return bars.map((b) => {
    const up = b.close > b.prevClose;
    const tp =
      limitCodes && b.close >= Math.floor(b.prevClose * 1.3)
        ? '1'
        : limitCodes && b.close <= Math.ceil(b.prevClose * 0.7)
          ? '4'
          : up
            ? '2'
            : b.close < b.prevClose
              ? '5'
              : '3';
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

/** Validated history range of a request: period, from (not before `listed`, the issue's listing day), to (clamped), row limit. */
export function historyRange(ctx: Ctx, listed = ''): { period: Period; from: string; to: string; limit: number } {
  const from = String(ctx.params.inqStrtDd);
  const to0 = String(ctx.params.inqEndDd);
  if (from > to0) throw new Refused('badParameter');
  const last = ctx.market.lastCompleteDay();
  return {
    period: ctx.params.trnsmCycleTpCd as Period,
    from: from < listed ? listed : from,
    to: to0 < last ? to0 : last,
    limit: (ctx.params.reqCnt as number | undefined) ?? 100,
  };
}

const history: Builder = (ctx) => {
  const issue = issueOf(ctx);
  const m = ctx.market;
  const r = historyRange(ctx, issue.listDd);
  const bars = periodBars(m.specOf(issue), r.period, r.from, r.to, r.limit, m.issueDaily(issue));
  return ok({ isuSrtCd: issue.code, hisLists: historyRows(bars, r.period === 'D').map((row) => datedAs(rowDateKey(ctx), row)) });
};

/**
 * The bars of the day an intraday request names in `inqStrtDd`: `live()`
 * for the session day (or no date), `past(date)` for an earlier trading
 * day, none for a closed day or a later date. Refuses a date that does not
 * exist (badParameter).
 */
export function barsOfDay(ctx: Ctx, live: () => readonly Bar[], past: (date: string) => readonly Bar[]): readonly Bar[] {
  const date = ctx.params.inqStrtDd as string | undefined;
  if (date !== undefined && !isDate(date)) throw new Refused('badParameter');
  const kind = ctx.market.barDay(date);
  return kind === 'live' ? live() : kind === 'past' ? past(date!) : [];
}

/** Intraday rows of bars within the request's time window, newest first. */
export function intradayRows(ctx: Ctx, bars: readonly Bar[]): Record<string, unknown>[] {
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
  const m = ctx.market;
  const cycle = Number(ctx.params.inddCycleTpCd);
  const bars = barsOfDay(
    ctx,
    () => m.issueBars(issue, cycle),
    (date) => m.issueBarsOn(issue, date, cycle),
  );
  const rows = intradayRows(ctx, bars);
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
