import { ERROR_CODES, REFUSAL_CODES, type ErrorCode, type RefusalCode } from '../protocol/errors.js';

/**
 * Errors of the client SDK: the wire error codes of protocol v1, the
 * gateway's refusals of an upgrade, and a few raised by the client itself.
 * See docs/PROTOCOL.md §6 and src/client/README.md.
 */

/** Codes the client raises itself (not sent by a server). */
export const CLIENT_ERROR_CODES = {
  /** A request got no answer within its timeout. */
  timeout: { retryable: true, text: 'No answer within the request timeout.' },
  /** A request waited its whole timeout for a connection that never came (the bridge is down or unreachable). */
  not_connected: { retryable: true, text: 'Not connected to the bridge within the request timeout.' },
  /** The client was closed (by `close()`) before the request was answered. */
  closed: { retryable: false, text: 'The client is closed.' },
  /** The connection failed or was lost and the client does not reconnect. */
  connection: { retryable: true, text: 'The connection failed or was lost.' },
  /** A server frame could not be understood (bad JSON, unknown shape, wrong checksum). */
  protocol: { retryable: false, text: 'The server sent something the client cannot use.' },
  /** A listener of a client event threw; the client carried on. */
  listener: { retryable: false, text: 'An event listener threw.' },
  /** The caller aborted the request with its AbortSignal. */
  aborted: { retryable: false, text: 'The request was aborted by the caller.' },
} as const;

/** A code the client raises itself. */
export type ClientErrorCode = keyof typeof CLIENT_ERROR_CODES;

/** Every code a `KrxError` can carry: a wire code, a refusal of the upgrade, or a client code. */
export type KrxErrorCode = ErrorCode | RefusalCode | ClientErrorCode;

/** Options of a `KrxError`. */
export interface KrxErrorOptions {
  /** Whether the same request can succeed later; default from the code's table. */
  readonly retryable?: boolean;
  /** The topic concerned, when there is one (e.g. a failed resync). */
  readonly topic?: string;
  /** The underlying error or value. */
  readonly cause?: unknown;
}

/** An error of the client SDK, with a stable `code` and whether a retry can help. */
export class KrxError extends Error {
  override readonly name = 'KrxError';
  /** Stable code: a wire error code or a client code (`timeout`, `closed`, `connection`, …). */
  readonly code: KrxErrorCode;
  /** Whether the same request can succeed later. */
  readonly retryable: boolean;
  /** The topic concerned, if any. */
  readonly topic?: string;

  /** An error with a code, a message and options. */
  constructor(code: KrxErrorCode, message: string, opts: KrxErrorOptions = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.code = code;
    this.retryable = opts.retryable ?? defaultRetryable(code);
    if (opts.topic !== undefined) this.topic = opts.topic;
  }
}

/** Whether a value is a `KrxError` (also across bundle copies, by name and code). */
export function isKrxError(e: unknown): e is KrxError {
  return e instanceof KrxError || (e instanceof Error && e.name === 'KrxError' && typeof (e as { code?: unknown }).code === 'string');
}

function defaultRetryable(code: KrxErrorCode): boolean {
  const wire =
    (ERROR_CODES as Record<string, { retryable: boolean } | undefined>)[code] ?? (REFUSAL_CODES as Record<string, { retryable: boolean } | undefined>)[code];
  if (wire !== undefined) return wire.retryable;
  return (CLIENT_ERROR_CODES as Record<string, { retryable: boolean } | undefined>)[code]?.retryable ?? false;
}
