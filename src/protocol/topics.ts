import { CHANNELS, MARKETS, type Channel, type Market } from './constants.js';

/**
 * Topics: `channel.market.code`, e.g. `quote.kospi.005930`. Pure functions.
 * See docs/PROTOCOL.md §Topics.
 */

/** A parsed topic. */
export interface TopicParts {
  readonly channel: Channel;
  readonly market: Market;
  readonly code: string;
}

/** The topic string of a channel, market and code. */
export function topicOf(channel: Channel, market: Market, code: string): string {
  return `${channel}.${market}.${code}`;
}

/** The feed key (`channel.market`) of a channel and market. */
export function feedOf(channel: Channel, market: Market): string {
  return `${channel}.${market}`;
}

const CHANNEL_SET: ReadonlySet<string> = new Set(CHANNELS);
const MARKET_SET: ReadonlySet<string> = new Set(MARKETS);

/** The parts of a topic string, or undefined when it is not a valid topic. */
export function parseTopic(topic: string): TopicParts | undefined {
  const a = topic.indexOf('.');
  const b = a < 0 ? -1 : topic.indexOf('.', a + 1);
  if (a < 0 || b < 0) return undefined;
  const channel = topic.slice(0, a);
  const market = topic.slice(a + 1, b);
  const code = topic.slice(b + 1);
  if (!CHANNEL_SET.has(channel) || !MARKET_SET.has(market) || code.length === 0 || code.length > 12) return undefined;
  return { channel: channel as Channel, market: market as Market, code };
}

/** Stock short code: 6 characters, digits and capital letters. */
export const STOCK_CODE = /^[0-9A-Z]{6}$/;
/** Index (industry) code: K…, Q… or S… plus 1–3 digits. */
export const INDEX_CODE = /^[KQS]\d{1,3}$/;
