import { z } from 'zod';
import { SELECTIVE_MASTER_FIELDS } from './fields.js';

/**
 * Zod schemas of the upstream request parameters, by their upstream names.
 * They coerce the types a caller naturally has (numbers for counts and
 * dates, a comma-separated string or an array for code lists) into what the
 * upstream expects.
 */

/** Stock markets with realtime and per-issue endpoints. */
export const STOCK_MARKETS = ['kospi', 'kosdaq'] as const;
/** Markets with a symbol list (KONEX has the list only). */
export const LIST_MARKETS = ['kospi', 'kosdaq', 'konex'] as const;
/** Derivative market codes (provider code table "시장코드"). */
export const DERIVATIVE_MARKETS = [
  'kospi200',
  'mini_kospi200',
  'kosdaq150',
  'sector',
  'vix',
  'stock',
  'usd',
  'yen',
  'euro',
  'ktb3',
  'ktb5',
  'ktb10',
  'lean_hogs',
  'cme_kospi200',
  'eurostoxx',
] as const;
/** Index market codes (provider code table). */
export const INDEX_MARKETS = ['kospi', 'kosdaq', 'sector', 'etc'] as const;
/** Country codes of the holiday service (provider code table). */
export const NATION_CODES = ['DE', 'KR', 'US', 'VN', 'GB', 'IN', 'JP', 'CN', 'TW', 'SG', 'AU', 'EU'] as const;

/** Most issue codes one multi-quote `price`/`orderbook` call takes. */
export const MAX_CODES_PER_CALL = 20;
/** Most rows a history, intraday or foreign-history call returns (`reqCnt` maximum). */
export const MAX_ROWS_PER_CALL = 100;

const text = (re: RegExp, what: string) =>
  z
    .union([z.string(), z.number()])
    .transform((v) => String(v).trim())
    .pipe(z.string().regex(re, `must be ${what}`));

/** A stock short code: 6 characters, digits and capital letters (letters since 2024). */
export const stockCode = text(/^[0-9A-Z]{6}$/, 'a 6-character short code such as 005930');
/** An index (industry) code such as K1, Q1, S300. */
export const indexCode = text(/^[KQS]\d{1,3}$/, 'an industry code such as K1 or Q1');
/** A derivative short code (8–9 characters) or a continuous-contract code such as K2FA001. */
export const derivativeCode = text(/^[0-9A-Z]{7,12}$/, 'a derivative short code such as 101S6000');
/** A date `YYYYMMDD`. */
export const date8 = text(/^(19|20)\d{2}(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])$/, 'a date YYYYMMDD');
/** A time of day `HHMM` or `HHMMSS`. */
export const timeOfDay = text(/^([01]\d|2[0-3])[0-5]\d([0-5]\d)?$/, 'a time HHMM or HHMMSS');

/** A list of 1..20 stock codes, as an array or a comma-separated string. */
export const codeList = z
  .union([z.string(), z.array(z.string())])
  .transform((v) => (Array.isArray(v) ? v : v.split(',')).map((c) => c.trim()).filter((c) => c.length > 0))
  .pipe(
    z
      .array(z.string().regex(/^[0-9A-Z]{6}$/, 'each code must be a 6-character short code'))
      .min(1, 'at least one code')
      .max(MAX_CODES_PER_CALL, `at most ${MAX_CODES_PER_CALL} codes per call`),
  );

/** History period: D daily, W weekly, M monthly. */
export const historyPeriod = z.enum(['D', 'W', 'M']);
/** Intraday bar length in seconds: 10, 60 or 600. */
export const intradayCycle = z
  .union([z.string(), z.number()])
  .transform((v) => String(v))
  .pipe(z.enum(['10', '60', '600']));
/** Requested row count, 1..100. */
export const rowCount = z.coerce.number().int().min(1).max(MAX_ROWS_PER_CALL);
/** Field names wanted from selectivemaster (sent as bare query flags). */
export const selectiveFields = z.array(z.enum(SELECTIVE_MASTER_FIELDS as [string, ...string[]])).min(1, 'name at least one field');

/** Query-parameter schemas by upstream name. */
export const QUERY = {
  isuCd: codeList,
  trnsmCycleTpCd: historyPeriod,
  inqStrtDd: date8,
  inqEndDd: date8,
  reqCnt: rowCount,
  inddCycleTpCd: intradayCycle,
  strtTm: timeOfDay,
  endTm: timeOfDay,
  fields: selectiveFields,
} as const;

/** Name of a query parameter. */
export type QueryName = keyof typeof QUERY;
