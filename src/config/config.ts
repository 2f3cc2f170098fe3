import { parseArgs } from 'node:util';
import { z } from 'zod';
import { operatorHolidays } from '../market/calendar.js';

/**
 * Configuration from environment variables, with CLI flags mirroring them
 * (`PORT` = `--port`, `UPSTREAM_API_KEY` = `--upstream-api-key`). Validated
 * by zod; a bad setting stops start-up with one line naming it.
 * Every setting is listed in docs/CONFIGURATION.md (generated).
 */

const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
const bool = z.enum(['true', 'false', '1', '0', 'yes', 'no']).transform((v) => v === 'true' || v === '1' || v === 'yes');
const csv = z.string().transform((v) =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
);
const family = z.enum(['v2', 'v3']);

/** The settings: name, schema (with default), and what it does. */
export const SETTINGS = {
  PORT: { schema: int(0, 65535).default(8080), text: 'HTTP and WebSocket port.' },
  HOST: { schema: z.string().min(1).default('0.0.0.0'), text: 'Interface to listen on.' },
  UPSTREAM_URL: {
    schema: z.string().url().optional(),
    text: 'Base URL of the market-data API. Unset: the built-in simulator starts on a loopback port.',
  },
  UPSTREAM_API_KEY: { schema: z.string().min(1).optional(), text: 'API key for the upstream (sent as the `apikey` header; never logged).' },
  UPSTREAM_TIMEOUT_MS: { schema: int(100, 120_000).default(5000), text: 'Per-request upstream timeout, ms.' },
  UPSTREAM_CONNECTIONS: { schema: int(1, 256).default(8), text: 'Keep-alive connections to the upstream.' },
  UPSTREAM_RETRIES: { schema: int(0, 10).default(2), text: 'Retries of network errors and 5xx (never 4xx or 429).' },
  KOSPI_FAMILY: { schema: family.default('v2'), text: 'API family (`v2` or `v3` paths) for KOSPI.' },
  KOSDAQ_FAMILY: { schema: family.default('v3'), text: 'API family (`v2` or `v3` paths) for KOSDAQ.' },
  MARKET_HOLIDAYS: {
    schema: z.string().optional(),
    text: 'Extra days the market is closed (`YYYYMMDD`, comma-separated), for closures announced at short notice; `@file` reads them from a file, one or more per line.',
  },
  MARKET_EXAM_DAYS: {
    schema: z.string().optional(),
    text: 'College entrance exam days (`YYYYMMDD`, comma-separated, or `@file`) beyond the ones built in (2023–2026): the market opens and closes an hour late.',
  },
  MARKET_CLOCK: {
    schema: z.enum(['kst', 'always']).optional(),
    text: '`kst`: poll only during KRX sessions; `always`: treat the market as open. Default `kst` with an upstream, `always` with the built-in simulator (`kst` when `SIM_CLOCK=kst`).',
  },
  POLL_BASE_MS: { schema: int(200, 60_000).default(1000), text: 'Fastest poll interval per feed, ms (the upstream refreshes once a second).' },
  IDLE_GRACE_MS: { schema: int(0, 600_000).default(5000), text: 'How long a feed keeps polling after its last subscriber leaves, ms.' },
  ROUND_HOLD_MS: {
    schema: int(0, 30_000).default(50),
    text: 'Longest the changes of a feed wait for the other feeds polled at the same instant, so that a client of several feeds gets them in one write, ms (at most half of `POLL_BASE_MS`, else the start is refused); `0`: each feed’s changes go out as they come. In cluster mode the leader waits the same way, and writes the round to Redis in one script that publishes its feeds together.',
  },
  BUDGET_RESERVE: {
    schema: z.coerce.number().min(0).max(0.9).default(0.1),
    text: 'Share of the daily budget kept for on-demand lookups (for the whole cluster in cluster mode).',
  },
  DATA_DIR: {
    schema: z.string().min(1).default('./data'),
    text: 'Directory of the bridge’s own files: the last state of every topic and the last symbol lists (`state/`), so a restart or a crash starts from them, and the recordings. One bridge per directory: while `STATE` or `RECORD` is on, a bridge holds `krx-bridge.pid` there, and another one started on it refuses to start.',
  },
  STATE: {
    schema: z.enum(['on', 'off']).default('on'),
    text: '`off`: keep no state files (a restart starts empty). In cluster mode Redis holds the shared state; the poller lease holder also writes its files.',
  },
  RECORD: {
    schema: z.enum(['on', 'off']).default('on'),
    text: 'Record every change of every polled feed under `DATA_DIR/recordings/`, for replay (`/ws/replay`) and export (`/recordings`); `off`: no recording, and `/ws/replay` and `/recordings` answer 404 `recording_off`.',
  },
  RECORD_DAYS: { schema: int(1, 3650).default(7), text: 'Days of recordings kept (today included); older days are deleted.' },
  RING_SIZE: { schema: int(1, 10_000).default(32), text: 'Patches kept per topic for resume.' },
  LOG_LEVEL: {
    schema: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    text: 'Log level.',
  },
  LOG_FORMAT: {
    schema: z.enum(['auto', 'json', 'pretty']).default('auto'),
    text: '`json`: one JSON object a line; `pretty`: readable lines; `auto`: pretty on a terminal, JSON when piped.',
  },
  HEARTBEAT_MS: { schema: int(1000, 600_000).default(15_000), text: 'WebSocket ping interval; a peer silent for two intervals is dropped.' },
  MAX_TOPICS: { schema: int(1, 100_000).default(1000), text: 'Explicit topics per connection.' },
  MAX_WILDCARDS: { schema: int(0, 64).default(8), text: 'Whole-market subscriptions per connection.' },
  MAX_MESSAGES_PER_SECOND: { schema: int(1, 10_000).default(50), text: 'Client messages per second per connection (burst 2×).' },
  MAX_PAYLOAD_BYTES: { schema: int(1024, 16 * 1024 * 1024).default(262_144), text: 'Largest client frame, bytes.' },
  GETS_PER_MINUTE: {
    schema: int(1, 100_000).default(120),
    text: 'On-demand lookups per minute per client (token, else address): its `get` frames on every connection and its `/api` requests together.',
  },
  LOOKUP_CLIENT_SHARE: {
    schema: z.coerce.number().gt(0).max(1).default(0.2),
    text: 'Part of the day’s on-demand share (`BUDGET_RESERVE`) the upstream calls of one client’s lookups may spend (cache hits are free); 1: no per-client cap.',
  },
  API_REQUESTS_PER_MINUTE: { schema: int(1, 100_000).default(60), text: '`/api` passthrough requests per minute per client.' },
  MAX_CONNECTIONS_PER_IP: { schema: int(1, 1_000_000).default(100), text: 'Open connections per remote address.' },
  MAX_CONNECTIONS: {
    schema: int(1, 10_000_000).default(18_000),
    text: 'Open WebSocket connections in all (every address together); more are refused with HTTP 503. Keep it below the process’s open-file limit.',
  },
  MAX_REPLAYS: {
    schema: int(1, 100_000).default(16),
    text: 'Replays (`/ws/replay`) open at once, every address together (each is also one of `MAX_CONNECTIONS`): a replay holds the recorded state of its day at its own clock, so their number bounds that memory; more are refused with HTTP 503 `server_full`.',
  },
  MAX_REPLAYS_PER_IP: {
    schema: int(1, 100_000).default(4),
    text: 'Replays open at once from one remote address, so one client cannot hold every one of `MAX_REPLAYS`; more are refused with HTTP 429 `too_many_connections`.',
  },
  NAMES_PER_DAY: {
    schema: int(0, 1_000_000).default(2000),
    text: 'Master lookups a budget day that fill in English names for the symbol search (subscribed codes first; through the on-demand share and its cache); 0: none.',
  },
  HTTP_HEADERS_TIMEOUT_MS: {
    schema: int(500, 300_000).default(10_000),
    text: 'Time a client has to send a whole request head (request line and headers), ms; then HTTP 408 and the socket is closed (slow-header floods).',
  },
  INFO_REQUESTS_PER_MINUTE: {
    schema: int(1, 100_000).default(300),
    text: '`/status`, `/symbols` and plain GETs of `/ws` (what an upgrade would get) per minute per remote address.',
  },
  SOURCE_MAPS: { schema: bool.default(false), text: 'Serve the demo page’s `.map` source maps (for debugging it; they show its whole source).' },
  SLOW_CONFLATE_BYTES: {
    schema: int(1024, 1 << 30).default(32 << 10),
    text: 'Bytes waiting in a client’s socket beyond its kernel buffer at which it is behind: nothing more is written to it, and what changed meanwhile is sent as fresh snapshots once it reads again (conflation).',
  },
  SLOW_CLOSE_BYTES: {
    schema: int(1024, 1 << 30).default(16 << 20),
    text: 'Bytes a connection may hold (waiting in its socket, plus updates it was owed while behind): a write that would pass it closes the client (4008) instead.',
  },
  SLOW_REPLY_BYTES: {
    schema: int(1024, 1 << 30).default(4 << 20),
    text: 'Buffered bytes above which a connection’s `get` replies are not written (it gets `rate_limited` for them) and new `get`s are refused until it reads.',
  },
  PERMESSAGE_DEFLATE: { schema: bool.default(false), text: 'Offer permessage-deflate compression.' },
  WS_DIRECT_WRITE: {
    schema: bool.default(true),
    text: 'Write frames straight to the socket under ws (checked against its internals per connection); false: every frame through ws.send.',
  },
  AUTH_TOKENS: { schema: csv.optional(), text: 'Comma-separated static client tokens. Unset (with no other auth): open access.' },
  AUTH_TOKENS_FILE: { schema: z.string().min(1).optional(), text: 'File of client tokens, one per line, optionally followed by JSON limits.' },
  AUTH_JWT_SECRET: { schema: z.string().min(16).optional(), text: 'HMAC secret for HS256 client JWTs (at least 16 characters).' },
  ALLOWED_ORIGINS: { schema: csv.optional(), text: 'Comma-separated browser origins allowed to connect. Unset: any origin.' },
  TRUST_PROXY: {
    schema: bool.default(false),
    text: 'Take the client address from the last `X-Forwarded-For` entry, the one the proxy in front wrote (per-address limits behind a proxy that overwrites that header or appends to it).',
  },
  REDIS_URL: {
    schema: z.string().url().optional(),
    text: 'Redis URL (e.g. `redis://127.0.0.1:6379`); set it to run several bridge processes as one cluster. Unset: one process, no Redis.',
  },
  REDIS_PREFIX: {
    schema: z
      .string()
      .regex(/^[A-Za-z0-9:_.{}-]{1,64}$/, 'letters, digits and :_.{}- only, at most 64')
      .default('krx:'),
    text: 'Prefix of every Redis key and channel of the cluster (clusters sharing one Redis need different prefixes).',
  },
  LEASE_MS: {
    schema: int(300, 600_000).default(3000),
    text: 'Cluster poller lease period, ms: renewed every third; a new poller takes over within two periods of the old one’s loss.',
  },
  REDIS_STREAM_MAXLEN: {
    schema: int(100, 10_000_000).default(10_000),
    text: 'Changes kept per feed in Redis (approximately), for resume on another process and for catching up after a gap.',
  },
  SIM_CLOCK: { schema: z.enum(['open', 'kst', 'fast']).default('open'), text: 'Clock of the built-in simulator.' },
  SIM_SEED: { schema: int(0, 2 ** 31 - 1).default(20261120), text: 'Seed of the built-in simulator’s market.' },
  SIM_DAILY_LIMIT: {
    schema: int(1, 1_000_000_000).default(1_000_000),
    text: 'Daily call limit of the built-in simulator (higher than the real example of 50,000 so the demo runs at full rate at any hour).',
  },
} as const;

type Settings = typeof SETTINGS;
/** A setting's name. */
export type SettingName = keyof Settings;

/** The validated configuration. */
export type Config = { [K in SettingName]: z.output<Settings[K]['schema']> };

/** A configuration error naming the setting. */
export class ConfigError extends Error {
  /** Stable code of configuration errors. */
  readonly code = 'invalid_config';
  /** @param setting the offending setting's name */
  constructor(
    readonly setting: string,
    message: string,
  ) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** The CLI flag of a setting: `UPSTREAM_API_KEY` -> `upstream-api-key`. */
export function flagOf(name: string): string {
  return name.toLowerCase().replace(/_/g, '-');
}

/**
 * Reads and validates the configuration. CLI flags override environment
 * variables. Throws ConfigError for the first bad setting (never echoing
 * secret values).
 */
export function loadConfig(env: Record<string, string | undefined> = process.env, argv: string[] = process.argv.slice(2)): Config {
  const names = Object.keys(SETTINGS) as SettingName[];
  const options = Object.fromEntries(names.map((n) => [flagOf(n), { type: 'string' as const }]));
  let flags: Record<string, string | boolean | undefined>;
  try {
    flags = parseArgs({ args: argv, options, strict: true, allowPositionals: false }).values as Record<string, string | undefined>;
  } catch (err) {
    const m = /'(--[\w-]+)'/.exec(String((err as Error).message));
    throw new ConfigError(m?.[1] ?? 'argv', `unknown or malformed option ${m?.[1] ?? ''}`.trim());
  }
  const out: Record<string, unknown> = {};
  for (const n of names) {
    const raw = flags[flagOf(n)] ?? env[n];
    const value = raw === '' ? undefined : raw;
    const r = (SETTINGS[n].schema as z.ZodType).safeParse(value);
    if (!r.success) {
      const secret = /KEY|SECRET|TOKENS$|REDIS_URL/.test(n);
      const shown = value === undefined || secret ? '' : ` (got ${JSON.stringify(String(value).slice(0, 60))})`;
      throw new ConfigError(n, `invalid setting ${n}: ${r.error.issues[0]?.message ?? 'invalid'}${shown}`);
    }
    out[n] = r.data;
  }
  const c = out as Config;
  if (c.UPSTREAM_URL && !c.UPSTREAM_API_KEY) throw new ConfigError('UPSTREAM_API_KEY', 'invalid setting UPSTREAM_API_KEY: required when UPSTREAM_URL is set');
  for (const name of ['MARKET_HOLIDAYS', 'MARKET_EXAM_DAYS'] as const) {
    try {
      operatorHolidays(c[name]);
    } catch (err) {
      throw new ConfigError(name, `invalid setting ${name}: ${(err as Error).message}`);
    }
  }
  if (c.ROUND_HOLD_MS > c.POLL_BASE_MS / 2) {
    throw new ConfigError('ROUND_HOLD_MS', 'invalid setting ROUND_HOLD_MS: must be <= half of POLL_BASE_MS');
  }
  if (c.SLOW_REPLY_BYTES > c.SLOW_CLOSE_BYTES) {
    throw new ConfigError('SLOW_REPLY_BYTES', 'invalid setting SLOW_REPLY_BYTES: must be <= SLOW_CLOSE_BYTES');
  }
  if (c.SLOW_CONFLATE_BYTES > c.SLOW_CLOSE_BYTES) {
    throw new ConfigError('SLOW_CONFLATE_BYTES', 'invalid setting SLOW_CONFLATE_BYTES: must be <= SLOW_CLOSE_BYTES');
  }
  return c;
}

/** The configuration with every default (for tests and embedding), overridden by `over`. */
export function defaultConfig(over: Partial<Config> = {}): Config {
  return { ...loadConfig({}, []), ...over };
}
