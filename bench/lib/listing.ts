import { shortCodes } from './market.js';

/**
 * The listing of the end-to-end scenario's upstream stand-in: the symbols of
 * one seeded synthetic market split over KOSPI (five in nine) and KOSDAQ
 * (four in nine), each symbol with one `quote` topic. The stand-in, the
 * peers and the load all derive it from the same seed. Pure functions.
 */

/** The markets the stand-in lists. */
export const LISTING_MARKETS = ['kospi', 'kosdaq'] as const;
/** A market of the listing. */
export type ListingMarket = (typeof LISTING_MARKETS)[number];

/** The market of symbol `index`. */
export function marketOfSymbol(index: number): ListingMarket {
  return index % 9 < 5 ? 'kospi' : 'kosdaq';
}

/**
 * `quote.<market>.<code>` of every symbol, by index. The codes are those of
 * `SyntheticMarket` for the same `symbols` and `seed`, so its rows line up.
 */
export function listingTopics(symbols: number, seed: number): string[] {
  return shortCodes(symbols, seed ^ 0x5eed).map((code, i) => `quote.${marketOfSymbol(i)}.${code}`);
}

/** Symbol indices of each market, ascending (so by code). */
export function symbolsByMarket(symbols: number): Record<ListingMarket, number[]> {
  const out: Record<ListingMarket, number[]> = { kospi: [], kosdaq: [] };
  for (let i = 0; i < symbols; i++) out[marketOfSymbol(i)].push(i);
  return out;
}

/** Channel, market and code of a topic `channel.market.code`. */
export function splitTopic(topic: string): { channel: string; market: string; code: string } {
  const a = topic.indexOf('.');
  const b = topic.indexOf('.', a + 1);
  return { channel: topic.slice(0, a), market: topic.slice(a + 1, b), code: topic.slice(b + 1) };
}

/** One `subscribe` request's target: a feed and its codes. */
export interface FeedCodes {
  readonly channel: string;
  readonly market: string;
  readonly codes: string[];
}

/** Topics grouped into one request per feed, in order of first appearance. */
export function feedsOf(topics: readonly string[]): FeedCodes[] {
  const feeds = new Map<string, FeedCodes>();
  for (const t of topics) {
    const { channel, market, code } = splitTopic(t);
    const key = `${channel}.${market}`;
    let f = feeds.get(key);
    if (!f) feeds.set(key, (f = { channel, market, codes: [] }));
    f.codes.push(code);
  }
  return [...feeds.values()];
}
