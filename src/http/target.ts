/**
 * Reading an HTTP request target (RFC 9112 §3.2) without trusting it. Pure.
 * `new URL(req.url, base)` throws on targets such as `//[` (read as a host),
 * and an exception in the request listener ends the process; every route
 * gets its URL from here instead, and a target that cannot be read is a 400.
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
