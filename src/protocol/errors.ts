/**
 * Wire error codes and WebSocket close codes of protocol v1.
 * Every code here is listed in docs/PROTOCOL.md and docs/OPERATIONS.md.
 */

/** Error codes of `error` frames, with whether a retry can succeed and what they mean. */
export const ERROR_CODES = {
  bad_request: { retryable: false, text: 'The message is not valid JSON or does not match the protocol schema.' },
  unknown_op: { retryable: false, text: 'The `op` is not one of subscribe, unsubscribe, get, resync, ping.' },
  invalid_channel: { retryable: false, text: 'The channel does not exist.' },
  invalid_market: { retryable: false, text: 'The market does not exist or does not offer this channel or resource.' },
  invalid_code: { retryable: false, text: 'A code is not listed on the market (or not valid for the channel).' },
  invalid_resource: { retryable: false, text: 'The `get` resource does not exist.' },
  invalid_params: {
    retryable: false,
    text: 'The `get` parameters are missing or malformed, or a query parameter of `/ws`, `/ws/replay` or an export is unknown, given twice or malformed.',
  },
  not_subscribed: { retryable: false, text: 'The topic is not subscribed on this connection (resync).' },
  too_many_topics: { retryable: false, text: 'The subscription would pass the per-connection topic or wildcard limit.' },
  rate_limited: { retryable: true, text: 'This connection sends messages or `get` requests faster than its limit.' },
  upstream_rate_limited: { retryable: true, text: 'The upstream daily call budget is spent until its reset.' },
  upstream_unavailable: { retryable: true, text: 'The upstream failed, timed out, or answered something unusable.' },
  not_provided_now: { retryable: true, text: 'The upstream does not provide this data at this time of day.' },
  not_found: { retryable: false, text: 'The upstream has no such data.' },
  not_recorded: { retryable: false, text: 'The replay or export asks for a day, or a window of it, that the server has not recorded.' },
  recording_off: { retryable: false, text: 'The server does not record (RECORD=off): it serves no replay and no recordings.' },
  unauthorized: { retryable: false, text: 'A token is required, or the token is not valid or has expired.' },
  internal: { retryable: true, text: 'An unexpected server error; the connection stays usable.' },
} as const;

/** A wire error code. */
export type ErrorCode = keyof typeof ERROR_CODES;

/** All wire error codes, in documentation order. */
export const ERROR_CODE_LIST = Object.keys(ERROR_CODES) as [ErrorCode, ...ErrorCode[]];

/**
 * Codes of the gateway's HTTP refusals of a WebSocket upgrade that are not
 * wire error codes (docs/OPERATIONS.md §4.2; the others a refusal carries,
 * `invalid_params`, `unauthorized`, `not_found`, `internal`, are). A
 * browser's WebSocket cannot read them; the SDK learns them from a plain
 * GET of the same URL after a socket failed to open.
 */
export const REFUSAL_CODES = {
  forbidden_origin: { retryable: false, text: "The page's origin is not one the server allows (ALLOWED_ORIGINS)." },
  too_many_connections: { retryable: true, text: 'This address already holds as many connections as the server allows one address.' },
  server_full: { retryable: true, text: 'The server holds as many connections as it takes.' },
  shutting_down: { retryable: true, text: 'The server is stopping.' },
} as const;

/** A refusal code of the gateway that is not a wire code. */
export type RefusalCode = keyof typeof REFUSAL_CODES;

/** WebSocket close codes the server uses, with their reasons. */
export const CLOSE_CODES = {
  /** Normal closure, e.g. the client asked. */
  normal: { code: 1000, reason: 'normal' },
  /** The server is shutting down or restarting; reconnect (a new epoch follows). */
  goingAway: { code: 1001, reason: 'server shutting down' },
  /** Policy violation: inbound message flood past the rate limit. */
  policy: { code: 1008, reason: 'message rate limit exceeded' },
  /** A frame larger than `limits.maxPayloadBytes`. */
  tooBig: { code: 1009, reason: 'message too big' },
  /** Unexpected server error. */
  internal: { code: 1011, reason: 'internal error' },
  /** The client stopped reading, or read too slowly, for too long: fresh snapshots of what changed did not catch it up. */
  slowConsumer: { code: 4008, reason: 'slow consumer: too far behind' },
  /** The client's token expired during the session. */
  tokenExpired: { code: 4001, reason: 'token expired' },
  /** The client's static token was removed from the token file, which was re-read during the session. */
  tokenRevoked: { code: 4001, reason: 'token revoked' },
  /** No pong to the server's ping within the heartbeat timeout. */
  heartbeatTimeout: { code: 4002, reason: 'heartbeat timeout' },
  /**
   * A replay that cannot be played: the `error` frame before the close says
   * why (`not_recorded`, `recording_off`, `bad_request`). Do not reconnect.
   */
  replayRefused: { code: 4004, reason: 'replay refused' },
  /**
   * A replay that held no subscription and asked for none for
   * `REPLAY_IDLE_MS`: it is over, and its slot goes to another replay.
   */
  replayIdle: { code: 1000, reason: 'replay idle' },
} as const;

/** A close-code name. */
export type CloseName = keyof typeof CLOSE_CODES;

/** A wire error as data: a stable code and a message safe to show a client. */
export interface WireError {
  readonly code: ErrorCode;
  readonly message: string;
  /** The topic concerned, for topic-scoped errors. */
  readonly topic?: string;
  /** For `upstream_rate_limited`: when the upstream budget resets (ms epoch), if known. */
  readonly resetAt?: number;
}

/** A wire error value. */
export function wireError(code: ErrorCode, message: string, topic?: string): WireError {
  return topic === undefined ? { code, message } : { code, message, topic };
}
