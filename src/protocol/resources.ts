import { z } from 'zod';
import type { Resource } from './constants.js';

/**
 * Parameters of each `get` resource, by friendly name (docs/PROTOCOL.md §get).
 * The gateway maps them to the upstream's parameter names.
 */

const date8 = z
  .union([z.string(), z.number()])
  .transform((v) => String(v))
  .pipe(z.string().regex(/^(19|20)\d{2}(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])$/, 'must be a date YYYYMMDD'));
const hhmm = z
  .union([z.string(), z.number()])
  .transform((v) => String(v).padStart(4, '0'))
  .pipe(z.string().regex(/^([01]\d|2[0-3])[0-5]\d$/, 'must be a time HHMM'));
const count = z.coerce.number().int().min(1).max(100);

const none = z.object({}).strict();

/** Parameter schema of each resource. */
export const RESOURCE_PARAMS = {
  master: none,
  selectivemaster: z.object({ fields: z.array(z.string().min(1).max(40)).min(1).max(85) }).strict(),
  history: z.object({ period: z.enum(['D', 'W', 'M']).default('D'), from: date8.optional(), to: date8.optional(), count: count.optional() }).strict(),
  intraday: z
    .object({
      interval: z
        .union([z.literal(10), z.literal(60), z.literal(600), z.enum(['10', '60', '600'])])
        .default(60)
        .transform((v) => Number(v) as 10 | 60 | 600),
      date: date8.optional(),
      from: hhmm.default('0900'),
      to: hhmm.default('1530'),
    })
    .strict(),
  lists: none,
  closeprice: none,
  investors: none,
  shortsell: z.object({ from: date8.optional(), to: date8.optional(), count: count.optional() }).strict(),
  foreignhistory: z.object({ from: date8.optional(), to: date8.optional(), count: count.optional() }).strict(),
  traderanking: none,
  closenav: none,
  index: none,
  price: none,
  orderbook: none,
} as const satisfies Record<Resource, z.ZodType>;

/** Whether a resource needs `code`: required, optional, or not taken. */
export const RESOURCE_CODE: Readonly<Record<Resource, 'required' | 'optional' | 'none'>> = {
  master: 'required',
  selectivemaster: 'required',
  history: 'required',
  intraday: 'required',
  lists: 'none',
  closeprice: 'required',
  investors: 'optional',
  shortsell: 'required',
  foreignhistory: 'required',
  traderanking: 'required',
  closenav: 'required',
  index: 'optional',
  price: 'required',
  orderbook: 'required',
};

/** What each resource returns, for the docs. */
export const RESOURCE_TEXT: Readonly<Record<Resource, string>> = {
  master: 'Master data of an issue (names, flags, limits, base price, listed shares, …).',
  selectivemaster: 'Only the named master fields (up to 85, incl. moving averages and 52-week figures).',
  history: 'Daily (D), weekly (W) or monthly (M) bars, newest first, at most 100.',
  intraday: 'Intraday bars of 10, 60 or 600 seconds between two times of one day, at most 100.',
  lists: 'The symbol list of a market (KONEX too): code, standard code, names.',
  closeprice:
    'The closing price of an issue: the last session’s before 08:30 KST and on closed days, the day’s from 15:40; between them the upstream does not provide it (not_provided_now).',
  investors: 'Trading by investor type: of an issue with `code`, of the market without.',
  shortsell: 'Short selling and lending balances by day.',
  foreignhistory: 'Foreign holding by day, at most 100 rows.',
  traderanking: 'Top 5 trading members on each side.',
  closenav: 'An ETF’s net asset value after the close.',
  index: 'A sector index value with an industry `code` (K1, Q1, …); the market index without.',
  price: 'The last trade of one issue (one-off; subscribe to `price` for a stream).',
  orderbook: 'The 10-level order book of one issue (one-off; subscribe to `book` for a stream).',
};
