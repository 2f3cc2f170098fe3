import type { Channel, Market } from '../protocol/constants.js';
import { BATCH_CHANNELS, LIST_CHANNELS } from '../protocol/constants.js';
import { MAX_CODES_PER_CALL } from '../upstream/params.js';

/**
 * Which upstream endpoint feeds each channel, per API family, and the calls
 * one poll cycle of a feed makes. Pure. See DESIGN.md §3.
 */

/** An API family of the catalogue. */
export type Family = 'v2' | 'v3';

/** The family each market's feeds use. */
export type Families = Readonly<Record<Market, Family>>;

/** Default families: KOSPI on the v2 multi-quote paths, KOSDAQ on the v3 realtime paths. */
export const DEFAULT_FAMILIES: Families = { kospi: 'v2', kosdaq: 'v3' };

/** Endpoint id feeding each channel, by family. */
export const FEED_ENDPOINTS: Readonly<Record<Family, Readonly<Record<Channel, string>>>> = {
  v2: {
    quote: 'v2.multiquote.lists',
    ohlc: 'v2.multiquote.ohlclists',
    top: 'v2.multiquote.quotelists',
    aht: 'v2.multiquote.ahtohlclists',
    price: 'v2.multiquote.price',
    book: 'v2.multiquote.orderbook',
    index: 'v2.index.index',
  },
  v3: {
    quote: 'v3.realtime.multiquote.lists',
    ohlc: 'v3.realtime.multiquote.ohlclists',
    top: 'v3.realtime.multiquote.quotelists',
    aht: 'v3.realtime.multiquote.ahtohlclists',
    price: 'v3.realtime.multiquote.price',
    book: 'v3.realtime.multiquote.orderbook',
    index: 'v3.realtime.index.index',
  },
};

/** Relative priority of each channel when the budget cannot afford every feed at full rate. */
export const CHANNEL_WEIGHTS: Readonly<Record<Channel, number>> = {
  quote: 5,
  book: 4,
  price: 4,
  top: 3,
  ohlc: 2,
  index: 2,
  aht: 1,
};

/** One upstream call of a poll cycle. */
export interface PlannedCall {
  readonly endpointId: string;
  readonly params: Readonly<Record<string, unknown>>;
}

const LIST: ReadonlySet<Channel> = new Set(LIST_CHANNELS);
const BATCH: ReadonlySet<Channel> = new Set(BATCH_CHANNELS);

/** Whether a channel is fed by whole-market list snapshots. */
export function isListChannel(channel: Channel): boolean {
  return LIST.has(channel);
}

/**
 * The calls of one cycle of a feed, given the codes wanted: one call for a
 * list channel; ⌈codes/20⌉ calls for `price`/`book` (codes sorted, so the
 * batches are stable from cycle to cycle); one call per industry code for
 * `index`. Empty when nothing is wanted.
 */
export function planCycle(channel: Channel, market: Market, family: Family, codes: ReadonlySet<string>, wildcard: boolean): PlannedCall[] {
  const endpointId = FEED_ENDPOINTS[family][channel];
  if (LIST.has(channel)) return codes.size > 0 || wildcard ? [{ endpointId, params: { marketcode: market } }] : [];
  const sorted = [...codes].sort();
  if (BATCH.has(channel)) {
    const out: PlannedCall[] = [];
    for (let i = 0; i < sorted.length; i += MAX_CODES_PER_CALL) {
      out.push({ endpointId, params: { marketcode: market, isuCd: sorted.slice(i, i + MAX_CODES_PER_CALL) } });
    }
    return out;
  }
  return sorted.map((code) => ({ endpointId, params: { marketcode: market, issuecode: code } }));
}

/** Calls one cycle of a feed makes for `codes` wanted (without planning them). */
export function callsPerCycle(channel: Channel, codes: number, wildcard: boolean): number {
  if (LIST.has(channel)) return codes > 0 || wildcard ? 1 : 0;
  if (BATCH.has(channel)) return Math.ceil(codes / MAX_CODES_PER_CALL);
  return codes;
}
