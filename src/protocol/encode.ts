import { CHANNELS, MARKETS, PROTOCOL_VERSION, RESOURCES, type Limits } from './constants.js';
import { ERROR_CODES, type WireError } from './errors.js';
import { ServerMsg, type RequestId, type StatusMsg, type WelcomeMsg } from './messages.js';

/**
 * The server side of the wire: every frame the server writes is the text
 * `encode` gives for a `ServerMsg`, fields in the order the schemas in
 * messages.ts declare them (the order docs/PROTOCOL.md shows). The hot
 * paths build snapshot, patch and result frames from fragments instead
 * (state/frames.ts, upstream/cache.ts `messageWithData`); a property test
 * holds them byte-identical to `encode`. Server-only: the client never
 * encodes server messages, and does not import this module.
 */

type MsgType = ServerMsg['type'];

/** Each message type's fields, in schema order. */
const FIELD_ORDER: Readonly<Record<MsgType, readonly string[]>> = Object.fromEntries(
  ServerMsg.options.map((o) => [o.shape.type.value, Object.keys(o.shape)]),
) as unknown as Record<MsgType, readonly string[]>;

/** The JSON text of a server message: its fields in schema order, absent (undefined) ones left out. */
export function encode(msg: ServerMsg): string {
  const m = msg as unknown as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of FIELD_ORDER[msg.type]) if (m[k] !== undefined) out[k] = m[k];
  return JSON.stringify(out);
}

/**
 * The `error` frame of a wire error; `retryable` comes from ERROR_CODES.
 * `id` is echoed when the request carried one.
 */
export function errorFrame(err: WireError, id?: RequestId): string {
  return encode({ type: 'error', id, code: err.code, message: err.message, retryable: ERROR_CODES[err.code].retryable, topic: err.topic });
}

/** A feed's state as the `status` message carries it. */
export type StatusFields = Omit<StatusMsg, 'type'>;

/** The `status` frame of a feed state. */
export function statusFrame(st: StatusFields): string {
  return encode({
    type: 'status',
    market: st.market,
    channel: st.channel,
    state: st.state,
    intervalMs: st.intervalMs,
    reason: st.reason,
    ts: st.ts,
    opensAt: st.opensAt,
    asOf: st.asOf,
  });
}

/** What a replay connection's `welcome` says of its replay. */
export type ReplayInfo = NonNullable<WelcomeMsg['replay']>;

/** The `welcome` frame of a connection with `limits` (the first frame of every connection); `server` is `krx-bridge/<version>`. */
export function welcomeFrame(server: string, epoch: string, heartbeatMs: number, limits: Limits, ts: number, replay?: ReplayInfo): string {
  return encode({
    type: 'welcome',
    version: PROTOCOL_VERSION,
    server,
    epoch,
    heartbeatMs,
    limits,
    channels: [...CHANNELS],
    markets: [...MARKETS],
    resources: [...RESOURCES],
    ts,
    replay,
  });
}
