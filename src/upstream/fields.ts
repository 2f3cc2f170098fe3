/**
 * Field tables of the upstream API, as declared by the provider (spec/ field
 * groups and the provider's CSV field tables).
 *
 * Each field maps to its declared type:
 * - `n`: a number. Numeric strings (`"1,234"`, `" 12.5"`) become numbers.
 * - `s`: a string. Numbers become their decimal text.
 * - `c`: a short issue code (`isuSrtCd`). A string; the `*NNN` board suffix some
 *   payloads append (`"005930*001"`) is removed.
 * - `sN` (N = 1..12): a string of N digits when numeric. Numbers and short
 *   digit strings are left-padded with zeros, so `trdTm` 9544500 becomes
 *   `"09544500"` and a date 20220602 becomes `"20220602"`.
 *
 * Placeholders (`null`, `""`, `" -"`, `"-"`) normalise to `null` for every type.
 */
export type FieldType = 'n' | 's' | 'c' | `s${1 | 2 | 3 | 4 | 6 | 8 | 12}`;

/** A field table: field name to declared type. */
export type FieldTable = Readonly<Record<string, FieldType>>;

/** Known payload spellings that differ from the field tables: alias to canonical name. */
export const FIELD_ALIASES: Readonly<Record<string, string>> = {
  isuKorAbbr: 'isuKorAbbrv',
  IsuSrtCd: 'isuSrtCd',
  IsuEngNm: 'isuEngNm',
  lstTrdTpCd: 'lstAskbidTpCd',
  srtsellTrdVol: 'srtsellTrdvol',
  // The provider's v2 examples date history-like rows (history, short selling, foreign holding,
  // index history) `BzDd`, v3 `trdDd`: the wire carries `trdDd`. Where BzDd is a declared field
  // of its own (selectivemaster) it is kept as it is.
  BzDd: 'trdDd',
};

const CHANGE: FieldTable = { cmpprevddTpCd: 's1', cmpprevddPrc: 'n' };
const OHLC: FieldTable = { opnprc: 'n', hgprc: 'n', lwprc: 'n', trdPrc: 'n' };
const ACC: FieldTable = { accTrdvol: 'n', accTrdval: 'n' };

/** LIST-ITEM: one row of a symbol list. */
export const LIST_ITEM: FieldTable = {
  isuCd: 's',
  isuSrtCd: 'c',
  isuKorNm: 's',
  isuKorAbbrv: 's',
  map_to: 's',
};

/** Top level of LIST-RESPONSE (symbol lists). */
export const LIST_TOP: FieldTable = { trdDd: 's8', mktEndTm: 's4' };

/** CLOSE: closing or current quote of one issue. */
export const CLOSE: FieldTable = { isuSrtCd: 'c', ...CHANGE, ...OHLC, ...ACC };

/** INDEX-CLOSE: CLOSE plus issue count, listed shares and market cap. */
export const INDEX_CLOSE: FieldTable = { ...CLOSE, isuCnt: 'n', listShrs: 'n', mktcap: 'n' };

/** INVESTOR-ROW: trading by one investor type. */
export const INVESTOR_ROW: FieldTable = {
  invstCd: 's2',
  askTrdvol: 'n',
  askTrdval: 'n',
  bidTrdvol: 'n',
  bidTrdval: 'n',
};

/** Top level of investor responses. */
export const INVESTOR_TOP: FieldTable = { Tm: 's8', isuSrtCd: 'c', isuCd: 's' };

/** Futures market-investor row. */
export const FUTURES_INVESTOR_ROW: FieldTable = {
  invstCd: 's2',
  MktAccAskTrdvol: 'n',
  MktAccAskTrdval: 'n',
  MktAccBidTrdvol: 'n',
  MktAccBidTrdval: 'n',
};

/** Options market-investor row. */
export const OPTIONS_INVESTOR_ROW: FieldTable = {
  invstCd: 's2',
  CallAccAskTrdvol: 'n',
  CallAccAskTrdval: 'n',
  CallAccBidTrdvol: 'n',
  CallAccBidTrdval: 'n',
  PutAccAskTrdvol: 'n',
  PutAccAskTrdval: 'n',
  PutAccBidTrdvol: 'n',
  PutAccBidTrdval: 'n',
};

/** HISTORY-ROW: one daily/weekly/monthly bar (opnintQty on derivatives). */
export const HISTORY_ROW: FieldTable = {
  trdDd: 's8',
  ...OHLC,
  ...CHANGE,
  ...ACC,
  opnintQty: 'n',
};

/** Top level of history-like responses. */
export const HISTORY_TOP: FieldTable = { isuSrtCd: 'c', isuNm: 's', isuKorNm: 's' };

/** INTRADAY-ROW: one 10 s / 1 min / 10 min bar. */
export const INTRADAY_ROW: FieldTable = {
  inddTm: 's8',
  inddOpnprc: 'n',
  inddHgprc: 'n',
  inddLwprc: 'n',
  inddClsprc: 'n',
  inddTrdvol: 'n',
  inddTrdval: 'n',
  inddAccTrdvol: 'n',
  inddAccTrdval: 'n',
};

/** Short-sell history row. */
export const SHORTSELL_ROW: FieldTable = {
  trdDd: 's8',
  srtsellTrdvol: 'n',
  srtsellTrdAmt: 'n',
  lendBalQty: 'n',
  lendBalAmt: 'n',
  srtsellBal: 'n',
};

/** Foreign-holding history row. */
export const FOREIGN_ROW: FieldTable = {
  trdDd: 's8',
  FornHdVol: 'n',
  cmpprevddFornHdVol: 'n',
  FornHdVolRt: 'n',
};

/** NAV history row (extra service). */
export const NAV_ROW: FieldTable = { trdDd: 's8', trdPrc: 'n', nav: 'n', cmpprevddNav: 'n' };

/** ETF NAV (closenav and extra nav). */
export const NAV: FieldTable = { isuSrtCd: 'c', nav: 'n', cmpprevddNav: 'n' };

/** ETF constituent (pdf) row. */
export const PDF_ROW: FieldTable = { isuCd: 's', Unit: 'n', isuNm: 's', SetAmt: 'n', ratio: 'n' };

/** Top level of the ETF constituent (pdf) response. */
export const PDF_TOP: FieldTable = { Cnt: 's', InqDd: 's8' };

/** Realtime price of one stock (per-issue and multi-quote price). */
export const STOCK_PRICE: FieldTable = {
  isuSrtCd: 'c',
  ...CHANGE,
  ...OHLC,
  trdvol: 'n',
  ...ACC,
  lstAskbidTpCd: 's1',
  trdTm: 's8',
  askordPrc_1: 'n',
  bidordPrc_1: 'n',
};

function steps(sides: readonly string[], n: number, suffixes: readonly [string, FieldType][]): FieldTable {
  const out: Record<string, FieldType> = {};
  for (const side of sides) {
    for (let i = 1; i <= n; i++) {
      for (const [suffix, type] of suffixes) out[`${side}Step${i}${suffix}`] = type;
    }
  }
  return out;
}

/** ORDERBOOK-10: stock depth, 10 levels a side, LP quotes excluded. */
export const ORDERBOOK_10: FieldTable = {
  isuSrtCd: 'c',
  accTrdvol: 'n',
  ...steps(['ask', 'bid'], 10, [
    ['BstordPrc', 'n'],
    ['BstordRqty', 'n'],
  ]),
  askordTotRqty: 'n',
  bidordTotRqty: 'n',
  pstoffhrAskTotOrdRqty: 'n',
  pstoffhrBidTotOrdRqty: 'n',
  deemTrdPrc: 'n',
  deemTrdvol: 'n',
  deemAccTrdvol: 'n',
};

/** DERIVATIVE-ORDERBOOK: futures/options depth, 5 levels a side with order counts. */
export const DERIVATIVE_ORDERBOOK: FieldTable = {
  isuSrtCd: 'c',
  ...steps(['ask', 'bid'], 5, [
    ['BstordPrc', 'n'],
    ['BstordRqty', 'n'],
    ['BstordCnt', 'n'],
  ]),
  askTotOrdRqty: 'n',
  bidTotOrdRqty: 'n',
  askValidOrdCnt: 'n',
  bidValidOrdCnt: 'n',
  ordAcptTm: 's8',
  deemTrdPrc: 'n',
};

/** Realtime price of a futures contract. */
export const FUTURES_PRICE: FieldTable = {
  isuSrtCd: 'c',
  isuCd: 's',
  ...OHLC,
  trdvol: 'n',
  trdTm: 's8',
  ...ACC,
  negoBlkAccTrdvol: 'n',
  lstAskbidTpCd: 's1',
  fstmmAgndaContrtPrc: 'n',
  futrmmAgndaContrtPrc: 'n',
  realtmUplmtprc: 'n',
  realtmLwlmtprc: 'n',
};

/** Realtime price of an options contract. */
export const OPTIONS_PRICE: FieldTable = {
  isuSrtCd: 'c',
  isuCd: 's',
  ...OHLC,
  trdvol: 'n',
  trdTm: 's8',
  ...ACC,
  negoBlkAccTrdvol: 'n',
  lstAskbidTpCd: 's1',
  realtmUplmtprc: 'n',
  realtmLwlmtprc: 'n',
};

/** STOCK-MASTER plus the v3 additions (English name, settlement month, class codes). */
export const STOCK_MASTER: FieldTable = {
  trdDd: 's8',
  isuCd: 's',
  isuSrtCd: 'c',
  isuKorAbbrv: 's',
  isuEngNm: 's',
  secugrpId: 's',
  mktWarnTpCd: 's2',
  admisuYn: 's',
  haltYn: 's',
  idxIndMidclssCd: 's3',
  idxIndUpclssCd: 's3',
  idxIndLwclssCd: 's3',
  mktcapScaleCd: 's1',
  mfindYn: 's',
  smeYn: 's',
  krx100IsuYn: 's',
  kospiYn: 's',
  kospi100Yn: 's',
  kospi50Yn: 's',
  basPrc: 'n',
  prevddClsprc: 'n',
  prevddAccTrdvol: 'n',
  prevddAccTrdval: 'n',
  uplmtprc: 'n',
  lwlmtprc: 'n',
  sbPrc: 'n',
  parval: 'n',
  isuPrc: 'n',
  listDd: 's8',
  listShrs: 'n',
  arrantrdYn: 's',
  creditOrdPosblYn: 's',
  regulssQtyUnit: 'n',
  invstcautnRemndIsuYn: 's',
  srttrmOverheatIsuTpCd: 's1',
  eps: 'n',
  per: 'n',
  bps: 'n',
  pbr: 'n',
  dps: 'n',
  divYd: 'n',
  acntclsCd: 's12',
  acntclsMm: 's2',
  adjStkprcCalcYn: 's',
  prevddNav: 'n',
};

const AVG_PERIODS = [3, 5, 10, 20, 40, 60, 120, 250] as const;

function movingAverages(): FieldTable {
  const out: Record<string, FieldType> = {};
  for (const p of AVG_PERIODS) {
    out[`dd${p}AvgPrc`] = 'n';
    out[`dd${p}AvgTrdVol`] = 'n';
    out[`dd${p}AvgTrdAmt`] = 'n';
  }
  for (const p of [5, 20, 60, 120]) out[`dd${p}AvgDp`] = 'n';
  return out;
}

/** Selective master: every STOCK-MASTER field plus the 2.2 additions (85 fields in all). */
export const SELECTIVE_MASTER: FieldTable = {
  ...STOCK_MASTER,
  srtsellTrdvol: 'n',
  srtsellTrdAmt: 'n',
  lendBalQty: 'n',
  lendBalAmt: 'n',
  srtsellOverheatDd: 'n',
  ...movingAverages(),
  // Declared number(11) in the selective table, but spec document 1 §2.1.3
  // names BzDd among the date fields whose declared type is the string one.
  BzDd: 's8',
  wk52HgstPrc: 'n',
  wk52LwstPrc: 'n',
  wk52HgstprcDd: 'n',
  wk52LwstprcDd: 'n',
  wk52HgstTrdvol: 'n',
  wk52LwstTrdvol: 'n',
  liquShrs: 'n',
  DebtRt: 'n',
  CrdtGrd: 's',
  Cap: 'n',
};

/**
 * Field names a selectivemaster request may ask for (the query flags): the
 * canonical names of `SELECTIVE_MASTER` plus the provider's own spellings of
 * the same fields (`srtsellTrdVol`, `IsuEngNm`), which its request
 * documentation uses.
 */
export const SELECTIVE_MASTER_FIELDS: readonly string[] = [...Object.keys(SELECTIVE_MASTER), 'srtsellTrdVol', 'IsuEngNm'];

/** DERIVATIVE-MASTER: futures and options master data (setlmult is the contract multiplier). */
export const DERIVATIVE_MASTER: FieldTable = {
  trdDd: 's8',
  isuCd: 's',
  isuSrtCd: 'c',
  isuKorNm: 's',
  isuKorAbbrv: 's',
  listDd: 's8',
  prcLmtStep1Uplmtprc: 'n',
  prcLmtStep1Lwlmtprc: 'n',
  prcLmtStep2Uplmtprc: 'n',
  prcLmtStep2Lwlmtprc: 'n',
  prcLmtStep3Uplmtprc: 'n',
  prcLmtStep3Lwlmtprc: 'n',
  basPrc: 'n',
  ulyId: 's',
  lsttrdDd: 's8',
  expDd: 's6',
  setlmult: 'n',
  remainDys: 'n',
  setlTheoPrc: 'n',
  basTheoPrc: 'n',
  prevddClsprc: 'n',
  prevddOpnprc: 'n',
  prevddHgprc: 'n',
  prevddLwprc: 'n',
  setlPrcTheoPrcDivrgRt: 'n',
  prevddOpnintQty: 'n',
  impVolt: 'n',
  exerPrc: 'n',
  inlistHgstprc: 'n',
  inlistLwstprc: 'n',
  midyyHgstprc: 'n',
  midyyLwstprc: 'n',
  inlistHgstprcDd: 's8',
  inlistLwstprcDd: 's8',
  midyyHgstprcDd: 's8',
  midyyLwstprcDd: 's8',
  prevddAccTrdvol: 'n',
  prevddAccTrdval: 'n',
  cdInt: 'n',
  opnintLmtQty: 'n',
};

/** Trading-member ranking: top 5 members on each side. */
export const TRADE_RANKING: FieldTable = (() => {
  const out: Record<string, FieldType> = { isuSrtCd: 'c' };
  for (const side of ['bid', 'ask']) {
    for (let r = 1; r <= 5; r++) {
      out[`${side}TrdMbr${r}`] = 's';
      out[`${side}TrdVolMbr${r}`] = 'n';
      out[`${side}TrdAmtMbr${r}`] = 'n';
      out[`${side}TrdPrcMbr${r}`] = 'n';
      out[`${side}TrdWtMbr${r}`] = 'n';
    }
  }
  return out;
})();

/** Realtime index value of a sector or market index. */
export const INDEX_VALUE: FieldTable = { isuSrtCd: 'c', trdTm: 's8', trdPrc: 'n', ...CHANGE, ...ACC };

/** Expected (pre-open) index value. */
export const PROSPECT_INDEX: FieldTable = {
  isuSrtCd: 'c',
  deemTm: 's8',
  deemTrdPrc: 'n',
  deemcmpprevddTpCd: 's',
  deemcmpprevddPrc: 'n',
  deemAccTrdvol: 'n',
  deemAccTrdval: 'n',
};

/** Index market capitalisation. */
export const INDEX_MARKETCAP: FieldTable = {
  isuSrtCd: 'c',
  isuCnt: 'n',
  listShrs: 'n',
  ...ACC,
  mktcap: 'n',
};

/** Top level of the multi-quote list snapshots. */
export const MQ_TOP: FieldTable = { trdDd: 's8', trdTm: 's6' };

/** Multi-quote `lists` row: price, volume, value, market cap. */
export const MQ_QUOTE: FieldTable = { isuSrtCd: 'c', trdPrc: 'n', ...ACC, mktcap: 'n' };

/** Multi-quote `ohlclists` and `ahtohlclists` row. */
export const MQ_OHLC: FieldTable = { isuSrtCd: 'c', ...OHLC };

/** Multi-quote `quotelists` row: price and best bid/ask. */
export const MQ_TOP_OF_BOOK: FieldTable = {
  isuSrtCd: 'c',
  trdPrc: 'n',
  askStep1BstordPrc: 'n',
  askStep1BstordRqty: 'n',
  bidStep1BstordPrc: 'n',
  bidStep1BstordRqty: 'n',
};

/** Holiday list (extra service). */
export const HOLIDAY_TOP: FieldTable = { marketCd: 's' };
