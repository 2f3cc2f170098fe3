import { setTimeout as delay } from 'node:timers/promises';
import { Pool, type Dispatcher } from 'undici';
import { scrubSecrets } from '../log.js';
import { UpstreamError } from './errors.js';
import { API_KEY_HEADER } from './wire.js';

/**
 * HTTP to the upstream: one keep-alive undici `Pool`, a per-attempt timeout,
 * and retries with full-jitter exponential backoff for outages (network
 * errors and 5xx). A 4xx, and in particular a 429, is never retried: it
 * would only spend more of the daily budget.
 */

/** Options of a `Transport`. */
export interface TransportOptions {
  /** Base URL of the upstream, e.g. `http://127.0.0.1:7070`; a path prefix is kept. */
  readonly baseUrl: string;
  /** The API key, sent in the `apikey` header. Never logged or put in an error. */
  readonly apiKey: string;
  /** Time allowed for one attempt (connect, headers and body), ms; default 5000. */
  readonly timeoutMs?: number;
  /** Retries after the first attempt, for network errors and 5xx; default 2. */
  readonly retries?: number;
  /** Also retry attempts that timed out; default false (a hung upstream would hold a caller for (retries+1)×timeout). */
  readonly retryTimeouts?: boolean;
  /** Keep-alive connections of the pool; default 8. */
  readonly connections?: number;
  /** First backoff ceiling, ms; default 100. The ceiling doubles per retry. */
  readonly backoffBaseMs?: number;
  /** Largest backoff ceiling, ms; default 2000. */
  readonly backoffCapMs?: number;
  /** Largest response body accepted, bytes; default 64 MiB. A larger one is `malformed_body`. */
  readonly maxBodyBytes?: number;
  /** Waits `ms`; rejects when `signal` aborts. Default: `timers/promises` setTimeout. */
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Uniform random number in [0, 1); default `Math.random`. */
  readonly random?: () => number;
}

/** A response of the upstream (any status), after retries. */
export interface TransportResponse {
  /** HTTP status. */
  readonly status: number;
  /** Response headers (lower-case names). */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The body's bytes, as they arrived (UTF-8 JSON when all is well). */
  readonly bytes: Buffer;
  /** Time from the first attempt's start to this response's last byte, ms. */
  readonly ms: number;
  /** Attempts made, 1 + retries used. */
  readonly attempts: number;
}

/** Per-request options of `Transport.request`. */
export interface RequestOptions {
  /** Aborts the request (and any backoff wait); the call rejects with the signal's reason. */
  readonly signal?: AbortSignal;
  /** Named in error messages, e.g. the catalogue id. */
  readonly label?: string;
  /** Called as each attempt starts (the first and every retry). */
  readonly onAttempt?: () => void;
  /** Called with every response, including those that are then retried. */
  readonly onResponse?: (res: { status: number; headers: TransportResponse['headers'] }) => void;
  /** Asked before each retry; `false` stops retrying (e.g. the daily budget is spent). */
  readonly canRetry?: () => boolean;
}

/** Default per-attempt timeout, ms. */
export const DEFAULT_TIMEOUT_MS = 5000;
/** Default retries after the first attempt. */
export const DEFAULT_RETRIES = 2;
/** Default keep-alive connections. */
export const DEFAULT_CONNECTIONS = 8;

/** Full-jitter backoff before retry `retry` (0-based): uniform in [0, min(cap, base·2^retry)). */
export function backoffMs(retry: number, baseMs: number, capMs: number, random: () => number): number {
  return Math.floor(random() * Math.min(capMs, baseMs * 2 ** retry));
}

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']);

/** What an error code looks like (`ECONNREFUSED`, `UND_ERR_SOCKET`, `ERR_TLS_CERT_ALTNAME_INVALID`): nothing else is quoted. */
const CODE = /^[A-Z][A-Z0-9_]{1,63}$/;

/**
 * The error code that names a failed connection or exchange in a
 * client-facing message: `err.code`, else its cause's, else the first of
 * an `AggregateError`'s (Node's happy-eyeballs connect); `undefined` when
 * none looks like a code. The error's own text is never used: it names the
 * upstream's host, address or port (`getaddrinfo ENOTFOUND <host>`,
 * `connect ECONNREFUSED <ip>:<port>`, a TLS altname mismatch naming the host).
 */
export function networkErrorCode(err: unknown): string | undefined {
  const seen = new Set<unknown>();
  for (let e: unknown = err; e !== null && typeof e === 'object' && !seen.has(e);) {
    seen.add(e);
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && CODE.test(code)) return code;
    const errors = (e as { errors?: unknown }).errors;
    e = (e as { cause?: unknown }).cause ?? (Array.isArray(errors) ? errors[0] : undefined);
  }
  return undefined;
}

class BodyTooLarge extends Error {}

async function readBody(body: Dispatcher.ResponseData['body'], max: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size > max) {
      body.destroy();
      throw new BodyTooLarge(`body exceeds ${max} bytes`);
    }
    chunks.push(buf);
  }
  // Left as bytes: a list reader compares them with the last body's without decoding them.
  return Buffer.concat(chunks, size);
}

/** HTTP GETs to one upstream origin over a keep-alive pool; `close()` when done. */
export class Transport {
  readonly #pool: Pool;
  readonly #prefix: string;
  readonly #headers: Record<string, string>;
  readonly #secrets: readonly string[];
  readonly #timeoutMs: number;
  readonly #retries: number;
  readonly #retryTimeouts: boolean;
  readonly #baseMs: number;
  readonly #capMs: number;
  readonly #maxBody: number;
  readonly #sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly #random: () => number;

  constructor(opts: TransportOptions) {
    const url = new URL(opts.baseUrl);
    this.#prefix = url.pathname.replace(/\/+$/, '');
    this.#timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#retries = opts.retries ?? DEFAULT_RETRIES;
    this.#retryTimeouts = opts.retryTimeouts ?? false;
    this.#baseMs = opts.backoffBaseMs ?? 100;
    this.#capMs = opts.backoffCapMs ?? 2000;
    this.#maxBody = opts.maxBodyBytes ?? 64 * 1024 * 1024;
    this.#sleep = opts.sleep ?? ((ms, signal) => delay(ms, undefined, signal ? { signal } : {}));
    this.#random = opts.random ?? Math.random;
    this.#headers = { [API_KEY_HEADER]: opts.apiKey, accept: 'application/json' };
    this.#secrets = [opts.apiKey];
    this.#pool = new Pool(url.origin, {
      connections: opts.connections ?? DEFAULT_CONNECTIONS,
      pipelining: 1,
      headersTimeout: this.#timeoutMs,
      bodyTimeout: this.#timeoutMs,
      connect: { timeout: this.#timeoutMs },
    });
  }

  /**
   * GETs `path` (with its query string), retrying network errors and 5xx
   * (and timeouts when `retryTimeouts`). Resolves with the last response
   * whatever its status; rejects with an `UpstreamError` (`timeout`,
   * `network`, `malformed_body`) when no usable response arrived, or with the
   * signal's reason when `opts.signal` aborted.
   */
  async request(path: string, opts: RequestOptions = {}): Promise<TransportResponse> {
    const start = performance.now();
    for (let attempt = 0; ; attempt++) {
      let res: Omit<TransportResponse, 'ms' | 'attempts'> | undefined;
      let failure: UpstreamError | undefined;
      try {
        res = await this.#attempt(path, opts);
      } catch (err) {
        if (!(err instanceof UpstreamError)) throw err;
        failure = err;
      }
      if (res) opts.onResponse?.({ status: res.status, headers: res.headers });
      if (!this.#shouldRetry(attempt, res, failure, opts)) {
        if (failure) throw failure;
        return { ...res!, ms: performance.now() - start, attempts: attempt + 1 };
      }
      try {
        await this.#sleep(backoffMs(attempt, this.#baseMs, this.#capMs, this.#random), opts.signal);
      } catch (err) {
        throw opts.signal?.aborted ? opts.signal.reason : err;
      }
    }
  }

  /** Destroys the pool; requests in flight fail with `network`. */
  async close(): Promise<void> {
    if (!this.#pool.destroyed) await this.#pool.destroy();
  }

  #shouldRetry(attempt: number, res: { status: number } | undefined, failure: UpstreamError | undefined, opts: RequestOptions): boolean {
    if (attempt >= this.#retries || opts.signal?.aborted) return false;
    const outage = failure ? failure.code === 'network' || (failure.code === 'timeout' && this.#retryTimeouts) : res!.status >= 500 && res!.status <= 599;
    return outage && (opts.canRetry?.() ?? true);
  }

  async #attempt(path: string, opts: RequestOptions): Promise<Omit<TransportResponse, 'ms' | 'attempts'>> {
    const caller = opts.signal;
    if (caller?.aborted) throw caller.reason;
    opts.onAttempt?.();
    const ac = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      ac.abort(new Error('timeout'));
    }, this.#timeoutMs);
    const onAbort = () => ac.abort(caller?.reason);
    caller?.addEventListener('abort', onAbort, { once: true });
    try {
      const res = await this.#pool.request({
        path: this.#prefix + path,
        method: 'GET',
        headers: this.#headers,
        signal: ac.signal,
      });
      const bytes = await readBody(res.body, this.#maxBody);
      return { status: res.statusCode, headers: res.headers, bytes };
    } catch (err) {
      if (caller?.aborted) throw caller.reason;
      throw this.#failure(err, timedOut, opts.label, path);
    } finally {
      clearTimeout(timer);
      caller?.removeEventListener('abort', onAbort);
    }
  }

  /**
   * The `UpstreamError` of a failed attempt. Its message (client-facing: a
   * stale feed's reason, `/status`) names the kind of failure and at most an
   * error code, never the upstream's host, address or port; the error's own
   * text goes in `detail`, for the log, with the API key scrubbed.
   */
  #failure(err: unknown, timedOut: boolean, endpointId: string | undefined, path: string): UpstreamError {
    const label = endpointId ?? path;
    const code = networkErrorCode(err);
    const detail = scrubSecrets(err instanceof Error ? `${code !== undefined ? `${code} ` : ''}${err.message}` : String(err), this.#secrets);
    if (err instanceof BodyTooLarge) {
      return new UpstreamError('malformed_body', `${label}: ${err.message}`, { endpointId, cause: err });
    }
    if (timedOut || (code !== undefined && TIMEOUT_CODES.has(code))) {
      return new UpstreamError('timeout', `${label}: no complete response within ${this.#timeoutMs} ms`, {
        endpointId,
        detail,
        cause: err,
      });
    }
    return new UpstreamError('network', `${label}: network error${code !== undefined ? `: ${code}` : ''}`, {
      endpointId,
      detail,
      cause: err,
    });
  }
}
