import type { Channel, Resource } from '../protocol/constants.js';

/**
 * Shapes of the rows the bridge streams and of the `get` results, written
 * from the upstream field tables (src/upstream/fields.ts; a test checks every
 * name and kind against them). Values are normalised: numbers are numbers,
 * codes, dates (`YYYYMMDD`) and times (`HHMMSSmm`) are strings, placeholders
 * are `null`. A field the upstream did not send is absent; fields the tables
 * do not know are kept under their own names. See docs/PROTOCOL.md §2, §4.1.
 */

/** A numeric field: a number, or `null` for an upstream placeholder. */
export type Num = number | null;
/** A text field (codes, names, dates, times, flags), or `null` for a placeholder. */
export type Str = string | null;

/**
 * Fields the tables do not declare, kept as the upstream sent them. Not part
 * of the row types (a misspelt field is a compile error); read one with
 * `(row as QuoteRow & ExtraFields).someField` (the row's own type with it:
 * a row type alone does not convert to `ExtraFields`).
 */
export interface ExtraFields {
  readonly [field: string]: unknown;
}

/** Change against the previous day (CHANGE group). */
interface Change {
  /** Direction code of the change (1 up-limit, 2 up, 3 flat, 4 down-limit, 5 down). */
  readonly cmpprevddTpCd?: Str;
  /** Change against the previous close, KRW (points for an index). */
  readonly cmpprevddPrc?: Num;
}

/** Open, high, low and last price (OHLC group), KRW. */
interface Ohlc {
  readonly opnprc?: Num;
  readonly hgprc?: Num;
  readonly lwprc?: Num;
  readonly trdPrc?: Num;
}

/** Cumulative volume (shares) and value (KRW) of the day. */
interface Acc {
  readonly accTrdvol?: Num;
  readonly accTrdval?: Num;
}

type Level = 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9 | 10;

/** Ten price levels a side: `askStep1BstordPrc` … `bidStep10BstordRqty`. */
type BookLevels = {
  readonly [K in `${'ask' | 'bid'}Step${Level}Bstord${'Prc' | 'Rqty'}`]?: Num;
};

// ---- streamed rows (one per topic) ----------------------------------------

/** A `quote` row (multi-quote `lists`): last price, volume, value, market cap. */
export interface QuoteRow extends Acc {
  readonly isuSrtCd: string;
  readonly trdPrc?: Num;
  /** Market capitalisation, KRW. */
  readonly mktcap?: Num;
}

/** An `ohlc` row (multi-quote `ohlclists`): open, high, low, last. */
export interface OhlcRow extends Ohlc {
  readonly isuSrtCd: string;
}

/** An `aht` row (multi-quote `ahtohlclists`): after-hours single-price OHLC. */
export type AhtRow = OhlcRow;

/** A `top` row (multi-quote `quotelists`): last price and best ask/bid. */
export interface TopRow {
  readonly isuSrtCd: string;
  readonly trdPrc?: Num;
  readonly askStep1BstordPrc?: Num;
  readonly askStep1BstordRqty?: Num;
  readonly bidStep1BstordPrc?: Num;
  readonly bidStep1BstordRqty?: Num;
}

/** A `price` row (last trade), also the `get price` result. */
export interface PriceRow extends Change, Ohlc, Acc {
  readonly isuSrtCd: string;
  /** Volume of the last trade, shares. */
  readonly trdvol?: Num;
  /** Side of the last trade (1 sell, 2 buy). */
  readonly lstAskbidTpCd?: Str;
  /** Time of the last trade, `HHMMSSmm`. */
  readonly trdTm?: Str;
  readonly askordPrc_1?: Num;
  readonly bidordPrc_1?: Num;
}

/** A `book` row (10-level order book, LP quotes excluded), also the `get orderbook` result. */
export interface BookRow extends BookLevels {
  readonly isuSrtCd: string;
  readonly accTrdvol?: Num;
  readonly askordTotRqty?: Num;
  readonly bidordTotRqty?: Num;
  readonly pstoffhrAskTotOrdRqty?: Num;
  readonly pstoffhrBidTotOrdRqty?: Num;
  /** Expected price, volume and cumulative volume during an auction. */
  readonly deemTrdPrc?: Num;
  readonly deemTrdvol?: Num;
  readonly deemAccTrdvol?: Num;
}

/** An `index` row (realtime index value); `isuSrtCd` is the industry code. */
export interface IndexRow extends Change, Acc {
  readonly isuSrtCd: string;
  readonly trdTm?: Str;
  readonly trdPrc?: Num;
}

/** The row type of each channel. */
export interface ChannelRows {
  quote: QuoteRow;
  ohlc: OhlcRow;
  top: TopRow;
  aht: AhtRow;
  price: PriceRow;
  book: BookRow;
  index: IndexRow;
}

/** Any streamed row. */
export type AnyRow = ChannelRows[Channel];

// ---- get results ------------------------------------------------------------

/** `get master`: master data of an issue (STOCK-MASTER with the v3 additions). */
export interface MasterData {
  readonly trdDd?: Str;
  readonly isuCd?: Str;
  readonly isuSrtCd?: Str;
  readonly isuKorAbbrv?: Str;
  readonly isuEngNm?: Str;
  readonly secugrpId?: Str;
  readonly mktWarnTpCd?: Str;
  readonly admisuYn?: Str;
  readonly haltYn?: Str;
  readonly idxIndMidclssCd?: Str;
  readonly idxIndUpclssCd?: Str;
  readonly idxIndLwclssCd?: Str;
  readonly mktcapScaleCd?: Str;
  readonly mfindYn?: Str;
  readonly smeYn?: Str;
  readonly krx100IsuYn?: Str;
  readonly kospiYn?: Str;
  readonly kospi100Yn?: Str;
  readonly kospi50Yn?: Str;
  readonly basPrc?: Num;
  readonly prevddClsprc?: Num;
  readonly prevddAccTrdvol?: Num;
  readonly prevddAccTrdval?: Num;
  readonly uplmtprc?: Num;
  readonly lwlmtprc?: Num;
  readonly sbPrc?: Num;
  readonly parval?: Num;
  readonly isuPrc?: Num;
  readonly listDd?: Str;
  readonly listShrs?: Num;
  readonly arrantrdYn?: Str;
  readonly creditOrdPosblYn?: Str;
  readonly regulssQtyUnit?: Num;
  readonly invstcautnRemndIsuYn?: Str;
  readonly srttrmOverheatIsuTpCd?: Str;
  readonly eps?: Num;
  readonly per?: Num;
  readonly bps?: Num;
  readonly pbr?: Num;
  readonly dps?: Num;
  readonly divYd?: Num;
  readonly acntclsCd?: Str;
  readonly acntclsMm?: Str;
  readonly adjStkprcCalcYn?: Str;
  readonly prevddNav?: Num;
}

type AvgPeriod = 3 | 5 | 10 | 20 | 40 | 60 | 120 | 250;

/** Moving averages of price, volume and value, and disparities. */
type MovingAverages = {
  readonly [K in `dd${AvgPeriod}Avg${'Prc' | 'TrdVol' | 'TrdAmt'}` | `dd${5 | 20 | 60 | 120}AvgDp`]?: Num;
};

/** `get selectivemaster`: the master fields asked for (up to 85 names). */
export interface SelectiveMasterData extends MasterData, MovingAverages {
  readonly srtsellTrdvol?: Num;
  readonly srtsellTrdAmt?: Num;
  readonly lendBalQty?: Num;
  readonly lendBalAmt?: Num;
  readonly srtsellOverheatDd?: Num;
  readonly BzDd?: Str;
  readonly wk52HgstPrc?: Num;
  readonly wk52LwstPrc?: Num;
  readonly wk52HgstprcDd?: Num;
  readonly wk52LwstprcDd?: Num;
  readonly wk52HgstTrdvol?: Num;
  readonly wk52LwstTrdvol?: Num;
  readonly liquShrs?: Num;
  readonly DebtRt?: Num;
  readonly CrdtGrd?: Str;
  readonly Cap?: Num;
}

/** The declared field names of a row type (its index signature left out). */
export type KnownFields<T> = Extract<keyof { [K in keyof T as string extends K ? never : number extends K ? never : K]: T[K] }, string>;

/** Names `selectivemaster` understands (others are passed to the server as given). */
export type SelectiveMasterField = KnownFields<SelectiveMasterData>;

/** One daily, weekly or monthly bar (`opnintQty` on derivatives only). */
export interface HistoryRow extends Ohlc, Change, Acc {
  /** Trading day, `YYYYMMDD`. */
  readonly trdDd: string;
  readonly opnintQty?: Num;
}

/** Top level of the history-like results. */
interface HistoryTop {
  readonly isuSrtCd?: Str;
  readonly isuNm?: Str;
  readonly isuKorNm?: Str;
}

/** `get history`: bars, newest first, at most 100. */
export interface HistoryData extends HistoryTop {
  readonly hisLists: readonly HistoryRow[];
}

/** One intraday bar. */
export interface IntradayRow {
  /** Bar time, `HHMMSSmm`. */
  readonly inddTm: string;
  readonly inddOpnprc?: Num;
  readonly inddHgprc?: Num;
  readonly inddLwprc?: Num;
  readonly inddClsprc?: Num;
  readonly inddTrdvol?: Num;
  readonly inddTrdval?: Num;
  readonly inddAccTrdvol?: Num;
  readonly inddAccTrdval?: Num;
}

/** `get intraday`: bars of 10, 60 or 600 s, newest first, at most 100. */
export interface IntradayData extends HistoryTop {
  readonly hisLists: readonly IntradayRow[];
}

/** One symbol of a market's list. */
export interface ListItem {
  readonly isuSrtCd: string;
  /** Standard code (ISIN), e.g. `KR7005930003`. */
  readonly isuCd?: Str;
  readonly isuKorNm?: Str;
  readonly isuKorAbbrv?: Str;
  readonly map_to?: Str;
}

/** `get lists`: the symbol list of a market (KONEX too). */
export interface ListsData {
  readonly trdDd?: Str;
  readonly mktEndTm?: Str;
  readonly isuLists: readonly ListItem[];
}

/** `get closeprice`: closing (or current) quote of an issue. */
export interface ClosePriceData extends Change, Ohlc, Acc {
  readonly isuSrtCd?: Str;
}

/** Trading by one investor type. */
export interface InvestorRow {
  /** Investor type code (provider code table). */
  readonly invstCd: string;
  readonly askTrdvol?: Num;
  readonly askTrdval?: Num;
  readonly bidTrdvol?: Num;
  readonly bidTrdval?: Num;
}

/** `get investors`: trading by investor type, of an issue or of the market. */
export interface InvestorsData {
  readonly Tm?: Str;
  readonly isuSrtCd?: Str;
  readonly isuCd?: Str;
  readonly invstLists: readonly InvestorRow[];
}

/** One day of short selling and lending. */
export interface ShortSellRow {
  readonly trdDd: string;
  readonly srtsellTrdvol?: Num;
  readonly srtsellTrdAmt?: Num;
  readonly lendBalQty?: Num;
  readonly lendBalAmt?: Num;
  readonly srtsellBal?: Num;
}

/** `get shortsell`: short selling and lending balances by day. */
export interface ShortSellData {
  readonly isuSrtCd?: Str;
  readonly hisLists: readonly ShortSellRow[];
}

/** One day of foreign holding. */
export interface ForeignRow {
  readonly trdDd: string;
  readonly FornHdVol?: Num;
  readonly cmpprevddFornHdVol?: Num;
  /** Foreign holding ratio, %. */
  readonly FornHdVolRt?: Num;
}

/** `get foreignhistory`: foreign holding by day, at most 100 rows. */
export interface ForeignHistoryData {
  readonly isuSrtCd?: Str;
  readonly hisLists: readonly ForeignRow[];
}

type Rank = 1 | 2 | 3 | 4 | 5;

/** Members ranked 1–5 on each side: name, then volume, value, price and weight. */
type Ranking = { readonly [K in `${'bid' | 'ask'}TrdMbr${Rank}`]?: Str } & {
  readonly [K in `${'bid' | 'ask'}Trd${'VolMbr' | 'AmtMbr' | 'PrcMbr' | 'WtMbr'}${Rank}`]?: Num;
};

/** `get traderanking`: the top 5 trading members on each side. */
export interface TradeRankingData extends Ranking {
  readonly isuSrtCd?: Str;
}

/** `get closenav`: an ETF's net asset value after the close. */
export interface CloseNavData {
  readonly isuSrtCd?: Str;
  readonly nav?: Num;
  readonly cmpprevddNav?: Num;
}

/**
 * `get index`: an index value. A sector index (with a code) carries the
 * realtime fields (`trdTm`); the market index (without) carries the closing
 * ones (OHLC, issue count, listed shares, market cap).
 */
export interface IndexData extends Change, Ohlc, Acc {
  readonly isuSrtCd?: Str;
  readonly trdTm?: Str;
  readonly isuCnt?: Num;
  readonly listShrs?: Num;
  readonly mktcap?: Num;
}

/**
 * What a lookup whose answer is a list of rows says beside them: `dropped`,
 * how many of the upstream's rows the bridge could not use (missing their
 * date or code, say) and left out; absent when none were. A lookup whose rows
 * were all unusable rejects instead (`upstream_unavailable`, schema drift).
 * See docs/PROTOCOL.md §get.
 */
export interface Dropped {
  readonly dropped?: number;
}

/** The `data` type of each `get` resource. */
export interface ResourceData {
  master: MasterData;
  selectivemaster: SelectiveMasterData;
  history: HistoryData & Dropped;
  intraday: IntradayData & Dropped;
  lists: ListsData & Dropped;
  closeprice: ClosePriceData;
  investors: InvestorsData & Dropped;
  shortsell: ShortSellData & Dropped;
  foreignhistory: ForeignHistoryData & Dropped;
  traderanking: TradeRankingData;
  closenav: CloseNavData;
  index: IndexData;
  price: PriceRow;
  orderbook: BookRow;
}

// Compile-time check that every resource has a result type.
type Assert<T extends true> = T;
type _EveryResourceTyped = Assert<Resource extends keyof ResourceData ? true : false>;
