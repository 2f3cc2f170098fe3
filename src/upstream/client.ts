import { EventEmitter } from 'eventemitter3';
import type { z } from 'zod';
import { scrubSecrets, silentLogger, type Logger } from '../log.js';
import { Budget } from './budget.js';
import { findEndpoint, type Endpoint } from './catalogue.js';
import { UpstreamError, errorFromResponse, type UpstreamErrorCode } from './errors.js';
import { readBody } from './body.js';
import type { ListDelta, ListReader, PlainReason } from './listread.js';
import type { Row, RowIssue } from './normalise.js';
import { renderPath } from './paths.js';
import { Transport, type TransportOptions, type TransportResponse } from './transport.js';

/**
 * The typed upstream client: catalogue lookup, parameter validation, budget
 * check, HTTP (with retries), error mapping, and normalisation of the body.
 * One instance per upstream; `close()` when done.
 */

/** Options of an `UpstreamClient`. */
export interface UpstreamClientOptions {
  /** Base URL of the upstream, e.g. `http://127.0.0.1:7070`. */
  readonly baseUrl: string;
  /** The API key (header `apikey`); never logged or put in an error. */
  readonly apiKey: string;
  /** Time allowed for one attempt, ms; default 5000. */
  readonly timeoutMs?: number;
  /** Retries after the first attempt for network errors and 5xx; default 2. */
  readonly retries?: number;
  /** Also retry timed-out attempts; default false. */
  readonly retryTimeouts?: boolean;
  /** Keep-alive connections; default 8. */
  readonly connections?: number;
  /** Logger (src/log.ts); default silent. */
  readonly logger?: Logger;
  /** Budget to track (e.g. one shared with the poller); default a new one. */
  readonly budget?: Budget;
  /** Clock, ms since the epoch; default `Date.now`. */
  readonly now?: () => number;
  /** Backoff wait (tests); see `TransportOptions.sleep`. */
  readonly sleep?: TransportOptions['sleep'];
  /** Random source of the backoff jitter (tests); default `Math.random`. */
  readonly random?: () => number;
}

/** Per-call options. */
export interface CallOptions {
  /** Aborts the call; it then rejects with the signal's reason. */
  readonly signal?: AbortSignal;
  /** Called before each HTTP attempt (the first and every retry). */
  readonly onAttempt?: () => void;
  /**
   * Reads a list body incrementally against the last body this reader read
   * (one reader per call site, e.g. a poll feed's call). The result is the
   * same; `UpstreamResult.delta` tells the state store which rows changed.
   */
  readonly list?: ListReader;
}

/** A successful call: the normalised body and facts about the response. */
export interface UpstreamResult {
  /** The catalogue entry called. */
  readonly endpoint: Endpoint;
  /** The body without its envelope; the list (if any) under its spec key holds `rows`. */
  readonly data: Record<string, unknown>;
  /** The usable list rows; empty for an endpoint without a list. */
  readonly rows: Row[];
  /** List rows dropped as unusable. */
  readonly dropped: number;
  /** Descriptions of dropped rows and nulled fields (at most 20). */
  readonly issues: readonly RowIssue[];
  /** How `rows` relate to the last read of `CallOptions.list`, when the body was read incrementally. */
  readonly delta?: ListDelta;
  /** Why a body was read the plain way although `CallOptions.list` was given. */
  readonly plain?: PlainReason;
  /** HTTP status (2xx). */
  readonly status: number;
  /** When the response arrived, ms since the epoch (the client's clock). */
  readonly receivedAt: number;
  /** Duration of the call including retries, ms. */
  readonly ms: number;
}

/** Payload of the `call` event: one finished call, successful or not. */
export interface CallEvent {
  /** Catalogue id. */
  readonly endpointId: string;
  /** HTTP status of the last response, or `null` when none arrived. */
  readonly status: number | null;
  /** Duration including retries, ms. */
  readonly ms: number;
  /** Error code of a failed call; `aborted` when the caller aborted it. Absent on success. */
  readonly code?: UpstreamErrorCode | 'aborted';
  /** List rows dropped (0 on failure). */
  readonly dropped: number;
  /** HTTP attempts made; 0 when the call was refused before any request. */
  readonly attempts: number;
  /** A list body that a reader was given for but that was read the plain way (successfully or not), and why. */
  readonly plain?: PlainReason;
}

/** Events of an `UpstreamClient`. */
export interface UpstreamClientEvents {
  /** Every finished call (success, failure, refusal, abort). */
  call: (event: CallEvent) => void;
}

interface Progress {
  status: number | null;
  attempts: number;
  /** When the current attempt was sent (ms epoch). */
  sentAt?: number;
  path?: string;
  /** Why a list body was read the plain way although a reader was given. */
  plain?: PlainReason;
}

/** Readable text of zod issues, naming each parameter. */
function describeIssues(issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .map((i) => {
      if (i.code === 'unrecognized_keys') return `unknown parameter${i.keys.length > 1 ? 's' : ''} ${i.keys.join(', ')}`;
      const where = i.path.length ? i.path.map(String).join('.') : 'parameters';
      return `${where}: ${i.message}`;
    })
    .join('; ');
}

/** Calls upstream endpoints by catalogue id; emits `call` after each. */
export class UpstreamClient extends EventEmitter<UpstreamClientEvents> {
  /** The daily call budget, updated from every response. */
  readonly budget: Budget;
  readonly #transport: Transport;
  readonly #log: Logger;
  readonly #now: () => number;
  readonly #secrets: readonly string[];
  #closed = false;

  constructor(opts: UpstreamClientOptions) {
    super();
    this.budget = opts.budget ?? new Budget();
    this.#log = opts.logger ?? silentLogger();
    this.#now = opts.now ?? Date.now;
    this.#secrets = [opts.apiKey];
    this.#transport = new Transport({
      baseUrl: opts.baseUrl,
      apiKey: opts.apiKey,
      ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
      ...(opts.retries !== undefined ? { retries: opts.retries } : {}),
      ...(opts.retryTimeouts !== undefined ? { retryTimeouts: opts.retryTimeouts } : {}),
      ...(opts.connections !== undefined ? { connections: opts.connections } : {}),
      ...(opts.sleep ? { sleep: opts.sleep } : {}),
      ...(opts.random ? { random: opts.random } : {}),
    });
  }

  /**
   * Calls the endpoint `endpointId` with `params` (upstream names: path
   * parameters and query). Resolves with the normalised body; rejects with
   * an `UpstreamError`, or with the signal's reason when aborted.
   */
  async call(endpointId: string, params: Readonly<Record<string, unknown>> = {}, opts: CallOptions = {}): Promise<UpstreamResult> {
    const started = performance.now();
    const progress: Progress = { status: null, attempts: 0 };
    try {
      const result = await this.#call(endpointId, params, opts, progress);
      this.#emitCall({
        endpointId,
        status: result.status,
        ms: result.ms,
        dropped: result.dropped,
        attempts: progress.attempts,
        ...(progress.plain !== undefined ? { plain: progress.plain } : {}),
      });
      this.#logSuccess(result, progress);
      return result;
    } catch (err) {
      const ms = performance.now() - started;
      const failure = this.#failure(endpointId, err, opts.signal);
      const code = failure instanceof UpstreamError ? failure.code : 'aborted';
      this.#emitCall({
        endpointId,
        status: progress.status,
        ms,
        code,
        dropped: 0,
        attempts: progress.attempts,
        ...(progress.plain !== undefined ? { plain: progress.plain } : {}),
      });
      // `detail` (the network error's own text, naming the upstream's host) is for this log only, never for a client.
      const detail = failure instanceof UpstreamError ? failure.detail : undefined;
      this.#log.debug(
        {
          endpoint: endpointId,
          path: progress.path,
          status: progress.status,
          code,
          ms: Math.round(ms),
          attempts: progress.attempts,
          ...(detail !== undefined ? { detail } : {}),
        },
        'upstream call failed',
      );
      throw failure;
    }
  }

  /** Closes the connection pool; later calls fail with `network`. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#transport.close();
  }

  async #call(id: string, params: Readonly<Record<string, unknown>>, opts: CallOptions, progress: Progress): Promise<UpstreamResult> {
    const e = findEndpoint(id);
    if (!e) throw new UpstreamError('invalid_request', `unknown endpoint id ${JSON.stringify(id)}`, { endpointId: id });
    const parsed = e.params.safeParse(params);
    if (!parsed.success) {
      throw new UpstreamError('invalid_request', `${id}: ${describeIssues(parsed.error.issues)}`, { endpointId: id });
    }
    if (this.#closed) throw new UpstreamError('network', `${id}: the client is closed`, { endpointId: id });
    if (opts.signal?.aborted) throw opts.signal.reason;
    if (this.budget.isExhausted(this.#now())) {
      const resetAt = this.budget.resetAt!;
      throw new UpstreamError('rate_limited', `${id}: daily call budget spent until ${new Date(resetAt).toISOString()}`, {
        endpointId: id,
        resetAt,
      });
    }
    const path = renderPath(e, parsed.data);
    progress.path = path;
    const res = await this.#transport.request(path, {
      label: id,
      ...(opts.signal ? { signal: opts.signal } : {}),
      onAttempt: () => {
        progress.sentAt = this.#now();
        progress.attempts++;
        opts.onAttempt?.();
      },
      onResponse: (r) => this.#observe(r.status, r.headers, progress),
      canRetry: () => !this.budget.isExhausted(this.#now()),
    });
    const receivedAt = this.#now();
    if (res.status < 200 || res.status > 299) {
      throw errorFromResponse(res.status, res.bytes.toString('utf8'), id, {
        secrets: this.#secrets,
        ...(res.status === 429 && this.budget.resetAt !== null ? { resetAt: this.budget.resetAt } : {}),
      });
    }
    return this.#result(e, res, receivedAt, opts.list, progress);
  }

  /** The error a failed call rejects with: an `UpstreamError`, or the abort reason when the caller aborted. */
  #failure(id: string, err: unknown, signal: AbortSignal | undefined): unknown {
    if (err instanceof UpstreamError) return err;
    if (signal?.aborted) return err;
    const why = scrubSecrets(err instanceof Error ? err.message : String(err), this.#secrets);
    return new UpstreamError('upstream_error', `${id}: unexpected failure: ${why}`, { endpointId: id, retryable: false, cause: err });
  }

  #observe(status: number, headers: TransportResponse['headers'], progress: Progress): void {
    progress.status = status;
    const now = this.#now();
    this.budget.update(headers, now, progress.sentAt);
    if (status === 429) this.budget.exhaust(now, progress.sentAt);
  }

  #result(e: Endpoint, res: TransportResponse, receivedAt: number, reader: ListReader | undefined, progress: Progress): UpstreamResult {
    const r = readBody(e, res.bytes, reader);
    if (r.plain !== undefined) progress.plain = r.plain;
    if (!r.ok) {
      const reason = scrubSecrets(r.reason, this.#secrets);
      const why = r.kind === 'json' ? `body is not JSON (${reason})` : reason;
      throw new UpstreamError('malformed_body', `${e.id}: ${why}`, { status: res.status, endpointId: e.id });
    }
    const { data, rows, dropped } = r.value;
    // A reason quotes the start of the value it refused (cut short): should the upstream echo the key there, the cut may have left a start of it.
    const issues = r.value.issues.length === 0 ? r.value.issues : r.value.issues.map((i) => ({ ...i, reason: scrubSecrets(i.reason, this.#secrets) }));
    return {
      endpoint: e,
      data,
      rows,
      dropped,
      issues,
      ...(r.delta !== undefined ? { delta: r.delta } : {}),
      ...(r.plain !== undefined ? { plain: r.plain } : {}),
      status: res.status,
      receivedAt,
      ms: res.ms,
    };
  }

  #logSuccess(r: UpstreamResult, progress: Progress): void {
    const fields = { endpoint: r.endpoint.id, path: progress.path, status: r.status, ms: Math.round(r.ms), attempts: progress.attempts };
    this.#log.debug(
      { ...fields, rows: r.rows.length, dropped: r.dropped, ...(progress.plain !== undefined ? { plain: progress.plain } : {}) },
      'upstream call',
    );
    if (r.dropped > 0) {
      this.#log.warn({ ...fields, dropped: r.dropped, issues: r.issues.slice(0, 3) }, 'upstream rows dropped');
    }
  }

  #emitCall(event: CallEvent): void {
    try {
      this.emit('call', event);
    } catch (err) {
      // A listener's failure must not turn a finished call into a failed one.
      this.#log.warn({ err }, "an upstream 'call' listener threw");
    }
  }
}
