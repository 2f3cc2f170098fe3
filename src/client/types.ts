import type { Channel, GET_MARKETS } from '../protocol/constants.js';
import type { StatusMsg, WelcomeMsg } from '../protocol/wire.js';
import type { BackoffOptions } from './backoff.js';
import type { WebSocketConstructor } from './connection.js';
import type { KrxError } from './errors.js';
import type { FetchLike } from './refusal.js';
import type { AnyRow, ChannelRows } from './rows.js';
import type { Change, ResyncReason } from './topics/state.js';

/**
 * Options, states and events of `KrxClient`. See src/client/README.md.
 */

/**
 * Connection state: `connecting` (first attempt, until `welcome`), `open`
 * (welcomed; requests flow), `reconnecting` (lost; waiting or retrying),
 * `closed` (by `close()`, or lost with `reconnect: false`; final).
 */
export type ConnectionState = 'connecting' | 'open' | 'reconnecting' | 'closed';

/** A market `get` accepts (`konex` for `lists` only). */
export type GetMarket = (typeof GET_MARKETS)[number];

/** Options of `KrxClient`; every one has a default. */
export interface KrxClientOptions extends BackoffOptions {
  /**
   * WebSocket constructor; default `globalThis.WebSocket` (browsers, Node 22+).
   * On Node 20 pass the `ws` package's: `new KrxClient(url, { WebSocket })`.
   */
  readonly WebSocket?: WebSocketConstructor;
  /**
   * Open on a recorded day instead of the live market (`/ws/replay`): the
   * day (`YYYYMMDD`), the window (`HHMMSS` KST, default the whole day) and the
   * speed (1–1000, or `'max'`; default 1). The client then behaves exactly as
   * live; when the replay ends (close 1000) it closes instead of reconnecting.
   */
  readonly replay?: { readonly date: string; readonly from?: string; readonly to?: string; readonly speed?: number | 'max' };
  /**
   * `fetch`, to ask the server why a socket failed to open (a plain GET of
   * its URL answers with the refusal an upgrade would get: a token not
   * valid, a misspelt parameter); default `globalThis.fetch`.
   */
  readonly fetch?: FetchLike;
  /** Token sent as `?token=` on every (re)connect; a function is asked each time (for refresh). */
  readonly token?: string | (() => string | Promise<string>);
  /** Default time allowed for a request's answer, from the call (ms); default 10000. */
  readonly requestTimeoutMs?: number;
  /** Time allowed from starting a connection to its `welcome` (ms); default 10000. */
  readonly connectTimeoutMs?: number;
  /** A connection open this long resets the backoff (ms); default 5000. */
  readonly stableAfterMs?: number;
  /** Reconnect after losing the connection; default true. */
  readonly reconnect?: boolean;
  /** Check every row against the message's CRC-32 and resync on a mismatch; default true. */
  readonly verifyCrc?: boolean;
  /** Freeze rows handed to listeners so they cannot alter the client's copy; default true. */
  readonly freezeRows?: boolean;
  /**
   * Probe a quiet connection with `ping` after `welcome.heartbeatMs` and drop
   * it after twice that without any frame (catches dead peers a browser
   * cannot see); default true.
   */
  readonly heartbeat?: boolean;
}

/** A listener of one channel's updates: the code, its new row, and what changed. */
export type ChannelListener<C extends Channel> = (code: string, row: ChannelRows[C], change: Change) => void;

/** Events of `KrxClient`, with their listeners' arguments. */
export interface KrxClientEvents {
  /** A `quote` row changed (snapshot or patch applied). */
  quote: ChannelListener<'quote'>;
  /** An `ohlc` row changed. */
  ohlc: ChannelListener<'ohlc'>;
  /** A `top` row changed. */
  top: ChannelListener<'top'>;
  /** An `aht` row changed. */
  aht: ChannelListener<'aht'>;
  /** A `price` row changed. */
  price: ChannelListener<'price'>;
  /** A `book` row changed. */
  book: ChannelListener<'book'>;
  /** An `index` row changed. */
  index: ChannelListener<'index'>;
  /** Any topic's row changed (after its channel's event). */
  update: (topic: string, row: AnyRow, change: Change) => void;
  /** A feed's upstream state (live, stale, closed, …). */
  status: (status: StatusMsg) => void;
  /** Something failed that no promise reports: a dropped subscription, a bad frame, a throwing listener. */
  error: (error: KrxError) => void;
  /** The connection state changed. */
  state: (prev: ConnectionState, next: ConnectionState) => void;
  /** A connection was welcomed (after subscriptions were restored). */
  welcome: (welcome: WelcomeMsg) => void;
  /** A connection that was up closed; `code` 1006 when no close frame came. Once per connection, not per failed retry. */
  disconnect: (code: number, reason: string) => void;
  /** The client will try to connect again: the `attempt` since it was last up, after `delayMs`. */
  reconnecting: (attempt: number, delayMs: number) => void;
  /**
   * After a reconnect, per topic whose rows were held: `true` when the
   * server brought it up to date with the patches it missed (or it missed
   * none), `false` when it sent a fresh snapshot instead (a new epoch, or the
   * missed patches no longer buffered).
   */
  resumed: (recovered: Readonly<Record<string, boolean>>) => void;
  /** One topic's local row went out of step and a fresh snapshot was requested. */
  resync: (topic: string, reason: ResyncReason) => void;
}
