/**
 * Vocabulary of protocol v1: channels, markets, resources, states and limits.
 * See docs/PROTOCOL.md.
 */

/** Protocol version announced in `welcome`. */
export const PROTOCOL_VERSION = '1';

/** Streaming channels. */
export const CHANNELS = ['quote', 'ohlc', 'top', 'aht', 'price', 'book', 'index'] as const;
/** A streaming channel. */
export type Channel = (typeof CHANNELS)[number];

/** Channels fed by whole-market list snapshots; these accept `codes: ["*"]`. */
export const LIST_CHANNELS = ['quote', 'ohlc', 'top', 'aht'] as const satisfies readonly Channel[];
/** Channels that take explicit codes only, polled in batches of 20 per call. */
export const BATCH_CHANNELS = ['price', 'book'] as const satisfies readonly Channel[];

/** Markets that can be streamed. KONEX has a symbol list only (`get lists`). */
export const MARKETS = ['kospi', 'kosdaq'] as const;
/** A streamable market. */
export type Market = (typeof MARKETS)[number];

/** Markets accepted by `get` (KONEX for `lists`). */
export const GET_MARKETS = ['kospi', 'kosdaq', 'konex'] as const;

/** The wildcard code: every symbol of the market (list channels only). */
export const WILDCARD = '*';

/** On-demand resources of `get`, by short name. */
export const RESOURCES = [
  'master',
  'selectivemaster',
  'history',
  'intraday',
  'lists',
  'closeprice',
  'investors',
  'shortsell',
  'foreignhistory',
  'traderanking',
  'closenav',
  'index',
  'price',
  'orderbook',
] as const;
/** An on-demand resource name. */
export type Resource = (typeof RESOURCES)[number];

/**
 * Upstream state of a (market, channel):
 * - `live`: polled successfully within its interval;
 * - `stale`: the last polls failed; data is as of `ts` of the last message;
 * - `closed`: outside the trading sessions (or the provision time); nothing changes;
 * - `rate_limited`: the daily call budget is spent; nothing is polled until the reset;
 * - `error`: the upstream refuses the bridge (e.g. credentials); an operator must act;
 * - `degraded`: this process lost its cluster backplane; data may lag until it returns;
 * - `idle`: nobody subscribes, so nothing is polled.
 */
export const STATES = ['live', 'stale', 'closed', 'rate_limited', 'error', 'degraded', 'idle'] as const;
/** A channel state. */
export type ChannelState = (typeof STATES)[number];

/** Default per-connection limits, announced in `welcome.limits`. */
export const DEFAULT_LIMITS = {
  /** Explicit topics one connection may hold. */
  maxTopics: 1000,
  /** Wildcard (whole-market) subscriptions one connection may hold. */
  maxWildcards: 8,
  /** Client messages per second (sustained; bursts up to twice that). */
  maxMessagesPerSecond: 50,
  /** Largest client frame, in bytes. */
  maxPayloadBytes: 262_144,
  /** `get` requests per minute. */
  getsPerMinute: 120,
} as const;

/** Per-connection limits, as announced in `welcome`. */
export interface Limits {
  maxTopics: number;
  maxWildcards: number;
  maxMessagesPerSecond: number;
  maxPayloadBytes: number;
  getsPerMinute: number;
}
