import { timeNumber } from '../calendar.js';
import { periodBars } from '../market/history.js';
import type { IndexDef, IndexLive } from '../market/indexes.js';
import { addFlows, emptyFlows, issueFlows, withAggregates } from '../market/investors.js';
import type { Market } from '../market/market.js';
import { datedAs, isV2, ok, r2, Refused, rowDateKey, type Builder, type Ctx } from './context.js';
import { barsOfDay, historyRange, historyRows, intradayRows, investorRows } from './stocks.js';

/**
 * Index endpoints (market index, sector indexes) and the market-wide
 * investor totals. Index volumes are in thousand shares, values and market
 * caps in million KRW, listed shares in thousands, as the provider sends.
 */

function indexOf(ctx: Ctx, code = String(ctx.params.issuecode)): [IndexDef, IndexLive] {
  const def = ctx.market.indexByCode.get(code);
  if (!def || def.market !== ctx.params.marketcode) throw new Refused('invalidCode');
  return [def, ctx.market.indexLive.get(code)!];
}

function marketIndexCode(ctx: Ctx): string {
  return ctx.params.marketcode === 'kosdaq' ? 'Q1' : 'K1';
}

function changeCode(s: IndexLive): string {
  return s.value > s.prevClose ? '2' : s.value < s.prevClose ? '5' : '3';
}

function caps(m: Market, def: IndexDef): { cap: number; shares: number } {
  let cap = 0;
  let shares = 0;
  for (const i of def.members) {
    const n = m.universe.issues[i]!.listShrs;
    shares += n;
    cap += n * m.live[i]!.last;
  }
  return { cap, shares };
}

function closeIndex(m: Market, def: IndexDef, s: IndexLive): Record<string, unknown> {
  const c = caps(m, def);
  return {
    isuSrtCd: def.code,
    isuCnt: def.members.length,
    trdPrc: s.value,
    cmpprevddTpCd: changeCode(s),
    opnprc: s.open,
    hgprc: s.high,
    lwprc: s.low,
    accTrdvol: Math.round(s.vol / 1000),
    accTrdval: Math.round(s.val / 1e6),
    mktcap: Math.round(c.cap / 1e6),
    cmpprevddPrc: r2(s.value - s.prevClose),
    listShrs: Math.round(c.shares / 1000),
  };
}

function flowsOf(m: Market, members: readonly number[]) {
  const total = emptyFlows();
  const day = Number(m.sessionDate);
  for (const i of members) {
    const l = m.live[i]!;
    if (l.vol > 0) addFlows(total, issueFlows(m.universe.issues[i]!.key, day, l.vol, l.val));
  }
  return investorRows(withAggregates(total));
}

/** `Tm` of investor data: the closing time once closed, else the market time. */
function investorTime(m: Market): string {
  return m.closed ? '15303000' : String(timeNumber(m.time.secs));
}

const marketIndex: Builder = (ctx) => {
  const [def, s] = indexOf({ ...ctx, params: { ...ctx.params, marketcode: ctx.params.marketcode } }, marketIndexCode(ctx));
  return ok(closeIndex(ctx.market, def, s));
};

const marketInvestors: Builder = (ctx) => {
  const m = ctx.market;
  const list = m.universe.byMarket[ctx.params.marketcode as 'kospi' | 'kosdaq'];
  const rows = flowsOf(
    m,
    list.map((i) => i.idx),
  );
  return ok(isV2(ctx) ? { Tm: investorTime(m), invstLists: rows } : { Tm: investorTime(m), isuSrtCd: marketIndexCode(ctx), invstLists: rows });
};

const close: Builder = (ctx) => {
  const [def, s] = indexOf(ctx);
  return ok(closeIndex(ctx.market, def, s));
};

const value: Builder = (ctx) => {
  const [def, s] = indexOf(ctx);
  return ok({
    isuSrtCd: def.code,
    trdPrc: s.value,
    cmpprevddTpCd: changeCode(s),
    accTrdvol: Math.round(s.vol / 1000),
    trdTm: s.trdSecs ? timeNumber(s.trdSecs) : 0,
    accTrdval: Math.round(s.val / 1e6),
    cmpprevddPrc: r2(s.value - s.prevClose),
  });
};

const prospect: Builder = (ctx) => {
  const [def, s] = indexOf(ctx);
  const deem = s.open || s.value;
  const up = deem > s.prevClose;
  return ok({
    isuSrtCd: def.code,
    deemTm: '9000000',
    deemTrdPrc: deem,
    deemAccTrdvol: Math.round(s.vol / 1000 / 50),
    deemcmpprevddPrc: r2(deem - s.prevClose),
    deemcmpprevddTpCd: deem === s.prevClose ? '3' : up ? '7' : '9',
    deemAccTrdval: Math.round(s.val / 1e6 / 50),
  });
};

const marketcap: Builder = (ctx) => {
  const [def, s] = indexOf(ctx);
  const c = caps(ctx.market, def);
  return ok({
    isuSrtCd: def.code,
    isuCnt: def.members.length,
    accTrdvol: Math.round(s.vol / 1000),
    accTrdval: Math.round(s.val / 1e6),
    mktcap: Math.round(c.cap / 1e6),
    listShrs: Math.round(c.shares / 1000),
  });
};

const investors: Builder = (ctx) => {
  const [def] = indexOf(ctx);
  return ok({ Tm: investorTime(ctx.market), isuSrtCd: def.code, invstLists: flowsOf(ctx.market, def.members) });
};

const intraday: Builder = (ctx) => {
  const [def, s] = indexOf(ctx);
  const cycle = Number(ctx.params.inddCycleTpCd);
  const bars = barsOfDay(
    ctx,
    () => s.bars.bars(cycle),
    (date) => ctx.market.indexBarsOn(def, date, cycle),
  );
  const rows = intradayRows(ctx, bars);
  return ok(isV2(ctx) ? { isuSrtCd: def.code, isuNm: def.name, hisLists: rows } : { isuSrtCd: def.code, hisLists: rows });
};

const history: Builder = (ctx) => {
  const [def] = indexOf(ctx);
  const r = historyRange(ctx);
  const rows = historyRows(periodBars(def.spec, r.period, r.from, r.to, r.limit, ctx.market.indexDaily(def.code)), false).map((row) =>
    datedAs(rowDateKey(ctx), row),
  );
  return ok(isV2(ctx) ? { isuSrtCd: def.code, isuKorNm: def.name, hisLists: rows } : { isuSrtCd: def.code, hisLists: rows });
};

/** Builders of the per-index operations, by the path's last segment. */
export const INDEX_BUILDERS: Readonly<Record<string, Builder>> = {
  closeprice: close,
  closeindex: close,
  index: value,
  prospectindex: prospect,
  marketcap,
  investors,
  intraday,
  history,
};

/** Builders of the market-level stock operations (no issue code). */
export const MARKET_BUILDERS: Readonly<Record<string, Builder>> = {
  index: marketIndex,
  investors: marketInvestors,
};
