import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Authenticator } from '../gateway/auth.js';
import type { GatewayStats } from '../gateway/gateway.js';
import type { OnDemand } from '../gateway/handlers.js';
import { KeyedRateLimiter } from '../gateway/limits.js';
import { packageVersion } from '../gateway/options.js';
import { clientAddress } from '../gateway/upgrade.js';
import { silentLogger, type Logger } from '../log.js';
import type { Metrics } from '../metrics/metrics.js';
import { GET_MARKETS } from '../protocol/constants.js';
import type { SymbolInfo } from '../state/symbols.js';
import { placeholderPage } from './page.js';
import { answerApi, isApiPath, resolveApiRequest } from './passthrough.js';
import { sendError, sendJson, sendText } from './respond.js';
import { serveStatic } from './static.js';

/**
 * The HTTP side of the bridge on node:http: the demo page (or a static
 * directory), health and readiness, `/status`, `/metrics`, symbol search
 * and the REST passthrough. Only GET and HEAD. See docs/OPERATIONS.md §HTTP.
 */

/** What the HTTP routes need. */
export interface HttpDeps {
  /** Metrics: rendered at `/metrics`, and HTTP requests are counted into it. */
  readonly metrics: Metrics;
  /** Symbol search for `/symbols` (SymbolDirectory). */
  readonly symbols: { search(query: string, limit?: number, market?: string): SymbolInfo[] };
  /** On-demand lookups for `/api/…` (OnDemandCache). */
  readonly onDemand: OnDemand;
  /** Readiness for `/readyz`; default always ready. */
  readonly ready?: () => boolean;
  /** Body of `/status` (feeds, budget, …); gateway counts are merged in. */
  readonly status?: () => Record<string, unknown> | Promise<Record<string, unknown>>;
  /** The gateway, for client and subscription counts in `/status`. */
  readonly gateway?: { stats(): GatewayStats };
  /** Access control of `/api/…` (the gateway's); default open. */
  readonly auth?: Authenticator;
  /** Directory of the demo page and its assets; default none (a placeholder page at `/`). */
  readonly staticDir?: string;
  /** Passthrough requests per client (token or address) per minute; default 60. */
  readonly apiPerMinute?: number;
  /** Take the client address from `X-Forwarded-For`; default false. */
  readonly trustProxy?: boolean;
  /** Version shown on the placeholder page; default the package version. */
  readonly version?: string;
  /** Logger; default silent. */
  readonly logger?: Logger;
  /** Clock, ms epoch; default Date.now. */
  readonly now?: () => number;
}

/** A request handler for `http.createServer` / `server.on('request')`. */
export type HttpHandler = (req: IncomingMessage, res: ServerResponse) => void;

/** Default requests per client per minute of the passthrough. */
export const DEFAULT_API_PER_MINUTE = 60;

interface Ctx {
  readonly deps: HttpDeps;
  readonly logger: Logger;
  readonly now: () => number;
  readonly limiter: KeyedRateLimiter;
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
    limiter: new KeyedRateLimiter(deps.apiPerMinute ?? DEFAULT_API_PER_MINUTE),
    version: deps.version ?? packageVersion(),
  };
  return (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const [name, route] = ROUTES[url.pathname] ?? (isApiPath(url.pathname) ? ['api', apiRoute] : ['page', pageRoute]);
    res.once('finish', () => deps.metrics.httpRequests.inc({ route: name, status: String(res.statusCode) }));
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return sendError(res, 405, 'method_not_allowed', 'only GET and HEAD are served', { Allow: 'GET, HEAD' });
    }
    Promise.resolve()
      .then(() => route(ctx, req, res, url))
      .catch((err: unknown) => {
        ctx.logger.error({ err, path: url.pathname }, 'http route failed');
        if (!res.headersSent) sendError(res, 500, 'internal', 'internal error');
        else res.destroy();
      });
  };
}

async function statusRoute(c: Ctx, _req: IncomingMessage, res: ServerResponse): Promise<void> {
  const base = (await c.deps.status?.()) ?? {};
  const g = c.deps.gateway?.stats();
  const counts = g ? { clients: g.clients, topics: g.topics, behind: g.behind, subscribers: g.feeds } : {};
  sendJson(res, 200, { ...base, ...counts });
}

async function metricsRoute(c: Ctx, _req: IncomingMessage, res: ServerResponse): Promise<void> {
  const reg = c.deps.metrics.registry;
  sendText(res, 200, await reg.metrics(), reg.contentType);
}

function symbolsRoute(c: Ctx, _req: IncomingMessage, res: ServerResponse, url: URL): void {
  const market = url.searchParams.get('market') || undefined;
  if (market !== undefined && !(GET_MARKETS as readonly string[]).includes(market)) {
    return sendError(res, 400, 'invalid_market', `market must be one of ${GET_MARKETS.join(', ')}`);
  }
  const rawLimit = url.searchParams.get('limit');
  const limit = rawLimit === null || rawLimit === '' ? 20 : Number(rawLimit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
    return sendError(res, 400, 'invalid_params', 'limit must be an integer from 1 to 100');
  }
  const q = (url.searchParams.get('q') ?? '').slice(0, 64);
  sendJson(res, 200, { symbols: c.deps.symbols.search(q, limit, market) });
}

async function apiRoute(c: Ctx, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
  let key = clientAddress(req, c.deps.trustProxy);
  if (c.deps.auth !== undefined) {
    const a = await c.deps.auth.authenticate(req);
    if (!a.ok) return sendError(res, a.status, a.code, a.message);
    if (a.clientId !== undefined) key = a.clientId;
  }
  if (!c.limiter.take(key, c.now())) {
    return sendError(res, 429, 'rate_limited', `at most ${c.deps.apiPerMinute ?? DEFAULT_API_PER_MINUTE} requests per minute`, {
      'Retry-After': '1',
    });
  }
  const r = resolveApiRequest(url.pathname, url.searchParams);
  if (!r.ok) return sendError(res, r.status, r.code, r.message);
  await answerApi(c.deps.onDemand, r, res, c.logger, c.now);
}

async function pageRoute(c: Ctx, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
  const dir = c.deps.staticDir;
  if (dir !== undefined && (await serveStatic(dir, url.pathname, req, res))) return;
  if (url.pathname === '/' || url.pathname === '/index.html') {
    return sendText(res, 200, placeholderPage(c.version), 'text/html; charset=utf-8');
  }
  sendError(res, 404, 'not_found', 'not found');
}
