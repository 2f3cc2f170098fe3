import { timeHHMMSS } from '../calendar.js';
import type { Market } from '../market/market.js';
import type { Issue } from '../market/universe.js';
import { issueOf, ok, Refused, type Builder } from './context.js';
import { levelQty, orderbookRow, priceRow } from './stocks.js';

/**
 * Market-wide lists: the symbol lists (closed data) and the multi-quote
 * snapshots (every issue of a market, refreshed each second), plus the
 * multi-issue price and order book.
 */

function issuesOf(m: Market, market: unknown): readonly Issue[] {
  const list = m.universe.byMarket[market as 'kospi' | 'kosdaq' | 'konex'];
  if (!list) throw new Refused('invalidCode');
  return list;
}

const symbolList: Builder = (ctx) => {
  const m = ctx.market;
  return ok({
    trdDd: m.sessionDate,
    mktEndTm: '1540',
    isuLists: issuesOf(m, ctx.params.marketcode).map((i) => ({
      isuSrtCd: i.code,
      isuCd: i.isin,
      isuKorNm: i.korName,
      isuKorAbbr: i.korAbbrv,
      map_to: `${i.code}*${i.board}`,
    })),
  });
};

function snapshot(row: (m: Market, i: Issue) => Record<string, unknown>): Builder {
  return (ctx) => {
    const m = ctx.market;
    return ok({ trdDd: m.sessionDate, trdTm: timeHHMMSS(m.time.secs), isuLists: issuesOf(m, ctx.params.marketcode).map((i) => row(m, i)) });
  };
}

const quote = (m: Market, i: Issue) => {
  const l = m.live[i.idx]!;
  return { isuSrtCd: i.code, trdPrc: l.last, accTrdvol: l.vol, accTrdval: l.val, mktcap: l.last * i.listShrs };
};

const ohlc = (m: Market, i: Issue) => {
  const l = m.live[i.idx]!;
  return { isuSrtCd: i.code, opnprc: l.open, hgprc: l.high, lwprc: l.low, trdPrc: l.last };
};

// The after-hours single-price session reports no open (0), as the provider does.
const aht = (m: Market, i: Issue) => {
  const l = m.live[i.idx]!;
  return { isuSrtCd: i.code, opnprc: 0, hgprc: l.ahtHigh, lwprc: l.ahtLow, trdPrc: l.ahtLast || l.last };
};

const topOfBook = (m: Market, i: Issue) => {
  const l = m.live[i.idx]!;
  const halted = m.params[i.idx]!.halted;
  return {
    isuSrtCd: i.code,
    trdPrc: l.last,
    askStep1BstordPrc: halted ? 0 : l.ask,
    askStep1BstordRqty: halted || !l.ask ? 0 : levelQty(m, i, 'ask', 1),
    bidStep1BstordPrc: halted ? 0 : l.bid,
    bidStep1BstordRqty: halted || !l.bid ? 0 : levelQty(m, i, 'bid', 1),
  };
};

function multi(row: (m: Market, i: Issue) => Record<string, unknown>): Builder {
  return (ctx) => {
    const codes = ctx.params.isuCd as string[];
    return ok({ isulist: codes.map((c) => row(ctx.market, issueOf(ctx, c))) });
  };
}

/** Builders of the multi-quote operations, by the path's last segment. */
export const MULTIQUOTE_BUILDERS: Readonly<Record<string, Builder>> = {
  lists: snapshot(quote),
  ohlclists: snapshot(ohlc),
  ahtohlclists: snapshot(aht),
  quotelists: snapshot(topOfBook),
  price: multi(priceRow),
  orderbook: multi(orderbookRow),
};

/** Builder of the symbol lists. */
export const SYMBOL_LIST: Builder = symbolList;
