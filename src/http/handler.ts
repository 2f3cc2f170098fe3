import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Authenticator } from '../access/auth.js';
import type { GatewayStats } from '../gateway/gateway.js';
import type { UpgradeRefusal } from '../gateway/upgrade.js';
import type { OnDemand } from '../upstream/cache.js';
import { LookupLimits } from '../access/lookups.js';
import { KeyedRateLimiter } from '../access/limits.js';
import { packageVersion } from '../version.js';
import { clientAddress } from '../access/address.js';
import { silentLogger, type Logger } from '../log.js';
import type { Metrics } from '../metrics/metrics.js';
import { GET_MARKETS } from '../protocol/constants.js';
import type { SymbolInfo } from '../state/symbols.js';
import { placeholderPage } from './page.js';
import { answerApi, isApiPath, resolveApiRequest, unlistedCode } from './passthrough.js';
import { sendError, sendJson, sendText } from './respond.js';
import { serveStatic } from './static.js';
import { readRequest } from './target.js';
import { exportFeed, listRecordings, type RecordingsSource } from './recordings.js';
import { pageHeaders } from './headers.js';
import { CORS_ROUTES, PREFLIGHT_HEADERS, corsHeaders } from './cors.js';
import { queryParams } from '../access/params.js';
import { MAX_PIPELINED, PipelineLimit, type Admission } from './pipelining.js';

/**
 * The HTTP side of the bridge on node:http: the demo page (or a static
 * directory), health and readiness, `/status`, `/metrics`, symbol search
 * and the REST passthrough. Only GET and HEAD; at most `MAX_PIPELINED`
 * responses outstanding per connection. See docs/OPERATIONS.md §HTTP.
 */

/** What the HTTP routes need. */
export interface HttpDeps {
  /** Metrics: rendered at `/metrics`, and HTTP requests are counted into it. */
  readonly metrics: Metrics;
  /** Symbol search for `/symbols` (SymbolDirectory). */
  readonly symbols: { search(query: string, limit?: number, market?: string, offset?: number): SymbolInfo[]; has(market: string, code: string): boolean };
  /** On-demand lookups for `/api/…` (OnDemandCache). */
  readonly onDemand: OnDemand;
  /** Per-client lookup limits, shared with the gateway's `get`; default a rate of 120 a minute per client, no share cap. */
  readonly lookups?: LookupLimits;
  /** Readiness for `/readyz`; default always ready. */
  readonly ready?: () => boolean;
  /** Body of `/status` (feeds, budget, …); gateway counts are merged in. */
  readonly status?: () => Record<string, unknown> | Promise<Record<string, unknown>>;
  /**
   * The gateway: client and subscription counts for `/status`, and what a
   * plain GET of its WebSocket path answers (`probe`: the refusal an
   * upgrade would get, or 426).
   */
  readonly gateway?: { stats(): GatewayStats; probe?(req: IncomingMessage): Promise<UpgradeRefusal>; readonly wsPath?: string };
  /** Access control of `/api/…` (the gateway's); default open. */
  readonly auth?: Authenticator;
  /** Directory of the demo page and its assets; default none (a placeholder page at `/`). */
  readonly staticDir?: string;
  /**
   * `/api` and `/recordings` requests per client per minute; default 60.
   * Counted against the address before the token is checked, then against
   * the token's client instead when it is valid.
   */
  readonly apiPerMinute?: number;
  /** `/status` and `/symbols` requests per client address per minute; default 300. */
  readonly infoPerMinute?: number;
  /** Browser origins that may read `/api` and `/symbols` from other pages (CORS); default none. */
  readonly allowedOrigins?: readonly string[];
  /** Where `/recordings` reads (RECORD=on); default none: 404 `recording_off`. */
  readonly recordings?: RecordingsSource;
  /** Serve the demo's `.map` source maps; default false. */
  readonly sourceMaps?: boolean;
  /** Take the client address from `X-Forwarded-For`; default false. */
  readonly trustProxy?: boolean;
  /** Version shown on the placeholder page; default the package version. */
  readonly version?: string;
  /** Logger; default silent. */
  readonly logger?: Logger;
  /** Clock, ms epoch; default Date.now. */
  readonly now?: () => number;
  /** Clock of the per-address and per-client request rates, ms, never stepped with the wall clock; default performance.now. */
  readonly monotonic?: () => number;
}

/** A request handler for `http.createServer` / `server.on('request')`. */
export type HttpHandler = (req: IncomingMessage, res: ServerResponse) => void;

/** Default requests per client per minute of the passthrough. */
export const DEFAULT_API_PER_MINUTE = 60;
/** Default `/status` and `/symbols` requests per address per minute. */
export const DEFAULT_INFO_PER_MINUTE = 300;

/** Routes that answer from the bridge's own state, each request costing a little work: rate-limited per address. */
const INFO_ROUTES: ReadonlySet<string> = new Set(['status', 'symbols', 'ws']);

interface Ctx {
  readonly deps: HttpDeps;
  readonly logger: Logger;
  readonly now: () => number;
  /** The rates' clock (`HttpDeps.monotonic`). */
  readonly monotonic: () => number;
  /** `/api` and `/recordings` requests per client: counted against the address before the token is checked, then moved to the token's client (docs/OPERATIONS.md §5.1). */
  readonly limiter: KeyedRateLimiter;
  readonly infoLimiter: KeyedRateLimiter;
  readonly pipelining: PipelineLimit;
  /** The `/metrics` render under way, shared by the requests that come while it runs. */
  rendering: Promise<string> | undefined;
  readonly lookups: LookupLimits;
  readonly version: string;
}

type Route = (ctx: Ctx, req: IncomingMessage, res: ServerResponse, url: URL) => void | Promise<void>;

const ROUTES: Readonly<Record<string, [name: string, route: Route]>> = {
  '/healthz': ['healthz', (_c, _q, res) => sendText(res, 200, 'ok\n')],
  '/readyz': ['readyz', (c, _q, res) => ((c.deps.ready?.() ?? true) ? sendText(res, 200, 'ready\n') : sendText(res, 503, 'not ready\n'))],
  '/status': ['status', statusRoute],
  '/metrics': ['metrics', metricsRoute],
  '/symbols': ['symbols', symbolsRoute],
};

/** Creates the request handler of every HTTP route. */
export function createHttpHandler(deps: HttpDeps): HttpHandler {
  const ctx: Ctx = {
    deps,
    logger: deps.logger ?? silentLogger(),
    now: deps.now ?? Date.now,
    monotonic: deps.monotonic ?? (() => performance.now()),
    limiter: new KeyedRateLimiter(deps.apiPerMinute ?? DEFAULT_API_PER_MINUTE),
    infoLimiter: new KeyedRateLimiter(deps.infoPerMinute ?? DEFAULT_INFO_PER_MINUTE),
    pipelining: new PipelineLimit(),
    rendering: undefined,
    lookups: deps.lookups ?? new LookupLimits({ perMinute: 120, clientShare: 1, shareCap: () => null, now: deps.now ?? Date.now }),
    version: deps.version ?? packageVersion(),
  };
  return (req, res) => {
    // The one place a request can fail: nothing a client sends may throw out of this listener.
    try {
      const admission = ctx.pipelining.admit(req, res);
      // Behind a refusal on its connection: no work at all, and no answer (the connection closes after the refusal).
      if (admission !== 'drop') handle(ctx, req, res, admission);
    } catch (err) {
      failed(ctx, res, err, req.url);
    }
  };
}

function handle(ctx: Ctx, req: IncomingMessage, res: ServerResponse, admission: Admission): void {
  // The checks the WebSocket upgrade makes too: a Host header on HTTP/1.1 (RFC 9112 §3.2), a readable target.
  const read = readRequest(req);
  if (!read.ok) {
    res.once('finish', () => ctx.deps.metrics.httpRequests.inc({ route: 'invalid', status: String(res.statusCode) }));
    if (admission === 'refuse') return refusePipelined(res);
    return sendError(res, 400, 'bad_request', read.message);
  }
  const url = read.url;
  const [name, route] =
    ROUTES[url.pathname] ??
    (isWsPath(url.pathname, ctx.deps.gateway?.wsPath ?? '/ws') && ctx.deps.gateway?.probe !== undefined ? ['ws', wsRoute] : undefined) ??
    (isApiPath(url.pathname)
      ? ['api', apiRoute]
      : url.pathname === '/recordings' || url.pathname.startsWith('/recordings/')
        ? ['recordings', recordingsRoute]
        : ['page', pageRoute]);
  res.once('finish', () => ctx.deps.metrics.httpRequests.inc({ route: name, status: String(res.statusCode) }));
  if (admission === 'refuse') return refusePipelined(res);
  const cors = CORS_ROUTES.has(name)
    ? corsHeaders(typeof req.headers.origin === 'string' ? req.headers.origin : undefined, ctx.deps.allowedOrigins)
    : undefined;
  if (cors) for (const [k, v] of Object.entries(cors)) res.setHeader(k, v);
  if (req.method === 'OPTIONS' && cors) {
    res.writeHead(204, { ...PREFLIGHT_HEADERS, 'Content-Length': '0' });
    return void res.end();
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    return sendError(res, 405, 'method_not_allowed', 'only GET and HEAD are served', { Allow: 'GET, HEAD' });
  }
  if (INFO_ROUTES.has(name) && !ctx.infoLimiter.take(clientAddress(req, ctx.deps.trustProxy), ctx.monotonic())) {
    const per = ctx.deps.infoPerMinute ?? DEFAULT_INFO_PER_MINUTE;
    return sendError(res, 429, 'rate_limited', `at most ${per} requests per minute to /status, /symbols and a plain GET of /ws`, { 'Retry-After': '1' });
  }
  Promise.resolve()
    .then(() => route(ctx, req, res, url))
    .catch((err: unknown) => failed(ctx, res, err, url.pathname));
}

/** Answers the first request past `MAX_PIPELINED` outstanding on its connection, and closes the connection after it. */
function refusePipelined(res: ServerResponse): void {
  sendError(res, 429, 'rate_limited', `at most ${MAX_PIPELINED} requests unanswered per connection`, { 'Retry-After': '1', Connection: 'close' });
}

function failed(ctx: Ctx, res: ServerResponse, err: unknown, path: string | undefined): void {
  ctx.logger.error({ err, path: path?.slice(0, 200) }, 'http route failed');
  if (!res.headersSent) sendError(res, 500, 'internal', 'internal error');
  else res.destroy();
}

/** Whether a path is the gateway's WebSocket path or its replay's. */
function isWsPath(path: string, wsPath: string): boolean {
  return path === wsPath || path === `${wsPath}/replay`;
}

/**
 * A plain GET of the WebSocket path (or its replay's): what an upgrade with the same query
 * and headers would get now, as the coded refusal it would get or 426
 * `upgrade_required`. The SDK asks it after a socket that failed to open,
 * since a browser's WebSocket hides a refused upgrade's status.
 */
async function wsRoute(ctx: Ctx, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const r = await ctx.deps.gateway!.probe!(req);
  sendError(res, r.status, r.code, r.message, r.headers);
}

async function statusRoute(c: Ctx, _req: IncomingMessage, res: ServerResponse): Promise<void> {
  const base = (await c.deps.status?.()) ?? {};
  const g = c.deps.gateway?.stats();
  const counts = g ? { clients: g.clients, topics: g.topics, behind: g.behind, subscribers: g.feeds } : {};
  sendJson(res, 200, { ...base, ...counts });
}

async function metricsRoute(c: Ctx, _req: IncomingMessage, res: ServerResponse): Promise<void> {
  sendText(res, 200, await renderMetrics(c), c.deps.metrics.registry.contentType);
}

/**
 * The registry's text: one render shared by the requests that come while
 * it runs (pipelined on a connection, or a burst). Nothing is kept after
 * it: a later request (a scraper's next scrape) is rendered afresh.
 */
function renderMetrics(c: Ctx): Promise<string> {
  c.rendering ??= c.deps.metrics.registry.metrics().finally(() => {
    c.rendering = undefined;
  });
  return c.rendering;
}

/** The parameters `/symbols` takes. */
const SYMBOLS_PARAMS = ['q', 'market', 'limit', 'offset'] as const;

function symbolsRoute(c: Ctx, _req: IncomingMessage, res: ServerResponse, url: URL): void {
  const params = queryParams(url.searchParams, SYMBOLS_PARAMS);
  if (!params.ok) return sendError(res, 400, 'invalid_params', params.message);
  const p = params.params;
  const market = p.market || undefined;
  if (market !== undefined && !(GET_MARKETS as readonly string[]).includes(market)) {
    return sendError(res, 400, 'invalid_market', `market must be one of ${GET_MARKETS.join(', ')}`);
  }
  const rawLimit = p.limit;
  const limit = rawLimit === undefined || rawLimit === '' ? 20 : Number(rawLimit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
    return sendError(res, 400, 'invalid_params', 'limit must be an integer from 1 to 100');
  }
  const rawOffset = p.offset;
  const offset = rawOffset === undefined || rawOffset === '' ? 0 : Number(rawOffset);
  if (!Number.isInteger(offset) || offset < 0 || offset > 100_000) {
    return sendError(res, 400, 'invalid_params', 'offset must be an integer from 0 to 100000');
  }
  // No query: the market's symbols in list order (browse with limit and offset).
  const q = (p.q ?? '').slice(0, 64);
  sendJson(res, 200, { symbols: c.deps.symbols.search(q, limit, market, offset) });
}

/**
 * Admits a request of `/api` or `/recordings`: counted against its address
 * before its token is checked (a guess is counted like any request), then,
 * when the token is valid, given back to the address and counted against
 * the token's client instead. The key it counted against, or undefined when
 * it was refused (401, 403 or 429, answered here).
 */
async function admitClient(c: Ctx, req: IncomingMessage, res: ServerResponse): Promise<string | undefined> {
  const address = clientAddress(req, c.deps.trustProxy);
  if (!c.limiter.take(address, c.monotonic())) return void rateLimited(c, res);
  if (c.deps.auth === undefined) return address;
  const a = await c.deps.auth.authenticate(req);
  if (!a.ok) return void sendError(res, a.status, a.code, a.message);
  if (a.clientId === undefined) return address;
  c.limiter.giveBack(address, c.monotonic());
  if (!c.limiter.take(a.clientId, c.monotonic())) return void rateLimited(c, res);
  return a.clientId;
}

/** The 429 of a client past `apiPerMinute`. */
function rateLimited(c: Ctx, res: ServerResponse): void {
  sendError(res, 429, 'rate_limited', `at most ${c.limiter.perMinute} requests per minute`, { 'Retry-After': '1' });
}

async function apiRoute(c: Ctx, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
  const key = await admitClient(c, req, res);
  if (key === undefined) return;
  const r = resolveApiRequest(url.pathname, url.searchParams);
  if (!r.ok) return sendError(res, r.status, r.code, r.message);
  const unlisted = unlistedCode(r, c.deps.symbols);
  if (unlisted !== undefined) return sendError(res, 400, 'invalid_code', `not listed on ${String(r.params.marketcode)}: ${unlisted.slice(0, 16)}`);
  // One lookup bucket per client, shared with its WebSocket `get`s.
  if (!c.lookups.admit(key)) {
    return sendError(res, 429, 'rate_limited', `at most ${c.lookups.perMinute} lookups per minute per client`, { 'Retry-After': '1' });
  }
  await answerApi(c.deps.onDemand, r, res, c.logger, c.now, { spend: c.lookups.spender(key) });
}

/** `/recordings` and its exports: behind the token like `/api`, and counted in its rate (before the token is checked, like `/api`). */
async function recordingsRoute(c: Ctx, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
  const src = c.deps.recordings;
  if (src === undefined) return sendError(res, 404, 'recording_off', 'this server does not record (RECORD=off): no recordings, no replay');
  if ((await admitClient(c, req, res)) === undefined) return;
  if (url.pathname === '/recordings') return listRecordings(src, url.searchParams, res);
  return exportFeed(src, url.pathname, url.searchParams, res);
}

async function pageRoute(c: Ctx, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
  const dir = c.deps.staticDir;
  if (dir !== undefined && (await serveStatic(dir, url.pathname, req, res, { sourceMaps: c.deps.sourceMaps ?? false }))) return;
  if (url.pathname === '/' || url.pathname === '/index.html') {
    return sendText(res, 200, placeholderPage(c.version), 'text/html; charset=utf-8', pageHeaders('placeholder'));
  }
  sendError(res, 404, 'not_found', 'not found');
}
