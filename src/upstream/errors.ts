import { cutScrubbed } from '../log.js';
import { classify400 } from './wire.js';

/**
 * Errors of the upstream client. Every failure of a call becomes one
 * `UpstreamError` with a stable `code`:
 *
 * | code | when | retryable |
 * |---|---|---|
 * | `invalid_request` | our own parameter validation failed; no call was made | no |
 * | `invalid_code` | 400: the market or issue code is not valid | no |
 * | `not_provided_now` | 400: outside the endpoint's provision time | yes (later) |
 * | `bad_request` | any other 400 (or another unexpected 4xx) | no |
 * | `unauthorized` | 401 (no or unknown API key), 403 | no |
 * | `not_found` | 404: no such route | no |
 * | `rate_limited` | 429, or the daily budget is known to be spent until `resetAt` | yes (after `resetAt`) |
 * | `upstream_error` | 5xx | yes |
 * | `timeout` | no complete response within the timeout | yes |
 * | `network` | connection refused, reset or closed; DNS failure | yes |
 * | `malformed_body` | a 2xx body that is not JSON, not an object, or whose list is not an array | yes |
 *
 * `retryable` says whether the same request may succeed if sent again later;
 * it does not say the transport retried it (see `TransportOptions`).
 *
 * An error's `message` is client-facing: it reaches every subscriber of a
 * feed (a stale feed's `reason`) and the public `/status`. It never carries
 * the API key (nor a part of it) or the upstream's host, address or port;
 * such diagnostics go in `detail`, which only the log sees.
 */

/** Every stable error code of the upstream client. */
export const UPSTREAM_ERROR_CODES = [
  'invalid_request',
  'invalid_code',
  'not_provided_now',
  'bad_request',
  'unauthorized',
  'not_found',
  'rate_limited',
  'upstream_error',
  'timeout',
  'network',
  'malformed_body',
] as const;

/** A stable error code of the upstream client. */
export type UpstreamErrorCode = (typeof UPSTREAM_ERROR_CODES)[number];

const RETRYABLE: Readonly<Record<UpstreamErrorCode, boolean>> = {
  invalid_request: false,
  invalid_code: false,
  not_provided_now: true,
  bad_request: false,
  unauthorized: false,
  not_found: false,
  rate_limited: true,
  upstream_error: true,
  timeout: true,
  network: true,
  malformed_body: true,
};

/** An answer whose rows were all unusable: how many were dropped, and why the first was (no value from the body). */
export interface SchemaDrift {
  readonly dropped: number;
  readonly reason: string;
}

/**
 * The reason of a dropped row (normaliseRow's) without the value it quotes:
 * `trdPrc: "abc" is not a valid number` becomes `trdPrc is not a valid number`.
 */
export function driftReason(reason: string): string {
  const m = /^(\w+): .* is not a valid (number|string)$/.exec(reason);
  if (m) return `${m[1]} is not a valid ${m[2]}`;
  return /^(missing \w+|row is not an object)$/.test(reason) ? reason : 'rows not as declared';
}

/**
 * Throws `malformed_body` (schema drift) for an answer whose list had rows
 * and kept none: an empty result must not look like a success then. A
 * partial drop passes (the result says how many were dropped).
 */
export function requireRows(r: { rows: readonly unknown[]; dropped: number; issues: readonly { reason: string }[] }, endpointId: string): void {
  if (r.rows.length > 0 || r.dropped === 0) return;
  const reason = driftReason(r.issues[0]?.reason ?? '');
  throw new UpstreamError('malformed_body', `${endpointId}: schema drift: all ${r.dropped} rows unusable (${reason})`, {
    endpointId,
    drift: { dropped: r.dropped, reason },
  });
}

/** Options of an `UpstreamError`. */
export interface UpstreamErrorOptions {
  /** HTTP status of the response, when there was one. */
  readonly status?: number;
  /** Catalogue id of the endpoint called. */
  readonly endpointId?: string;
  /** Overrides the code's default `retryable`. */
  readonly retryable?: boolean;
  /** For `rate_limited`: when the daily budget resets (ms since the epoch). */
  readonly resetAt?: number;
  /** For `rate_limited`: the bridge's own share for on-demand lookups is spent, not the upstream's budget. */
  readonly onDemandShare?: boolean;
  /** For `rate_limited`: one client's part of the on-demand share is spent (no upstream call was made). */
  readonly clientShare?: boolean;
  /** For `malformed_body`: every row of the answer's list was unusable (schema drift): how many, and why the first. */
  readonly drift?: SchemaDrift;
  /** Diagnostics for the operator's log only (e.g. a network error's own text, which names the upstream's host and port). */
  readonly detail?: string;
  /** The underlying error. */
  readonly cause?: unknown;
}

/**
 * A failed upstream call, with a stable `code`; never carries the API key or
 * request headers. `message` is safe to show to clients (see the module
 * comment); `detail` is for the log.
 */
export class UpstreamError extends Error {
  override readonly name = 'UpstreamError';
  /** Stable code (see `UPSTREAM_ERROR_CODES`). */
  readonly code: UpstreamErrorCode;
  /** HTTP status, when a response arrived. */
  readonly status?: number;
  /** Whether the same request may succeed later. */
  readonly retryable: boolean;
  /** Catalogue id of the endpoint, when known. */
  readonly endpointId?: string;
  /** For `rate_limited`: ms epoch when the daily budget resets, when known. */
  readonly resetAt?: number;
  /** For `rate_limited`: true when the bridge refused a lookup past its on-demand share (no upstream call was made). */
  readonly onDemandShare?: boolean;
  /** For `rate_limited`: true when one client's part of the on-demand share is spent (no upstream call was made). */
  readonly clientShare?: boolean;
  /** For `malformed_body`: the schema drift that made the answer unusable. */
  readonly drift?: SchemaDrift;
  /**
   * Diagnostics for the operator's log only, never for a client: e.g. the
   * network error's own text, which may name the upstream's host, address
   * and port. Not enumerable, and not in `toJSON`, so that copying or
   * serialising the error does not carry it along.
   */
  declare readonly detail?: string;

  constructor(code: UpstreamErrorCode, message: string, opts: UpstreamErrorOptions = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.code = code;
    this.retryable = opts.retryable ?? RETRYABLE[code];
    if (opts.status !== undefined) this.status = opts.status;
    if (opts.endpointId !== undefined) this.endpointId = opts.endpointId;
    if (opts.resetAt !== undefined) this.resetAt = opts.resetAt;
    if (opts.onDemandShare) this.onDemandShare = true;
    if (opts.clientShare) this.clientShare = true;
    if (opts.drift) this.drift = opts.drift;
    if (opts.detail !== undefined) Object.defineProperty(this, 'detail', { value: opts.detail, enumerable: false });
  }

  /** The error as wire data: `{ code, message, retryable }` plus status and resetAt when set. */
  toJSON(): { code: UpstreamErrorCode; message: string; retryable: boolean; status?: number; resetAt?: number } {
    return {
      code: this.code,
      message: this.message,
      retryable: this.retryable,
      ...(this.status !== undefined ? { status: this.status } : {}),
      ...(this.resetAt !== undefined ? { resetAt: this.resetAt } : {}),
    };
  }
}

/** True when `err` is an `UpstreamError` (optionally with one of `codes`). */
export function isUpstreamError(err: unknown, ...codes: UpstreamErrorCode[]): err is UpstreamError {
  return err instanceof UpstreamError && (codes.length === 0 || codes.includes(err.code));
}

/** Longest piece of an upstream body quoted in a message, in characters. */
export const MAX_QUOTED = 160;

/**
 * The upstream's own text in an error body: the `error` or `message` string
 * of a JSON object, else the body itself with whitespace collapsed; with
 * `secrets` (the API key) scrubbed from the whole text before it is cut to
 * `MAX_QUOTED` characters, so that a secret straddling the cut is still
 * matched (see `cutScrubbed`).
 */
export function upstreamText(bodyText: string, secrets: readonly string[] = []): string {
  let text: string | undefined;
  try {
    const body: unknown = JSON.parse(bodyText);
    if (body !== null && typeof body === 'object' && !Array.isArray(body)) {
      const o = body as Record<string, unknown>;
      const t = typeof o.error === 'string' ? o.error : typeof o.message === 'string' ? o.message : undefined;
      if (t !== undefined) text = t;
    }
  } catch {
    // Not JSON: quote the raw text below.
  }
  return cutScrubbed((text ?? bodyText).replace(/\s+/g, ' ').trim(), MAX_QUOTED, secrets);
}

/** Extra inputs of `errorFromResponse`. */
export interface ErrorFromResponseOptions {
  /** For a 429: when the budget resets (ms epoch). */
  readonly resetAt?: number;
  /** Values (the API key) to remove from the quoted upstream text, should the upstream echo them. */
  readonly secrets?: readonly string[];
}

function codeOf(status: number, text: string): UpstreamErrorCode {
  if (status === 400) return classify400(text);
  if (status === 401 || status === 403) return 'unauthorized';
  if (status === 404) return 'not_found';
  if (status === 429) return 'rate_limited';
  if (status >= 500) return 'upstream_error';
  if (status >= 400) return 'bad_request';
  return 'upstream_error';
}

/**
 * The `UpstreamError` for a non-2xx response: the code from the status (and,
 * for a 400, from the body's text via `classify400`); the message names the
 * endpoint, the status and the upstream's own text (`upstreamText`: the
 * `secrets` scrubbed from it before it is cut). Pure.
 */
export function errorFromResponse(status: number, bodyText: string, endpointId: string, opts: ErrorFromResponseOptions = {}): UpstreamError {
  const text = upstreamText(bodyText, opts.secrets);
  const code = codeOf(status, text);
  const message = `${endpointId}: HTTP ${status}${text ? ` ${JSON.stringify(text)}` : ''}`;
  return new UpstreamError(code, message, {
    status,
    endpointId,
    // A 1xx/3xx is not an outage: sending it again will not help.
    ...(status < 400 ? { retryable: false } : {}),
    ...(code === 'rate_limited' && opts.resetAt !== undefined ? { resetAt: opts.resetAt } : {}),
  });
}
