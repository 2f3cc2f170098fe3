import type { Server } from 'node:http';
import type { Bus, FeedStatus } from '../bus/bus.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics/metrics.js';
import type { Limits } from '../protocol/constants.js';
import type { StateStore } from '../state/store.js';
import type { Authenticator } from '../access/auth.js';
import type { LookupLimits } from '../access/lookups.js';
import type { KrxCalendar } from '../market/calendar.js';
import type { Sessions } from '../market/session.js';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { DemandSink, SymbolLookup } from './handlers.js';
import type { OnDemand } from '../upstream/cache.js';
import type { Families } from '../lookups/resources.js';
import type { SlowPolicy } from './slow.js';

/**
 * Replays of the recordings, served at the gateway's path + `/replay`: the
 * replay server (src/replay/) provides it. The gateway authenticates and
 * counts the connection; the endpoint checks the query and plays it.
 */
export interface ReplayEndpoint {
  /** Checks a request's query against the recordings: the parsed query, or a refusal (sent as an `error` frame before close 4004). */
  check(
    url: string | undefined,
  ): Promise<
    | { ok: true; query: unknown }
    | { ok: false; refusal: { readonly status: number; readonly code: 'invalid_params' | 'not_recorded'; readonly message: string } }
  >;
  /**
   * Completes the upgrade of a checked request and plays its `query` within
   * `limits`, its subscribes' codes checked against `listed` (the listing
   * `/ws` checks them against) as well as the recording.
   */
  accept(req: IncomingMessage, socket: Duplex, head: Buffer, query: unknown, limits: Limits, listed: SymbolLookup): void;
  /** Closes every replay (1001). */
  close(): void;
}

/**
 * Options of the WebSocket gateway and their defaults.
 * See docs/OPERATIONS.md §Configuration.
 */

/** Options of `Gateway`. */
export interface GatewayOptions {
  /** The HTTP server whose `upgrade` requests on `path` become WebSocket connections. */
  readonly server: Server;
  /** Topic state: snapshots, replay, epoch. */
  readonly store: StateStore;
  /** Source of change batches and feed states. */
  readonly bus: Bus;
  /** Where subscriptions are counted so the poller polls them (Demand). */
  readonly demand: DemandSink;
  /** Listing check of stock codes (SymbolDirectory). */
  readonly symbols: SymbolLookup;
  /** On-demand lookups for `get` (OnDemandCache). */
  readonly onDemand: OnDemand;
  /** Replays of the recordings at `path` + `/replay`; default none (404 there). */
  readonly replay?: ReplayEndpoint;
  /** The KRX calendar (lookups' default dates); default one without operator closures. */
  readonly calendar?: KrxCalendar;
  /** The sessions' hours on `calendar` (the late opens), for the default dates of lookups; default those of `calendar`. */
  readonly sessions?: Sessions;
  /** The market is treated as open at any hour (`MARKET_CLOCK=always`): lookups' "today" is the upstream's current session (see `LookupDates.alwaysOpen`). */
  readonly alwaysOpen?: boolean;
  /** Per-client lookup limits, shared with `/api`; default a rate of `limits.getsPerMinute` per client and no share cap. */
  readonly lookups?: LookupLimits;
  /** Metrics to count into. */
  readonly metrics: Metrics;
  /** API family per market for `get`; default KOSPI v2, KOSDAQ v3 (KONEX follows KOSPI). */
  readonly families?: Families;
  /** Current feed states (Poller.statuses); without it, the last states seen on the bus. */
  readonly statuses?: () => Iterable<FeedStatus>;
  /** Logger; default silent. */
  readonly logger?: Logger;
  /** Access control; default open. */
  readonly auth?: Authenticator;
  /** WebSocket path; default `/ws`. */
  readonly path?: string;
  /** Version in `welcome.server` (`krx-bridge/<version>`); default the package version. */
  readonly version?: string;
  /** Per-connection limits; defaults DEFAULT_LIMITS (tokens may override some). */
  readonly limits?: Partial<Limits>;
  /** WebSocket ping interval, ms; a peer silent for two intervals is dropped. Default 15,000. */
  readonly heartbeatMs?: number;
  /** Open connections per client address; default 100 (more are refused with HTTP 429). */
  readonly maxConnectionsPerIp?: number;
  /** Open connections in all; default 18,000 (more are refused with HTTP 503 `server_full`). */
  readonly maxConnections?: number;
  /** Replays (`/ws/replay`) open at once, counted among the connections too; default 16 (more are refused with HTTP 503 `server_full`). */
  readonly maxReplays?: number;
  /** Replays open at once from one client address; default 4 (more are refused with HTTP 429 `too_many_connections`). */
  readonly maxReplaysPerIp?: number;
  /** Use permessage-deflate when the client offers it; default false (its CPU and memory cost). */
  readonly perMessageDeflate?: boolean;
  /**
   * Write frames straight to the TCP socket under `ws` (its sender idle,
   * one write per batch, the frame header built here), instead of through
   * `ws.send`; default true. Relies on ws 8's internals, which frame.ts
   * checks per connection (it falls back to `ws.send` where they differ);
   * `ws` is pinned to an exact version and test/gateway/frame.test.ts holds
   * the contract. Off: every frame goes through `ws.send`.
   */
  readonly directWrite?: boolean;
  /** Slow-consumer thresholds and frame size (slow.ts); defaults 32 KiB socket queue, close at 16 MiB or 30 s behind, frames of 16 KiB. */
  readonly slow?: Partial<SlowPolicy>;
  /** How often behind connections are re-checked (written to again once drained, or closed), ms; default 100. */
  readonly slowCheckMs?: number;
  /** Close with 1008 past this many times the message rate within one second; default 3. */
  readonly floodFactor?: number;
  /** Wait for clients to close on `close()` (then they are cut), and for a close handshake, ms; default 5,000. */
  readonly closeTimeoutMs?: number;
  /** Take the client address from `X-Forwarded-For` (only behind a proxy that sets it); default false. */
  readonly trustProxy?: boolean;
  /**
   * Wall clock, ms epoch; default Date.now. Only for what is a time of day:
   * the `ts` of `welcome` and `pong`, a token's expiry, lookups' default
   * dates. Elapsed times are measured on `monotonic`.
   */
  readonly now?: () => number;
  /**
   * Monotonic clock, ms from an arbitrary origin; default
   * `performance.now`. Every elapsed-time check of the gateway runs on it:
   * heartbeat liveness, how long a connection has been behind, the message
   * rate and flood limits. A step of the wall clock (NTP, a VM resumed)
   * then neither cuts clients that answer their pings nor keeps dead ones.
   */
  readonly monotonic?: () => number;
}

/** Default values of the gateway's own options. */
export const GATEWAY_DEFAULTS = {
  path: '/ws',
  heartbeatMs: 15_000,
  maxConnectionsPerIp: 100,
  maxConnections: 18_000,
  maxReplays: 16,
  maxReplaysPerIp: 4,
  perMessageDeflate: false,
  directWrite: true,
  slowCheckMs: 100,
  floodFactor: 3,
  closeTimeoutMs: 5_000,
  families: { kospi: 'v2', kosdaq: 'v3' } as Families,
} as const;
