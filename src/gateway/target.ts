import type { IncomingHttpHeaders } from 'node:http';

/**
 * Reading an HTTP request target (RFC 9112 §3.2) without trusting it. Pure.
 * `new URL(req.url, base)` throws on targets such as `//[` (read as a host),
 * and an exception in the request listener ends the process; every route
 * gets its URL from here instead, and a target that cannot be read is a 400.
 * The WebSocket upgrade (upgrade.ts) reads its target here too, so that a
 * plain GET of `/ws` (which answers what an upgrade would get) and the
 * upgrade itself never read one request two ways. It lives in the gateway,
 * the lower of the two layers that read requests (src/http re-exports it).
 */

const BASE = 'http://localhost';

/** A `%` not followed by two hex digits. */
const BAD_ESCAPE = /%(?![0-9A-Fa-f]{2})/;

/**
 * The URL of a request target, or undefined when it is malformed. The
 * origin form (`/path?query`, where `//x` is a path, not a host) and the
 * absolute form (`http://host/path`, as sent to proxies) are read; the
 * authority and asterisk forms are refused, and so is a target whose path
 * holds `[` or `]` (RFC 3986 allows them only in a host), a backslash, a NUL, or escapes
 * that do not decode to UTF-8, or whose query holds a broken `%` escape.
 */
export function parseTarget(target: string | undefined): URL | undefined {
  // A backslash is no part of a URL (a WHATWG parser reads it as `/`, so `/..\\x` would be normalised away).
  if (target === undefined || target.length === 0 || target.includes('\\')) return undefined;
  let url: URL;
  // Node reads the request line as latin1: raw UTF-8 bytes (`?q=삼성` sent unencoded) are read back as UTF-8.
  if (/[\u0080-\u00ff]/.test(target)) {
    const utf8 = Buffer.from(target, 'latin1').toString('utf8');
    if (utf8.includes('\ufffd')) return undefined;
    target = utf8;
  }
  try {
    if (target.startsWith('/')) url = new URL(BASE + target);
    else if (/^https?:\/\//i.test(target)) {
      const u = new URL(target);
      url = new URL(BASE + u.pathname + u.search);
    } else return undefined;
  } catch {
    return undefined;
  }
  return wellFormed(url) ? url : undefined;
}

function wellFormed(url: URL): boolean {
  const path = url.pathname;
  if (/[[\]]/.test(path) || path.includes('%00') || BAD_ESCAPE.test(url.search)) return false;
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}

/** What `readRequest` needs of a request. */
export interface RequestHead {
  readonly url?: string | undefined;
  readonly httpVersion: string;
  readonly headers: IncomingHttpHeaders;
}

/** A request's URL, or why it is refused: a 400 `bad_request` with `message`. */
export type ReadRequest = { readonly ok: true; readonly url: URL } | { readonly ok: false; readonly message: string };

/**
 * The checks every request gets before any route or upgrade looks at it:
 * an HTTP/1.1 request needs a `Host` header (RFC 9112 §3.2), and its
 * target must be readable (`parseTarget`). Its URL, or the 400's message.
 */
export function readRequest(req: RequestHead): ReadRequest {
  if (req.httpVersion === '1.1' && req.headers.host === undefined) return { ok: false, message: 'an HTTP/1.1 request needs a Host header' };
  const url = parseTarget(req.url);
  return url === undefined ? { ok: false, message: 'the request target is not a valid path' } : { ok: true, url };
}
