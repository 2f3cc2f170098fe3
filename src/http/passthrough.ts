import type { ServerResponse } from 'node:http';
import { issuesText, upstreamWireError } from '../gateway/errors.js';
import type { OnDemand } from '../gateway/handlers.js';
import type { Logger } from '../log.js';
import { matchPath, requestParams } from '../upstream/paths.js';
import { HTTP_STATUS, sendError, sendJson } from './respond.js';

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
  | { ok: true; endpointId: string; params: Record<string, unknown> }
  | { ok: false; status: number; code: string; message: string };

/**
 * Resolves a passthrough request: the path without `/api` must match a
 * catalogue entry (else 404), and its path and query parameters must pass
 * the entry's schema (else 400 invalid_params). `token` (access control)
 * is not an upstream parameter and is ignored. Pure.
 */
export function resolveApiRequest(pathname: string, query: URLSearchParams): ApiRequest {
  const match = matchPath(pathname.slice(API_PREFIX.length));
  if (match === undefined) return { ok: false, status: 404, code: 'not_found', message: 'no such upstream endpoint' };
  const q = new URLSearchParams(query);
  q.delete('token');
  const parsed = match.endpoint.params.safeParse(requestParams(match, q));
  if (!parsed.success) return { ok: false, status: 400, code: 'invalid_params', message: issuesText(parsed.error) };
  return { ok: true, endpointId: match.endpoint.id, params: parsed.data };
}

/** Answers a resolved passthrough request from `onDemand`, mapping upstream errors to HTTP statuses. */
export async function answerApi(
  onDemand: OnDemand,
  req: { endpointId: string; params: Record<string, unknown> },
  res: ServerResponse,
  logger: Logger,
  now: () => number,
): Promise<void> {
  try {
    const r = await onDemand.get(req.endpointId, req.params);
    sendJson(res, 200, { ts: r.receivedAt, cached: r.cached, data: r.data });
  } catch (err) {
    const we = upstreamWireError(err);
    if (we.code === 'internal') logger.error({ err, endpoint: req.endpointId }, 'passthrough failed unexpectedly');
    const headers: Record<string, string> = {};
    if (we.code === 'upstream_rate_limited' && we.resetAt !== undefined) {
      headers['Retry-After'] = String(Math.max(1, Math.ceil((we.resetAt - now()) / 1000)));
    }
    sendError(res, HTTP_STATUS[we.code], we.code, we.message, headers);
  }
}
