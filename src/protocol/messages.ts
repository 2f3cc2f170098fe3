import { z } from 'zod';
import { CHANNELS, GET_MARKETS, MARKETS, RESOURCES, STATES } from './constants.js';
import { ERROR_CODE_LIST } from './errors.js';

/**
 * Protocol v1 messages as zod schemas: the one definition the gateway, the
 * SDK, the demo page and docs/PROTOCOL.md (via the generated JSON Schema)
 * share. See docs/PROTOCOL.md.
 */

/** Request id: echoed in the reply. */
export const RequestId = z.union([z.number().int(), z.string().max(64)]);
/** A request id as clients send it. */
export type RequestId = z.infer<typeof RequestId>;

const channel = z.string().max(16);
const market = z.string().max(16);
/** Codes of one request: as many as the highest topic limit allows (MAX_TOPICS); the connection's own limit is `too_many_topics`. */
const codes = z.array(z.string().max(16)).min(1).max(100_000);

/** `subscribe`: start receiving a snapshot and then patches for each topic. */
export const SubscribeMsg = z
  .object({
    op: z.literal('subscribe'),
    id: RequestId.optional(),
    channel,
    market,
    codes,
    /** Last seq seen per topic, to resume after a reconnect. */
    since: z.record(z.string().max(40), z.number().int().nonnegative()).optional(),
    /** The epoch those seqs belong to (from `welcome`). */
    epoch: z.string().max(64).optional(),
  })
  .strict();

/** `unsubscribe`: stop receiving topics. */
export const UnsubscribeMsg = z.object({ op: z.literal('unsubscribe'), id: RequestId.optional(), channel, market, codes }).strict();

/** `get`: one on-demand upstream lookup, answered by `result` or `error`. */
export const GetMsg = z
  .object({
    op: z.literal('get'),
    id: RequestId.optional(),
    resource: z.string().max(32),
    market,
    code: z.string().max(16).optional(),
    params: z.record(z.string().max(40), z.unknown()).optional(),
  })
  .strict();

/** `resync`: ask for a fresh snapshot of one subscribed topic. */
export const ResyncMsg = z.object({ op: z.literal('resync'), id: RequestId.optional(), topic: z.string().max(40) }).strict();

/** `ping`: answered by `pong` (for browsers, which cannot send WebSocket pings). */
export const PingMsg = z.object({ op: z.literal('ping'), id: RequestId.optional() }).strict();

/** Any client message. */
export const ClientMsg = z.discriminatedUnion('op', [SubscribeMsg, UnsubscribeMsg, GetMsg, ResyncMsg, PingMsg]);
/** Any client message (type). */
export type ClientMsg = z.infer<typeof ClientMsg>;
/** The known client ops. */
export const CLIENT_OPS = ['subscribe', 'unsubscribe', 'get', 'resync', 'ping'] as const;

/** A normalised upstream value. */
export const Scalar = z.union([z.string(), z.number(), z.null()]);
/** A flat row: upstream field names, normalised values. */
export const RowSchema = z.record(z.string(), z.unknown());

/** An RFC 6902 operation, as the server produces them (add, remove, replace). */
export const PatchOp = z.discriminatedUnion('op', [
  z.object({ op: z.literal('add'), path: z.string(), value: z.unknown() }).strict(),
  z.object({ op: z.literal('replace'), path: z.string(), value: z.unknown() }).strict(),
  z.object({ op: z.literal('remove'), path: z.string() }).strict(),
]);
/** An RFC 6902 operation (type). */
export type PatchOp = z.infer<typeof PatchOp>;

const ts = z.number().int().nonnegative();
const crc = z.number().int().nonnegative().max(0xffffffff);

/** `welcome`: first frame of every connection. */
export const WelcomeMsg = z.object({
  type: z.literal('welcome'),
  version: z.string(),
  server: z.string(),
  epoch: z.string(),
  heartbeatMs: z.number().int().positive(),
  limits: z.object({
    maxTopics: z.number().int(),
    maxWildcards: z.number().int(),
    maxMessagesPerSecond: z.number(),
    maxPayloadBytes: z.number().int(),
    getsPerMinute: z.number(),
  }),
  channels: z.array(z.enum(CHANNELS)),
  markets: z.array(z.enum(MARKETS)),
  resources: z.array(z.enum(RESOURCES)),
  ts,
  /** On a replay connection (`/ws/replay`): the recorded day (`YYYYMMDD`), the window (`HHMMSS` KST) and the speed. */
  replay: z.object({ date: z.string(), from: z.string(), to: z.string(), speed: z.union([z.number().int().min(1).max(1000), z.literal('max')]) }).optional(),
});

/** `subscribed`: the topics now subscribed (wildcards as `channel.market.*`). */
export const SubscribedMsg = z.object({
  type: z.literal('subscribed'),
  id: RequestId.optional(),
  topics: z.array(z.string()),
  /**
   * For a subscribe with `since`: per topic named there, `true` when the
   * patches it missed follow (or it missed none), `false` when a fresh
   * snapshot follows instead (another epoch, or the patches are gone).
   */
  recovered: z.record(z.string(), z.boolean()).optional(),
});
/** `unsubscribed`: the topics no longer subscribed. */
export const UnsubscribedMsg = z.object({
  type: z.literal('unsubscribed'),
  id: RequestId.optional(),
  topics: z.array(z.string()),
});

/** `snapshot`: the whole current row of a topic at `seq`. Replaces any local state. */
export const SnapshotMsg = z.object({
  type: z.literal('snapshot'),
  topic: z.string(),
  seq: z.number().int().positive(),
  ts,
  data: RowSchema,
  crc,
});

/** `patch`: RFC 6902 operations taking the row from `seq - 1` to `seq`. */
export const PatchMsg = z.object({
  type: z.literal('patch'),
  topic: z.string(),
  seq: z.number().int().positive(),
  ts,
  ops: z.array(PatchOp).min(1),
  crc,
});

/** `status`: upstream state of a market's channel. */
export const StatusMsg = z.object({
  type: z.literal('status'),
  market: z.enum(MARKETS),
  channel: z.enum(CHANNELS),
  state: z.enum(STATES),
  intervalMs: z.number().int().nonnegative(),
  reason: z.string().optional(),
  ts,
  /** While `closed`: when the next regular session opens, ms epoch (09:00 KST, or 10:00 on a late-open day; pre-market data may come from 08:30 before it). */
  opensAt: ts.optional(),
  /** While `closed`: when the feed's data was last refreshed from the upstream (ms epoch); absent when the server holds none. */
  asOf: ts.optional(),
});

/** `result`: the answer to `get`. */
export const ResultMsg = z.object({
  type: z.literal('result'),
  id: RequestId.optional(),
  resource: z.enum(RESOURCES),
  market: z.enum(GET_MARKETS),
  code: z.string().optional(),
  ts,
  /** Rows of the upstream's list that were unusable and left out (absent when none). */
  dropped: z.number().int().positive().optional(),
  data: z.record(z.string(), z.unknown()),
});

/** `error`: a request failed; the connection stays open. */
export const ErrorMsg = z.object({
  type: z.literal('error'),
  id: RequestId.optional(),
  code: z.enum(ERROR_CODE_LIST),
  message: z.string(),
  retryable: z.boolean(),
  topic: z.string().optional(),
});

/** `pong`: the answer to `ping`; `ts` is the server time in ms. */
export const PongMsg = z.object({ type: z.literal('pong'), id: RequestId.optional(), ts });

/** Any server message. A frame holds one message or an array of them. */
export const ServerMsg = z.discriminatedUnion('type', [
  WelcomeMsg,
  SubscribedMsg,
  UnsubscribedMsg,
  SnapshotMsg,
  PatchMsg,
  StatusMsg,
  ResultMsg,
  ErrorMsg,
  PongMsg,
]);

/** A server frame: one message or a batch. */
export const ServerFrame = z.union([ServerMsg, z.array(ServerMsg).min(1)]);

/** The `WelcomeMsg` message (type). */
export type WelcomeMsg = z.infer<typeof WelcomeMsg>;
/** The `SubscribedMsg` message (type). */
export type SubscribedMsg = z.infer<typeof SubscribedMsg>;
/** The `UnsubscribedMsg` message (type). */
export type UnsubscribedMsg = z.infer<typeof UnsubscribedMsg>;
/** The `SnapshotMsg` message (type). */
export type SnapshotMsg = z.infer<typeof SnapshotMsg>;
/** The `PatchMsg` message (type). */
export type PatchMsg = z.infer<typeof PatchMsg>;
/** The `StatusMsg` message (type). */
export type StatusMsg = z.infer<typeof StatusMsg>;
/** The `ResultMsg` message (type). */
export type ResultMsg = z.infer<typeof ResultMsg>;
/** The `ErrorMsg` message (type). */
export type ErrorMsg = z.infer<typeof ErrorMsg>;
/** The `PongMsg` message (type). */
export type PongMsg = z.infer<typeof PongMsg>;
/** The `ServerMsg` message (type). */
export type ServerMsg = z.infer<typeof ServerMsg>;
/** The `SubscribeMsg` message (type). */
export type SubscribeMsg = z.infer<typeof SubscribeMsg>;
/** The `UnsubscribeMsg` message (type). */
export type UnsubscribeMsg = z.infer<typeof UnsubscribeMsg>;
/** The `GetMsg` message (type). */
export type GetMsg = z.infer<typeof GetMsg>;
/** The `ResyncMsg` message (type). */
export type ResyncMsg = z.infer<typeof ResyncMsg>;
/** The `PingMsg` message (type). */
export type PingMsg = z.infer<typeof PingMsg>;
