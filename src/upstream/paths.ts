import { CATALOGUE, type Endpoint } from './catalogue.js';

/**
 * Rendering catalogue entries to request paths, and matching request paths
 * back to entries. Pure functions.
 */

/** Parameters after validation by an entry's zod schema. */
export type Params = Readonly<Record<string, unknown>>;

/**
 * The request path and query string of an entry for validated parameters.
 * Path parameters are URI-encoded; `isuCd` lists are joined by commas;
 * selectivemaster `fields` become bare flags (`?f1&f2`).
 */
export function renderPath(e: Endpoint, params: Params): string {
  const path = e.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const v = params[name];
    if (v === undefined || v === null) throw new Error(`${e.id}: missing path parameter ${name}`);
    return encodeURIComponent(String(v));
  });
  const parts: string[] = [];
  for (const name of e.query) {
    const v = params[name];
    if (v === undefined || v === null) continue;
    if (name === 'fields') parts.push(...(v as string[]).map(encodeURIComponent));
    else if (Array.isArray(v)) parts.push(`${name}=${v.map((c) => encodeURIComponent(String(c))).join(',')}`);
    else parts.push(`${name}=${encodeURIComponent(String(v))}`);
  }
  return parts.length ? `${path}?${parts.join('&')}` : path;
}

interface Compiled {
  readonly endpoint: Endpoint;
  readonly segments: readonly string[];
  readonly literals: number;
}

const COMPILED: readonly Compiled[] = CATALOGUE.map((endpoint) => {
  const segments = endpoint.path.split('/').filter(Boolean);
  return { endpoint, segments, literals: segments.filter((s) => !s.startsWith('{')).length };
});

/** A request path matched to a catalogue entry, with its raw path parameters. */
export interface PathMatch {
  readonly endpoint: Endpoint;
  readonly pathParams: Readonly<Record<string, string>>;
}

/**
 * The catalogue entry whose template matches `pathname` (no query string),
 * preferring the template with the most literal segments. Placeholder values
 * are returned raw (decoded, not validated).
 */
export function matchPath(pathname: string, candidates: readonly Endpoint[] = CATALOGUE): PathMatch | undefined {
  const parts = pathname.split('/').filter(Boolean);
  let best: { c: Compiled; params: Record<string, string> } | undefined;
  for (const c of COMPILED) {
    if (c.segments.length !== parts.length) continue;
    if (candidates !== CATALOGUE && !candidates.includes(c.endpoint)) continue;
    const params: Record<string, string> = {};
    let ok = true;
    for (let i = 0; i < parts.length; i++) {
      const seg = c.segments[i]!;
      const part = parts[i]!;
      if (seg.startsWith('{')) {
        try {
          params[seg.slice(1, -1)] = decodeURIComponent(part);
        } catch {
          ok = false;
          break;
        }
      } else if (seg !== part) {
        ok = false;
        break;
      }
    }
    if (ok && (!best || c.literals > best.c.literals)) best = { c, params };
  }
  return best ? { endpoint: best.c.endpoint, pathParams: best.params } : undefined;
}

/**
 * Raw parameters of a request (path parameters plus query), ready for the
 * entry's zod schema. Bare query flags of selectivemaster become `fields`.
 */
export function requestParams(match: PathMatch, query: URLSearchParams): Record<string, unknown> {
  const out: Record<string, unknown> = { ...match.pathParams };
  const flags: string[] = [];
  for (const [k, v] of query) {
    if (match.endpoint.query.includes('fields') && v === '') flags.push(k);
    else out[k] = v;
  }
  if (flags.length) out.fields = flags;
  return out;
}
