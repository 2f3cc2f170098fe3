/**
 * The krx-bridge client SDK (`krx-bridge/client`): one entry for browsers
 * and Node. It imports no Node module and no WebSocket package; on Node 20
 * pass one: `new KrxClient(url, { WebSocket })` with `import { WebSocket }
 * from 'ws'`. See src/client/README.md and docs/PROTOCOL.md.
 */

/** The client. */
export { KrxClient } from './client.js';
/** Parameter and helper types of the client's methods. */
export type { Date8, Time4, HistoryParams, HistoryPage, IntradayParams, ShortSellParams, ForeignHistoryParams, RowOfTopic } from './client.js';
/** Options, states and events. */
export type { ConnectionState, GetMarket, KrxClientOptions, KrxClientEvents, ChannelListener } from './types.js';
/** Per-request options (timeout, abort signal). */
export type { RequestOptions } from './requests.js';
/** The WebSocket interface the client needs, for injecting a constructor. */
export type { WebSocketLike, WebSocketConstructor } from './connection.js';
/** The part of `fetch` the client uses to ask why a socket failed to open. */
export type { FetchLike } from './refusal.js';
/** A feed's subscriptions, as `subscriptions()` lists them. */
export type { FeedSubscription } from './subscriptions.js';
/** What listeners receive about a change, and why a topic resyncs. */
export type { Change, LocalRow, ResyncReason } from './topics/state.js';
export { Direction, kstTime, viewOf, type RowView } from './view.js';
export { toDate8, type DateLike } from './dates.js';
/** Errors with stable codes. */
export { KrxError, isKrxError, CLIENT_ERROR_CODES } from './errors.js';
/** Error code and option types. */
export type { KrxErrorCode, ClientErrorCode, KrxErrorOptions } from './errors.js';
/** Reconnect delays (exported for applications that reconnect other things alike). */
export { Backoff } from './backoff.js';
/** Options of `Backoff` (also accepted by `KrxClient`). */
export type { BackoffOptions } from './backoff.js';
/** Row and result types. */
export type * from './rows.js';
/** Protocol vocabulary the client's API uses. */
export { CHANNELS, MARKETS, GET_MARKETS, RESOURCES, LIST_CHANNELS, WILDCARD, PROTOCOL_VERSION } from '../protocol/constants.js';
/** Protocol vocabulary types. */
export type { Channel, Market, Resource, ChannelState, Limits } from '../protocol/constants.js';
/** Wire error codes. */
export type { ErrorCode } from '../protocol/errors.js';
/** Server message types the client hands out. */
export type { StatusMsg, WelcomeMsg, PatchOp } from '../protocol/wire.js';
/** Topic strings to and from their parts. */
export { topicOf, parseTopic } from '../protocol/topics.js';
/** The parts of a topic. */
export type { TopicParts } from '../protocol/topics.js';
