/**
 * The krx-bridge client SDK (`krx-bridge/client`): one entry for browsers
 * and Node. It imports no Node module and no WebSocket package; on Node 20
 * pass one: `new KrxClient(url, { WebSocket })` with `import { WebSocket }
 * from 'ws'`. See src/client/README.md and docs/PROTOCOL.md.
 */

/** The client. */
export { KrxClient } from './client.js';
export type { Date8, Time4, HistoryParams, IntradayParams, ShortSellParams, ForeignHistoryParams, RowOfTopic } from './client.js';
/** Options, states and events. */
export type { ConnectionState, GetMarket, KrxClientOptions, KrxClientEvents, ChannelListener } from './types.js';
export type { RequestOptions } from './requests.js';
export type { WebSocketLike, WebSocketConstructor } from './connection.js';
export type { FeedSubscription } from './subscriptions.js';
export type { Change, LocalRow, ResyncReason } from './topics/state.js';
/** Errors. */
export { KrxError, isKrxError, CLIENT_ERROR_CODES } from './errors.js';
export type { KrxErrorCode, ClientErrorCode, KrxErrorOptions } from './errors.js';
/** Reconnect delays (exported for applications that reconnect other things alike). */
export { Backoff } from './backoff.js';
export type { BackoffOptions } from './backoff.js';
/** Row and result types. */
export type * from './rows.js';
/** Protocol vocabulary and message types the client's API uses. */
export { CHANNELS, MARKETS, GET_MARKETS, RESOURCES, LIST_CHANNELS, WILDCARD, PROTOCOL_VERSION } from '../protocol/constants.js';
export type { Channel, Market, Resource, ChannelState, Limits } from '../protocol/constants.js';
export type { ErrorCode } from '../protocol/errors.js';
export type { StatusMsg, WelcomeMsg, PatchOp } from '../protocol/messages.js';
export { topicOf, parseTopic } from '../protocol/topics.js';
export type { TopicParts } from '../protocol/topics.js';
