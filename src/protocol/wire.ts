/**
 * The wire messages of protocol v1 as plain TypeScript types, generated from
 * the zod schemas of ./messages.ts by `npm run docs` (scripts/wire-types.ts):
 * do not edit. The SDK takes its types from here, so its declarations need
 * no zod; test/protocol/wire.test.ts checks each equals its `z.infer`.
 * See docs/PROTOCOL.md.
 */

/** Request id: echoed in the reply. */
export type RequestId = string | number;

/** `subscribe`: start receiving a snapshot and then patches for each topic. */
export type SubscribeMsg = {
  op: "subscribe";
  channel: string;
  market: string;
  codes: string[];
  id?: string | number | undefined;
  since?: Record<string, number> | undefined;
  epoch?: string | undefined;
};

/** `unsubscribe`: stop receiving topics. */
export type UnsubscribeMsg = {
  op: "unsubscribe";
  channel: string;
  market: string;
  codes: string[];
  id?: string | number | undefined;
};

/** `get`: one on-demand upstream lookup, answered by `result` or `error`. */
export type GetMsg = {
  op: "get";
  resource: string;
  market: string;
  id?: string | number | undefined;
  code?: string | undefined;
  params?: Record<string, unknown> | undefined;
};

/** `resync`: ask for a fresh snapshot of one subscribed topic. */
export type ResyncMsg = {
  op: "resync";
  topic: string;
  id?: string | number | undefined;
};

/** `ping`: answered by `pong` (for browsers, which cannot send WebSocket pings). */
export type PingMsg = {
  op: "ping";
  id?: string | number | undefined;
};

/** Any client message. */
export type ClientMsg = SubscribeMsg | UnsubscribeMsg | GetMsg | ResyncMsg | PingMsg;

/** An RFC 6902 operation, as the server produces them (add, remove, replace). */
export type PatchOp = {
  op: "add";
  path: string;
  value: unknown;
} | {
  op: "replace";
  path: string;
  value: unknown;
} | {
  op: "remove";
  path: string;
};

/** `welcome`: first frame of every connection. */
export type WelcomeMsg = {
  type: "welcome";
  version: string;
  server: string;
  epoch: string;
  heartbeatMs: number;
  limits: {
    maxTopics: number;
    maxWildcards: number;
    maxMessagesPerSecond: number;
    maxPayloadBytes: number;
    getsPerMinute: number;
  };
  channels: ("quote" | "ohlc" | "top" | "aht" | "price" | "book" | "index")[];
  markets: ("kospi" | "kosdaq")[];
  resources: ("price" | "index" | "master" | "selectivemaster" | "history" | "intraday" | "lists" | "closeprice" | "investors" | "shortsell" | "foreignhistory" | "traderanking" | "closenav" | "orderbook")[];
  ts: number;
  replay?: {
    date: string;
    from: string;
    to: string;
    speed: number | "max";
  } | undefined;
};

/** `subscribed`: the topics now subscribed (wildcards as `channel.market.*`). */
export type SubscribedMsg = {
  type: "subscribed";
  topics: string[];
  id?: string | number | undefined;
  recovered?: Record<string, boolean> | undefined;
};

/** `unsubscribed`: the topics no longer subscribed. */
export type UnsubscribedMsg = {
  type: "unsubscribed";
  topics: string[];
  id?: string | number | undefined;
};

/** `snapshot`: the whole current row of a topic at `seq`. Replaces any local state. */
export type SnapshotMsg = {
  type: "snapshot";
  topic: string;
  seq: number;
  ts: number;
  data: Record<string, unknown>;
  crc: number;
};

/** `patch`: RFC 6902 operations taking the row from `seq - 1` to `seq`. */
export type PatchMsg = {
  type: "patch";
  topic: string;
  seq: number;
  ts: number;
  ops: PatchOp[];
  crc: number;
};

/** `status`: upstream state of a market's channel. */
export type StatusMsg = {
  type: "status";
  market: "kospi" | "kosdaq";
  channel: "quote" | "ohlc" | "top" | "aht" | "price" | "book" | "index";
  state: "error" | "live" | "stale" | "closed" | "rate_limited" | "degraded" | "idle";
  intervalMs: number;
  ts: number;
  reason?: string | undefined;
  opensAt?: number | undefined;
  asOf?: number | undefined;
};

/** `result`: the answer to `get`. */
export type ResultMsg = {
  type: "result";
  resource: "price" | "index" | "master" | "selectivemaster" | "history" | "intraday" | "lists" | "closeprice" | "investors" | "shortsell" | "foreignhistory" | "traderanking" | "closenav" | "orderbook";
  market: "kospi" | "kosdaq" | "konex";
  ts: number;
  data: Record<string, unknown>;
  id?: string | number | undefined;
  code?: string | undefined;
  dropped?: number | undefined;
};

/** `error`: a request failed; the connection stays open. */
export type ErrorMsg = {
  type: "error";
  code: "rate_limited" | "bad_request" | "unknown_op" | "invalid_channel" | "invalid_market" | "invalid_code" | "invalid_resource" | "invalid_params" | "not_subscribed" | "too_many_topics" | "upstream_rate_limited" | "upstream_unavailable" | "not_provided_now" | "not_found" | "not_recorded" | "recording_off" | "unauthorized" | "internal";
  message: string;
  retryable: boolean;
  id?: string | number | undefined;
  topic?: string | undefined;
};

/** `pong`: the answer to `ping`; `ts` is the server time in ms. */
export type PongMsg = {
  type: "pong";
  ts: number;
  id?: string | number | undefined;
};

/** Any server message. A frame holds one message or an array of them. */
export type ServerMsg = WelcomeMsg | SubscribedMsg | UnsubscribedMsg | SnapshotMsg | PatchMsg | StatusMsg | ResultMsg | ErrorMsg | PongMsg;
