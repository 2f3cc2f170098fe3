import type { ServerResponse } from 'node:http';
import type { z } from 'zod';
import { issuesText } from '../protocol/issues.js';
import { upstreamWireError } from '../lookups/errors.js';
import type { OnDemand } from '../upstream/cache.js';
import type { Logger } from '../log.js';
import { messageWithData, type LookupOptions } from '../upstream/cache.js';
import type { Endpoint } from '../upstream/catalogue.js';
import { matchPath, requestParams, type PathMatch } from '../upstream/paths.js';
import { isIndexCodeOf } from '../lookups/resources.js';
import { tokenTwice } from '../access/params.js';
import { HTTP_STATUS, sendError, sendJsonText } from './respond.js';

/**
 * The REST passthrough: `GET /api/<upstream path>` validates the request
 * against the endpoint catalogue and answers from the on-demand cache
 * (which calls the upstream on a miss). The upstream API key never appears
 * in a response. See docs/OPERATIONS.md §REST passthrough.
 */

/** Prefix of passthrough paths. */
export const API_PREFIX = '/api';

/** Whether a path is a passthrough path (`/api/v2/…` or `/api/v3/…`). */
export function isApiPath(path: string): boolean {
  return path.startsWith('/api/v2/') || path.startsWith('/api/v3/');
}

/** What the passthrough resolves a request to: the endpoint and its validated parameters, or an HTTP error. */
export type ApiRequest =
  { ok: true; endpointId: string; params: Record<string, unknown>; endpoint: Endpoint } | { ok: false; status: number; code: string; message: string };

/**
 * Resolves a passthrough request: the path without `/api` must match a
 * catalogue entry (else 404), and its path and query parameters must pass
 * the entry's schema (else 400 invalid_params). `token` (access control)
 * is not an upstream parameter and is ignored, unless given twice. Pure.
 */
export function resolveApiRequest(pathname: string, query: URLSearchParams): ApiRequest {
  const match = matchPath(pathname.slice(API_PREFIX.length));
  if (match === undefined) return { ok: false, status: 404, code: 'not_found', message: 'no such upstream endpoint' };
  const q = new URLSearchParams(query);
  q.delete('token');
  const twice = tokenTwice(query) ?? givenTwice(match, q);
  if (twice !== undefined) return { ok: false, status: 400, code: 'invalid_params', message: twice };
  const parsed = match.endpoint.params.safeParse(requestParams(match, q));
  if (!parsed.success) return { ok: false, status: 400, code: 'invalid_params', message: paramsText(parsed.error, match.endpoint) };
  return { ok: true, endpointId: match.endpoint.id, params: parsed.data, endpoint: match.endpoint };
}

/**
 * Why a parameter of the endpoint is given twice: in the path and in the
 * query, or twice in the query (where the last would otherwise win, or
 * the query would replace the path's code). Bare flags of `fields` may
 * repeat; a key the endpoint does not take is left to the schema, which
 * counts it without naming it.
 */
function givenTwice(match: PathMatch, q: URLSearchParams): string | undefined {
  const takes: readonly string[] = match.endpoint.query;
  for (const k of new Set(q.keys())) {
    const values = q.getAll(k);
    if (takes.includes('fields') && values.every((v) => v === '')) continue;
    if (Object.hasOwn(match.pathParams, k)) return `${k} is in the path; it cannot be given in the query too`;
    if (values.length > 1 && takes.includes(k)) return `${k} is given more than once`;
  }
  return undefined;
}

/**
 * A zod failure of a request's parameters as a message that repeats nothing
 * the client sent: unknown query keys are counted and the endpoint's own
 * parameters named instead.
 */
function paramsText(error: z.ZodError, e: Endpoint): string {
  const unknown = error.issues.filter((i) => i.code === 'unrecognized_keys');
  if (unknown.length === 0) return issuesText(error);
  const n = unknown.reduce((sum, i) => sum + (i.code === 'unrecognized_keys' ? i.keys.length : 0), 0);
  const known = e.query.length ? `; this endpoint takes ${e.query.join(', ')}` : '; this endpoint takes no query parameters';
  return `${n} unknown query parameter${n === 1 ? '' : 's'}${known}`;
}

/** Listing check of stock codes (SymbolDirectory.has: true for a market whose list is not loaded yet). */
export interface Listing {
  has(market: string, code: string): boolean;
}

const STOCK_MARKETS: ReadonlySet<string> = new Set(['kospi', 'kosdaq', 'konex']);

/**
 * The first code of a resolved request that is not listed, so no upstream
 * call is spent on it: the `{issuecode}` of a stock endpoint must be listed
 * on its market, an index endpoint's must be an industry code of the market,
 * and every `isuCd` of a multi-quote call must be listed. Derivative codes
 * are not checked here (the upstream answers them, and the answer is
 * cached, negative or not). Pure.
 */
export function unlistedCode(req: { endpoint: Endpoint; params: Record<string, unknown> }, listing: Listing): string | undefined {
  const market = req.params.marketcode;
  if (typeof market !== 'string' || !STOCK_MARKETS.has(market)) return undefined;
  const issue = req.params.issuecode;
  if (typeof issue === 'string') {
    if (req.endpoint.code === 'index' && !isIndexCodeOf(market, issue)) return issue;
    if (req.endpoint.code === 'stock' && !listing.has(market, issue)) return issue;
  }
  const many = req.params.isuCd;
  if (Array.isArray(many)) return many.find((c) => typeof c === 'string' && !listing.has(market, c)) as string | undefined;
  return undefined;
}

/** Answers a resolved passthrough request from `onDemand`, mapping upstream errors to HTTP statuses. */
export async function answerApi(
  onDemand: OnDemand,
  req: { endpointId: string; params: Record<string, unknown> },
  res: ServerResponse,
  logger: Logger,
  now: () => number,
  opts: LookupOptions = {},
): Promise<void> {
  try {
    const r = await onDemand.get(req.endpointId, req.params, opts);
    const head = { ts: r.receivedAt, cached: r.cached, ...(r.dropped ? { dropped: r.dropped } : {}) };
    sendJsonText(res, 200, Buffer.concat(messageWithData(head, 'data', r.data)));
  } catch (err) {
    const we = upstreamWireError(err);
    if (we.code === 'internal') logger.error({ err, endpoint: req.endpointId }, 'passthrough failed unexpectedly');
    const headers: Record<string, string> = {};
    if ((we.code === 'upstream_rate_limited' || we.code === 'rate_limited') && we.resetAt !== undefined) {
      headers['Retry-After'] = String(Math.max(1, Math.ceil((we.resetAt - now()) / 1000)));
    }
    sendError(res, HTTP_STATUS[we.code], we.code, we.message, headers);
  }
}
