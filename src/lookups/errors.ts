import type { ErrorCode } from '../protocol/errors.js';
import type { WireError } from '../protocol/errors.js';

/**
 * The wire errors of failed upstream lookups: the mapping of the upstream
 * client's codes to wire codes, with fixed texts. See docs/PROTOCOL.md §Errors.
 */

/** Upstream client error codes and the wire code each becomes. */
export const UPSTREAM_TO_WIRE: Readonly<Record<string, ErrorCode>> = {
  invalid_request: 'invalid_params',
  bad_request: 'invalid_params',
  invalid_code: 'invalid_code',
  not_provided_now: 'not_provided_now',
  rate_limited: 'upstream_rate_limited',
  not_found: 'not_found',
  unauthorized: 'upstream_unavailable',
  upstream_error: 'upstream_unavailable',
  timeout: 'upstream_unavailable',
  network: 'upstream_unavailable',
  malformed_body: 'upstream_unavailable',
};

// Fixed texts: an upstream error's own message is never forwarded, so nothing
// the upstream client put there (a URL, a header, a key) can reach a client.
const UPSTREAM_TEXT: Readonly<Record<string, string>> = {
  invalid_request: 'The request parameters are not valid for the upstream endpoint.',
  bad_request: 'The upstream refused the request parameters.',
  invalid_code: 'The upstream does not know this market or issue code.',
  not_provided_now: 'The upstream does not provide this data at this time of day.',
  rate_limited: 'The upstream daily call budget is spent until its reset.',
  not_found: 'The upstream has no such data.',
  unauthorized: "The upstream refused the bridge's upstream credentials; an operator must act.",
  upstream_error: 'The upstream failed with a server error.',
  timeout: 'The upstream did not answer in time.',
  network: 'The upstream could not be reached.',
  malformed_body: 'The upstream answered with a body that could not be used.',
};

/** The start of the text of an answer whose rows were all dropped. */
const DRIFT_TEXT = "The upstream's answer did not match its declared shape (schema drift):";

/** The text of a lookup refused past the bridge's on-demand share (the feeds keep their calls). */
const CLIENT_SHARE_TEXT = "This client's part of the day's lookup share is spent until its reset; cached answers and streaming continue.";
const SHARE_SPENT_TEXT = 'The share of the daily call budget kept for lookups is spent until its reset; streaming continues.';

/**
 * The wire error of a failed upstream lookup. Any error with a string
 * `code` among the upstream client's codes is mapped (duck-typed); anything
 * else is `internal`. The error's own message is never used.
 */
export function upstreamWireError(err: unknown): WireError {
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  if (typeof code === 'string' && Object.hasOwn(UPSTREAM_TO_WIRE, code)) {
    const resetAt = (err as { resetAt?: unknown }).resetAt;
    const share = code === 'rate_limited' && (err as { onDemandShare?: unknown }).onDemandShare === true;
    if (code === 'rate_limited' && (err as { clientShare?: unknown }).clientShare === true) {
      const out: WireError = { code: 'rate_limited', message: CLIENT_SHARE_TEXT };
      return typeof resetAt === 'number' ? { ...out, resetAt } : out;
    }
    const drift = code === 'malformed_body' ? (err as { drift?: { dropped?: unknown; reason?: unknown } }).drift : undefined;
    if (drift && typeof drift.dropped === 'number' && typeof drift.reason === 'string') {
      return { code: 'upstream_unavailable', message: `${DRIFT_TEXT} all ${drift.dropped} rows were unusable (${drift.reason.slice(0, 80)}).` };
    }
    const out: WireError = { code: UPSTREAM_TO_WIRE[code]!, message: share ? SHARE_SPENT_TEXT : UPSTREAM_TEXT[code]! };
    return typeof resetAt === 'number' && code === 'rate_limited' ? { ...out, resetAt } : out;
  }
  return { code: 'internal', message: 'An unexpected server error occurred.' };
}
