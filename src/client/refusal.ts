import { ERROR_CODES, REFUSAL_CODES } from '../protocol/errors.js';
import { KrxError, type KrxErrorCode } from './errors.js';

/**
 * Why a socket failed to open. A browser's WebSocket (and Node's) reports
 * a refused upgrade as a bare close 1006, the same as a network that
 * failed: the HTTP status and the coded body are hidden from it. The
 * bridge answers a plain GET of its WebSocket URL with what an upgrade
 * would get now (the refusal, or 426 when it would be accepted), so after
 * a socket that failed to open the client asks, and a bad token or a
 * misspelt parameter ends as an error with its code instead of retries
 * without end. See docs/PROTOCOL.md §1.
 */

/** The part of `fetch` the client uses: the global one of browsers and Node 18+ fits. */
export type FetchLike = (url: string, init: { signal: AbortSignal; headers: Record<string, string> }) => Promise<{ status: number; text(): Promise<string> }>;

/** What the server said of an upgrade with the socket's URL. */
export interface Refusal {
  readonly status: number;
  /** The body's error code (`unauthorized`, …), or undefined when the body had none (a proxy's page, say). */
  readonly code: string | undefined;
  readonly message: string;
}

/** What the client does after a refused upgrade. */
export type Verdict =
  /** The upgrade would be accepted (426): the failure was on the way there; retry as after any failed connection. */
  | { readonly kind: 'retry' }
  /**
   * Refused for a passing reason: report it and retry, after a longer wait
   * (`penalty`) when the server said there are too many connections (429,
   * `server_full`), else after the usual one.
   */
  | { readonly kind: 'wait'; readonly penalty: boolean; readonly error: KrxError }
  /** Refused for a reason a retry cannot change (a parameter, a static token, the origin): report it and close. */
  | { readonly kind: 'final'; readonly error: KrxError };

/**
 * Statuses no retry changes: a malformed URL, a token that is not valid
 * (unless a function gives another), an origin, a method. Not 404: a
 * bridge too old to answer the probe answers it so too.
 */
const FINAL: ReadonlySet<number> = new Set([400, 401, 403, 405]);

/** The HTTP URL a WebSocket URL's upgrade is asked for (`ws:` → `http:`, `wss:` → `https:`). */
export function probeUrl(wsUrl: string): string {
  const u = new URL(wsUrl);
  u.protocol = u.protocol === 'wss:' ? 'https:' : 'http:';
  return u.toString();
}

/** Reads a probe's answer: its status and, from a `{"error":{code,message}}` body, the code and message. */
export function readRefusal(status: number, body: string): Refusal {
  try {
    const e = (JSON.parse(body) as { error?: { code?: unknown; message?: unknown } } | null)?.error;
    if (e !== undefined && typeof e.code === 'string') return { status, code: e.code, message: typeof e.message === 'string' ? e.message : '' };
  } catch {
    // Not JSON: a proxy's or a load balancer's own page.
  }
  return { status, code: undefined, message: '' };
}

function known(code: string | undefined): code is KrxErrorCode {
  return code !== undefined && (Object.hasOwn(ERROR_CODES, code) || Object.hasOwn(REFUSAL_CODES, code));
}

/**
 * What a refusal means to the client. `refreshes`: the token comes from a
 * function, which may give another one next time, so `unauthorized` is
 * reported and retried (after the usual wait) instead of final.
 */
export function verdictOf(r: Refusal, refreshes: boolean): Verdict {
  if (r.status === 426 || r.status < 400) return { kind: 'retry' };
  const code = known(r.code) ? r.code : 'connection';
  const what = r.message !== '' ? r.message : r.code !== undefined ? r.code : 'no reason given';
  const text = `the server refused the connection: ${what} (HTTP ${r.status})`;
  if (FINAL.has(r.status) && !(r.status === 401 && refreshes)) return { kind: 'final', error: new KrxError(code, text, { retryable: false }) };
  return { kind: 'wait', penalty: r.status === 429 || r.code === 'server_full', error: new KrxError(code, text, { retryable: true }) };
}

/**
 * Asks the server what an upgrade of `wsUrl` would get, within
 * `timeoutMs`; undefined when it cannot be asked or does not answer (no
 * `fetch`, a network that fails, another origin that may not read it).
 */
export async function askUpgrade(fetcher: FetchLike | undefined, wsUrl: string, timeoutMs: number): Promise<Refusal | undefined> {
  if (fetcher === undefined) return undefined;
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(), timeoutMs);
  try {
    const res = await fetcher(probeUrl(wsUrl), { signal: ctl.signal, headers: { Accept: 'application/json' } });
    return readRefusal(res.status, await res.text());
  } catch {
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}
