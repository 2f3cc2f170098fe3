import type { ServerResponse } from 'node:http';
import type { ErrorCode } from '../protocol/errors.js';
import { BASE_HEADERS } from './headers.js';

/**
 * Small response helpers of the HTTP routes: JSON, text and coded errors.
 * HEAD requests get the same headers without a body (node:http drops it).
 */

/** HTTP status of each wire error code, for the REST passthrough. */
export const HTTP_STATUS: Readonly<Record<ErrorCode, number>> = {
  bad_request: 400,
  unknown_op: 400,
  invalid_channel: 400,
  invalid_market: 400,
  invalid_code: 400,
  invalid_resource: 400,
  invalid_params: 400,
  not_subscribed: 400,
  too_many_topics: 400,
  rate_limited: 429,
  upstream_rate_limited: 429,
  upstream_unavailable: 502,
  not_provided_now: 400,
  not_found: 404,
  not_recorded: 404,
  recording_off: 404,
  unauthorized: 401,
  internal: 500,
};

/** Sends a JSON body with `status`. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  sendJsonText(res, status, JSON.stringify(body), headers);
}

/** Sends an already serialised JSON body with `status`. */
export function sendJsonText(res: ServerResponse, status: number, text: string | Buffer, headers: Record<string, string> = {}): void {
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-store',
    ...BASE_HEADERS,
    ...headers,
  });
  res.end(text);
}

/** Sends a plain-text body with `status` (and `headers`, e.g. a page's security headers). */
export function sendText(
  res: ServerResponse,
  status: number,
  text: string,
  contentType = 'text/plain; charset=utf-8',
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, {
    'Content-Type': contentType,
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-store',
    ...BASE_HEADERS,
    ...headers,
  });
  res.end(text);
}

/** Sends `{"error":{"code","message"}}` with `status`. */
export function sendError(res: ServerResponse, status: number, code: string, message: string, headers: Record<string, string> = {}): void {
  sendJson(res, status, { error: { code, message } }, headers);
}
