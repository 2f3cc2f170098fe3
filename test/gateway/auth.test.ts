import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { SignJWT } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { Authenticator, originAllowed, parseTokenFile, tokenHash, tokenOf } from '../../src/access/auth.js';
import { createLogger } from '../../src/log.js';
import { Client, counter, startHarness, upgrade, type Harness } from './harness.js';

const SECRET = 'jwt-secret-for-tests-only-0123456789';
const key = new TextEncoder().encode(SECRET);

async function jwt(claims: Record<string, unknown>, expSec?: number, nbfSec?: number): Promise<string> {
  let b = new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setIssuedAt();
  if (expSec !== undefined) b = b.setExpirationTime(expSec);
  if (nbfSec !== undefined) b = b.setNotBefore(nbfSec);
  return b.sign(key);
}
const nowSec = () => Math.floor(Date.now() / 1000);

describe('auth units', () => {
  it('parses token files with limits and comments; refuses bad lines without echoing the token', () => {
    expect(parseTokenFile('# c\n\ntok-a\ntok-b {"maxTopics":50, "getsPerMinute": 10}\r\n')).toEqual([
      { token: 'tok-a' },
      { token: 'tok-b', limits: { maxTopics: 50, getsPerMinute: 10 } },
    ]);
    expect(() => parseTokenFile('sekrit {bad json}')).toThrow(/line 1/);
    expect(() => parseTokenFile('sekrit {bad json}')).not.toThrow(/sekrit/);
    expect(() => parseTokenFile('sekrit {"maxTopics":-1}')).toThrow(/line 1/);
  });
  it('reads the token from the Authorization header first, then ?token=', () => {
    expect(tokenOf({ headers: { authorization: 'Bearer abc' }, url: '/ws?token=q' })).toBe('abc');
    expect(tokenOf({ headers: {}, url: '/ws?x=1&token=q%20r' })).toBe('q r');
    expect(tokenOf({ headers: { authorization: 'Basic abc' }, url: '/ws' })).toBeUndefined();
  });
  it('origins: none listed = any; no Origin header = not a browser = allowed', () => {
    expect(originAllowed('https://evil.example', undefined)).toBe(true);
    expect(originAllowed(undefined, ['https://app.example'])).toBe(true);
    expect(originAllowed('https://APP.example/', ['https://app.example'])).toBe(true);
    expect(originAllowed('https://evil.example', ['https://app.example'])).toBe(false);
  });
  it('hashes tokens to a short prefix that does not contain them', () => {
    expect(tokenHash('abc')).toMatch(/^[0-9a-f]{12}$/);
    expect(tokenHash('abc')).not.toContain('abc');
  });
  it('verifies JWTs: exp, nbf, signature, limits claim, sub', async () => {
    const a = new Authenticator({ jwtSecret: SECRET });
    const req = (t: string) => ({ headers: { authorization: `Bearer ${t}` } });
    expect(await a.authenticate({ headers: {} })).toMatchObject({ ok: false, status: 401, message: 'token required' });
    const good = await a.authenticate(req(await jwt({ sub: 'bot-1', limits: { maxTopics: 5 } }, nowSec() + 60)));
    expect(good).toMatchObject({ ok: true, clientId: 'bot-1', limits: { maxTopics: 5 } });
    expect(await a.authenticate(req(await jwt({ sub: 'x' }, nowSec() - 10)))).toMatchObject({ ok: false, message: 'token expired' });
    expect(await a.authenticate(req(await jwt({ sub: 'x' }, nowSec() + 60, nowSec() + 30)))).toMatchObject({ ok: false, status: 401 });
    expect(await a.authenticate(req(await jwt({ sub: 'x', limits: { maxTopics: 'many' } })))).toMatchObject({ ok: false });
    const forged = await new SignJWT({ sub: 'x' }).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode('other-secret'));
    expect(await a.authenticate(req(forged))).toMatchObject({ ok: false, message: 'token not valid' });
  });
  it('refuses a JWT in another encoding of the same bytes (padding, stray bits): a token without sub cannot be varied into more clients', async () => {
    const a = new Authenticator({ jwtSecret: SECRET });
    const req = (t: string) => ({ headers: { authorization: `Bearer ${t}` } });
    const token = await jwt({}, nowSec() + 60);
    const ok = await a.authenticate(req(token));
    expect(ok).toMatchObject({ ok: true, clientId: expect.stringMatching(/^jwt:/) });
    const [h, p, sig] = token.split('.') as [string, string, string];
    // HS256: 32 bytes, 43 characters; the last carries two unused bits.
    const last = sig.at(-1)!;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const strayBits = alphabet[alphabet.indexOf(last) ^ 1]!;
    const variants = [`${token}=`, `${token}==`, `${h}.${p}.${sig.slice(0, -1)}${strayBits}`, `${h}=.${p}.${sig}`];
    for (const v of variants) {
      expect(Buffer.from(v.split('.')[2]!, 'base64url').equals(Buffer.from(sig, 'base64url')), v).toBe(true);
      expect(await a.authenticate(req(v)), v).toMatchObject({ ok: false, status: 401, message: 'token not valid' });
    }
  });
  it('is open by default', async () => {
    const a = new Authenticator();
    expect(a.required).toBe(false);
    expect(await a.authenticate({ headers: {} })).toEqual({ ok: true });
  });
});

describe('auth over WebSocket', () => {
  let h: Harness | undefined;
  const lines: string[] = [];
  afterEach(async () => {
    await h?.close();
    h = undefined;
    lines.length = 0;
  });

  async function start(): Promise<Harness> {
    const dir = mkdtempSync(join(tmpdir(), 'krx-auth-'));
    const file = join(dir, 'tokens');
    writeFileSync(file, 'file-token-small {"maxTopics":2}\n');
    const auth = new Authenticator({ tokens: ['static-token-1'], tokenFile: file, jwtSecret: SECRET, origins: ['https://app.example'] });
    const destination = new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    const logger = createLogger({ level: 'debug', destination });
    h = await startHarness({ auth, logger });
    return h;
  }

  it('refuses a missing or bad token with 401 and a JSON body, and a foreign origin with 403', async () => {
    const hh = await start();
    const none = await upgrade(hh.url);
    expect(none.status).toBe(401);
    expect(JSON.parse(none.body)).toEqual({ error: { code: 'unauthorized', message: 'token required' } });
    expect((await upgrade(hh.url, { Authorization: 'Bearer wrong-token' })).status).toBe(401);
    const expired = await upgrade(hh.url, { Authorization: `Bearer ${await jwt({ sub: 'x' }, nowSec() - 5)}` });
    expect(expired.status).toBe(401);
    expect(JSON.parse(expired.body).error.message).toBe('token expired');
    const origin = await upgrade(`${hh.url}?token=static-token-1`, { Origin: 'https://evil.example' });
    expect(origin.status).toBe(403);
    expect(JSON.parse(origin.body).error.code).toBe('forbidden_origin');
    expect((await upgrade(`${hh.url}?token=static-token-1`, { Origin: 'https://app.example' })).status).toBe(101);
    expect((await upgrade(`${hh.url}?token=static-token-1`)).status).toBe(101);
    expect(await counter(hh.metrics, 'krx_connections_total', { outcome: 'unauthorized' })).toBe(3);
    expect(await counter(hh.metrics, 'krx_connections_total', { outcome: 'forbidden_origin' })).toBe(1);
    expect(lines.join('')).not.toContain('wrong-token');
    expect(lines.join('')).not.toContain('static-token-1');
  });

  it('applies per-token limits from the token file and from a JWT claim', async () => {
    const hh = await start();
    const c = await Client.connect(hh.url, { headers: { Authorization: 'Bearer file-token-small' } });
    expect(c.msgs[0]!.limits.maxTopics).toBe(2);
    const e = await c.request({ op: 'subscribe', id: 1, channel: 'quote', market: 'kospi', codes: ['000001', '000002', '000003'] });
    expect(e).toMatchObject({ type: 'error', code: 'too_many_topics' });
    expect((await c.request({ op: 'subscribe', id: 2, channel: 'quote', market: 'kospi', codes: ['000001', '000002'] })).type).toBe('subscribed');
    c.close();
    const t = await jwt({ sub: 'dash-7', limits: { maxWildcards: 0, getsPerMinute: 1 } }, nowSec() + 60);
    const d = await Client.connect(`${hh.url}?token=${t}`);
    expect(d.msgs[0]!.limits).toMatchObject({ maxWildcards: 0, getsPerMinute: 1, maxTopics: 1000 });
    const w = await d.request({ op: 'subscribe', id: 1, channel: 'quote', market: 'kospi', codes: ['*'] });
    expect(w.code).toBe('too_many_topics');
    d.close();
    expect(lines.join('')).toContain(tokenHash('file-token-small'));
    expect(lines.join('')).not.toContain(t);
    expect(lines.join('')).not.toContain('file-token-small');
  });

  it('closes with 4001 when the JWT expires during the session', async () => {
    const hh = await start();
    // One to two seconds ahead: nowSec() + 1 could be a few ms away, and the token expired before the upgrade was checked (a CI run's connect took that long).
    const exp = Math.ceil(Date.now() / 1000) + 1;
    const c = await Client.connect(hh.url, { headers: { Authorization: `Bearer ${await jwt({ sub: 'short' }, exp)}` } });
    const closed = await c.closedWith(4000);
    expect(closed).toEqual({ code: 4001, reason: 'token expired' });
    expect(Date.now()).toBeGreaterThanOrEqual(exp * 1000 - 50);
    expect(await counter(hh.metrics, 'krx_server_closes_total', { code: '4001' })).toBe(1);
  });
});
