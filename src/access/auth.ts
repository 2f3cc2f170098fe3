import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { errors as joseErrors, jwtVerify } from 'jose';
import { LimitsOverride } from './limits.js';

/**
 * Access control of the WebSocket gateway and the HTTP passthrough: open by
 * default; optionally static tokens (inline or a token file), HMAC-signed
 * JWTs (HS256), and an allow-list of browser origins. Tokens come from
 * `Authorization: Bearer …` or `?token=`. Tokens are never logged; use
 * `tokenHash` to refer to one. See docs/OPERATIONS.md §Access control.
 */

/** A static token and what it grants. */
export interface StaticToken {
  readonly token: string;
  /** Client id reported for it; default `token:<hash prefix>`. */
  readonly id?: string;
  /** Per-connection limit overrides. */
  readonly limits?: LimitsOverride;
}

/** Access-control configuration. With no tokens, no token file and no JWT secret, access is open. */
export interface AuthOptions {
  /** Static tokens (plain strings or with limits). */
  readonly tokens?: readonly (string | StaticToken)[];
  /** A file of static tokens: one per line, `token` or `token {"maxTopics":50}`; `#` starts a comment. */
  readonly tokenFile?: string;
  /** Secret of HS256-signed JWTs; `exp`/`nbf` are checked, `sub` is the client id, a `limits` claim overrides limits. */
  readonly jwtSecret?: string;
  /** Required JWT issuer (`iss`), if set. */
  readonly jwtIssuer?: string;
  /** Required JWT audience (`aud`), if set. */
  readonly jwtAudience?: string;
  /** Allowed browser origins (e.g. `https://app.example.com`); a request with another `Origin` is refused. Unset: any. */
  readonly origins?: readonly string[];
  /** Tolerance of `exp`/`nbf` checks, seconds; default 0. */
  readonly clockToleranceSec?: number;
}

/** An accepted request: who it is and what limits its token carries. */
export interface AuthGranted {
  readonly ok: true;
  /** Client id: JWT `sub`, the static token's id, or undefined when access is open. */
  readonly clientId?: string;
  /** Hash prefix of the token presented, for logs. */
  readonly tokenHash?: string;
  /** Limit overrides of the token. */
  readonly limits?: LimitsOverride;
  /** When the token expires (ms epoch), for JWTs with `exp`. */
  readonly expiresAt?: number;
  /** For a static token: whether it is still configured (false once a re-read token file dropped it). */
  readonly stillValid?: () => boolean;
}

/** A refused request: HTTP 401 (token) or 403 (origin), with a short reason. */
export interface AuthRefused {
  readonly ok: false;
  readonly status: 401 | 403;
  readonly code: 'unauthorized' | 'forbidden_origin';
  readonly message: string;
}

/** The outcome of `authenticate`. */
export type AuthResult = AuthGranted | AuthRefused;

/** What `authenticate` reads of a request. */
export interface AuthRequest {
  readonly headers: IncomingHttpHeaders;
  readonly url?: string | undefined;
}

/** The first 12 hex digits of the SHA-256 of a token: safe to log, enough to tell tokens apart. */
export function tokenHash(token: string): string {
  return tokenDigest(token).slice(0, 12);
}

/**
 * The whole SHA-256 of a token (64 hex digits): static tokens are looked up
 * by it, so what is compared has one length whatever the token, and how long
 * a lookup takes tells nothing about how much of a guess was right.
 */
export function tokenDigest(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/**
 * Whether a token is a compact JWS in the one encoding of its bytes:
 * three parts of base64url without padding or stray low bits. Decoders
 * accept `sig=` and a last character with other unused bits as the same
 * bytes, so a token without `sub` (its client is its hash) could otherwise
 * be varied into several clients, each with its own lookup share.
 */
function canonicalJws(token: string): boolean {
  const parts = token.split('.');
  return parts.length === 3 && parts.every((p) => p.length > 0 && /^[\w-]+$/.test(p) && Buffer.from(p, 'base64url').toString('base64url') === p);
}

/** The token of a request: `Authorization: Bearer <token>` first, else the `token` query parameter. */
export function tokenOf(req: AuthRequest): string | undefined {
  const h = req.headers.authorization;
  if (typeof h === 'string') {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
    if (m) return m[1];
  }
  const url = req.url ?? '';
  const q = url.indexOf('?');
  if (q < 0) return undefined;
  const t = new URLSearchParams(url.slice(q + 1)).get('token');
  return t ? t : undefined;
}

function normaliseOrigin(o: string): string {
  return o.trim().replace(/\/+$/, '').toLowerCase();
}

/** Whether a request's `Origin` is allowed: no header (not a browser) or on the list; any when no list. */
export function originAllowed(origin: string | undefined, allowed: readonly string[] | undefined): boolean {
  if (allowed === undefined || origin === undefined) return true;
  const o = normaliseOrigin(origin);
  return allowed.some((a) => a === '*' || normaliseOrigin(a) === o);
}

/**
 * Parses a token file: one token per line, optionally followed by a JSON
 * object of limit overrides; blank lines and `#` comments are skipped.
 * Throws on a malformed line (a configuration error at start-up), naming
 * the line but not the token.
 */
export function parseTokenFile(text: string): StaticToken[] {
  const out: StaticToken[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (!line || line.startsWith('#')) continue;
    const m = /^(\S+)(?:\s+(\{.*\}))?$/.exec(line);
    if (!m) throw new Error(`token file line ${i + 1}: expected "token" or "token {json limits}"`);
    if (m[2] === undefined) {
      out.push({ token: m[1]! });
      continue;
    }
    let json: unknown;
    try {
      json = JSON.parse(m[2]);
    } catch {
      throw new Error(`token file line ${i + 1}: the limits are not valid JSON`);
    }
    const limits = LimitsOverride.safeParse(json);
    if (!limits.success) throw new Error(`token file line ${i + 1}: the limits are not valid`);
    out.push({ token: m[1]!, limits: limits.data });
  }
  return out;
}

const refuse = (message: string): AuthRefused => ({ ok: false, status: 401, code: 'unauthorized', message });

/** What a JWT claim that failed validation means for the client, by jose's claim name and reason. */
export function claimRefusal(claim: string, reason: string): string {
  const time = claim === 'exp' || claim === 'nbf' || claim === 'iat';
  if (time && reason === 'invalid') return `token claim "${claim}" must be a number (seconds since the epoch)`;
  if (claim === 'nbf') return 'token not valid yet';
  if (claim === 'aud') return 'token for another audience';
  if (claim === 'iss') return 'token from another issuer';
  if (claim === 'iat') return 'token issued in the future';
  return `token claim "${claim}" not valid`;
}

/** Checks requests against the configured tokens, JWT secret and origins. */
export class Authenticator {
  /** Static tokens by `tokenDigest`. */
  private tokens = new Map<string, StaticToken>();
  private readonly secret: Uint8Array | undefined;

  /** An authenticator for `opts`; reads `opts.tokenFile` now (throws if it cannot). */
  constructor(private readonly opts: AuthOptions = {}) {
    this.secret = opts.jwtSecret ? new TextEncoder().encode(opts.jwtSecret) : undefined;
    this.reload();
  }

  /** Whether requests must carry a token. */
  get required(): boolean {
    return this.tokens.size > 0 || this.secret !== undefined || this.opts.tokenFile !== undefined;
  }

  /**
   * Re-reads the token file (on SIGHUP); inline tokens stay. Throws, keeping
   * the tokens it had, when the file cannot be read or a line is malformed.
   * Returns how many static tokens are configured now.
   */
  reload(): number {
    const list: StaticToken[] = (this.opts.tokens ?? []).map((t) => (typeof t === 'string' ? { token: t } : t));
    if (this.opts.tokenFile) list.push(...parseTokenFile(readFileSync(this.opts.tokenFile, 'utf8')));
    this.tokens = new Map(list.map((t) => [tokenDigest(t.token), t]));
    return this.tokens.size;
  }

  /** Decides whether a request (WebSocket upgrade or HTTP) is allowed. */
  async authenticate(req: AuthRequest): Promise<AuthResult> {
    const origin = req.headers.origin;
    if (!originAllowed(typeof origin === 'string' ? origin : undefined, this.opts.origins)) {
      return { ok: false, status: 403, code: 'forbidden_origin', message: 'origin not allowed' };
    }
    if (!this.required) return { ok: true };
    const token = tokenOf(req);
    if (token === undefined) return refuse('token required');
    const digest = tokenDigest(token);
    const hash = digest.slice(0, 12);
    const stat = this.tokens.get(digest);
    if (stat !== undefined) {
      // A function, not the token: the grant is kept with the session, and nothing that logs it sees the token.
      const stillValid = () => this.tokens.has(digest);
      return { ok: true, clientId: stat.id ?? `token:${hash}`, tokenHash: hash, stillValid, ...(stat.limits ? { limits: stat.limits } : {}) };
    }
    if (this.secret === undefined || !canonicalJws(token)) return refuse('token not valid');
    return this.verifyJwt(token, hash);
  }

  private async verifyJwt(token: string, hash: string): Promise<AuthResult> {
    try {
      const { payload } = await jwtVerify(token, this.secret!, {
        algorithms: ['HS256'],
        ...(this.opts.jwtIssuer ? { issuer: this.opts.jwtIssuer } : {}),
        ...(this.opts.jwtAudience ? { audience: this.opts.jwtAudience } : {}),
        clockTolerance: this.opts.clockToleranceSec ?? 0,
      });
      let limits: LimitsOverride | undefined;
      if (payload.limits !== undefined) {
        const r = LimitsOverride.safeParse(payload.limits);
        if (!r.success) return refuse('token limits claim not valid');
        limits = r.data;
      }
      return {
        ok: true,
        clientId: typeof payload.sub === 'string' && payload.sub ? payload.sub : `jwt:${hash}`,
        tokenHash: hash,
        ...(limits ? { limits } : {}),
        ...(typeof payload.exp === 'number' ? { expiresAt: payload.exp * 1000 } : {}),
      };
    } catch (err) {
      if (err instanceof joseErrors.JWTExpired) return refuse('token expired');
      if (err instanceof joseErrors.JWTClaimValidationFailed) return refuse(claimRefusal(err.claim, err.reason));
      return refuse('token not valid');
    }
  }
}
