import { originAllowed } from '../access/auth.js';

/**
 * Cross-origin reads of `/api`, `/symbols` and a plain GET of `/ws` (what
 * an upgrade would get, which the SDK asks after a socket failed to open)
 * by the browser origins listed in `ALLOWED_ORIGINS` (a page served
 * elsewhere that uses the bridge): the answer names the origin back; a
 * preflight (`OPTIONS`, for a request with an `Authorization` header) is
 * answered 204. Without `ALLOWED_ORIGINS` nothing is added: only pages of
 * the bridge's own origin read these. Pure.
 */

/** Routes other origins may read. */
export const CORS_ROUTES: ReadonlySet<string> = new Set(['api', 'symbols', 'ws']);

/** The CORS headers of an answer to `origin`, or undefined when it gets none. */
export function corsHeaders(origin: string | undefined, allowed: readonly string[] | undefined): Record<string, string> | undefined {
  if (origin === undefined || allowed === undefined || allowed.length === 0) return undefined;
  if (!originAllowed(origin, allowed)) return undefined;
  return { 'Access-Control-Allow-Origin': origin, Vary: 'Origin' };
}

/** The headers of a preflight answer (204). */
export const PREFLIGHT_HEADERS: Readonly<Record<string, string>> = {
  'Access-Control-Allow-Methods': 'GET, HEAD',
  'Access-Control-Allow-Headers': 'Authorization',
  'Access-Control-Max-Age': '600',
};
