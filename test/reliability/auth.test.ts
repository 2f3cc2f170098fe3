import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createLogger } from '../../src/log.js';
import { TestClient, startBridge, until, type TestBridge } from '../bridge/helpers.js';
import { metric } from './helpers.js';

/**
 * Access control of a whole bridge, configured as an operator does:
 * AUTH_TOKENS, AUTH_TOKENS_FILE (with per-token limits), AUTH_JWT_SECRET
 * and ALLOWED_ORIGINS, over WebSocket and the /api passthrough.
 */

const SECRET = 'bridge-jwt-secret-0123456789abcdef';
const ORIGIN = 'https://app.example';

function jwt(claims: Record<string, unknown>, expSec?: number, secret = SECRET): Promise<string> {
  let b = new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setIssuedAt();
  if (expSec !== undefined) b = b.setExpirationTime(expSec);
  return b.sign(new TextEncoder().encode(secret));
}
const nowSec = () => Math.floor(Date.now() / 1000);

/** An upgrade attempt: 101 (then closed) or the refusal's status and JSON body. */
function upgrade(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.on('open', () => {
      ws.close();
      resolve({ status: 101, body: undefined });
    });
    ws.on('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += String(d)));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as unknown }));
    });
    ws.on('error', reject);
  });
}

/** A client whose welcome arrived, with its limits. */
async function welcomed(url: string, headers: Record<string, string> = {}): Promise<TestClient> {
  const c = await new TestClient(url, headers).ready();
  expect(c.closed).toBeUndefined();
  return c;
}

describe('bridge access control through configuration', () => {
  let tb: TestBridge;

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'krx-auth-'));
    const file = join(dir, 'tokens');
    writeFileSync(file, '# per-token limits\nfile-token-small {"maxTopics":2,"getsPerMinute":1}\nfile-token-plain\n');
    tb = await startBridge({
      AUTH_TOKENS: ['inline-token-1', 'inline-token-2'],
      AUTH_TOKENS_FILE: file,
      AUTH_JWT_SECRET: SECRET,
      ALLOWED_ORIGINS: [ORIGIN],
    });
    await until(() => tb.bridge.symbols.loaded('kospi'), 10_000, 'symbols');
  });
  afterAll(async () => {
    await tb?.bridge.stop();
  });

  it('refuses a missing, unknown, forged or expired token with 401 and a coded body', async () => {
    expect(await upgrade(tb.wsUrl)).toEqual({ status: 401, body: { error: { code: 'unauthorized', message: 'token required' } } });
    expect(await upgrade(tb.wsUrl, { Authorization: 'Bearer not-a-token' })).toMatchObject({ status: 401, body: { error: { code: 'unauthorized' } } });
    expect(await upgrade(`${tb.wsUrl}?token=not-a-token`)).toMatchObject({ status: 401 });
    const forged = await jwt({ sub: 'x' }, nowSec() + 60, 'another-secret-0123456789abcdef');
    expect(await upgrade(tb.wsUrl, { Authorization: `Bearer ${forged}` })).toMatchObject({ status: 401, body: { error: { message: 'token not valid' } } });
    const expired = await jwt({ sub: 'x' }, nowSec() - 5);
    expect(await upgrade(tb.wsUrl, { Authorization: `Bearer ${expired}` })).toMatchObject({ status: 401, body: { error: { message: 'token expired' } } });
    expect(await metric(tb.bridge.metrics, 'krx_connections_total', { outcome: 'unauthorized' })).toBeGreaterThanOrEqual(5);
  });

  it('accepts inline tokens, file tokens and JWTs, by header or query', async () => {
    for (const h of [{ Authorization: 'Bearer inline-token-1' }, { Authorization: 'Bearer file-token-plain' }]) (await welcomed(tb.wsUrl, h)).close();
    (await welcomed(`${tb.wsUrl}?token=inline-token-2`)).close();
    const t = await jwt({ sub: 'dashboard-1' }, nowSec() + 60);
    const c = await welcomed(`${tb.wsUrl}?token=${t}`);
    expect(await c.request({ op: 'subscribe', channel: 'quote', market: 'kospi', codes: ['005930'] })).toMatchObject({ type: 'subscribed' });
    c.close();
  });

  it('refuses a foreign browser origin with 403, even with a good token', async () => {
    const r = await upgrade(tb.wsUrl, { Authorization: 'Bearer inline-token-1', Origin: 'https://evil.example' });
    expect(r).toEqual({ status: 403, body: { error: { code: 'forbidden_origin', message: 'origin not allowed' } } });
    expect((await upgrade(tb.wsUrl, { Authorization: 'Bearer inline-token-1', Origin: ORIGIN })).status).toBe(101);
    expect(await metric(tb.bridge.metrics, 'krx_connections_total', { outcome: 'forbidden_origin' })).toBe(1);
  });

  it('applies per-token limits from the token file and from a JWT limits claim', async () => {
    const small = await welcomed(tb.wsUrl, { Authorization: 'Bearer file-token-small' });
    expect(small.ofType('welcome')[0]!.limits).toMatchObject({ maxTopics: 2, getsPerMinute: 1 });
    expect(await small.request({ op: 'subscribe', channel: 'quote', market: 'kospi', codes: ['005930', '000660', '035420'] })).toMatchObject({
      type: 'error',
      code: 'too_many_topics',
    });
    expect(await small.request({ op: 'subscribe', channel: 'quote', market: 'kospi', codes: ['005930', '000660'] })).toMatchObject({ type: 'subscribed' });
    expect(await small.request({ op: 'subscribe', channel: 'quote', market: 'kospi', codes: ['035420'] })).toMatchObject({ code: 'too_many_topics' });
    expect((await small.request({ op: 'get', resource: 'master', market: 'kospi', code: '005930' })).type).toBe('result');
    expect(await small.request({ op: 'get', resource: 'master', market: 'kospi', code: '000660' })).toMatchObject({ code: 'rate_limited' });
    small.close();
    const t = await jwt({ sub: 'bot-9', limits: { maxTopics: 1, maxWildcards: 0 } }, nowSec() + 60);
    const bot = await welcomed(tb.wsUrl, { Authorization: `Bearer ${t}` });
    expect(bot.ofType('welcome')[0]!.limits).toMatchObject({ maxTopics: 1, maxWildcards: 0 });
    expect(await bot.request({ op: 'subscribe', channel: 'quote', market: 'kospi', codes: ['005930', '000660'] })).toMatchObject({ code: 'too_many_topics' });
    expect(await bot.request({ op: 'subscribe', channel: 'quote', market: 'kospi', codes: ['*'] })).toMatchObject({ code: 'too_many_topics' });
    bot.close();
  });

  it('closes a session with 4001 when its JWT expires during it', async () => {
    const exp = nowSec() + 2;
    const c = await welcomed(tb.wsUrl, { Authorization: `Bearer ${await jwt({ sub: 'short' }, exp)}` });
    await until(() => c.closed !== undefined, 5000, 'close');
    expect(c.closed).toEqual({ code: 4001, reason: 'token expired' });
    expect(Date.now()).toBeGreaterThanOrEqual(exp * 1000 - 50);
    expect(await metric(tb.bridge.metrics, 'krx_server_closes_total', { code: '4001' })).toBe(1);
  });

  it('requires the token on the /api passthrough too (and the allowed origin)', async () => {
    const path = `${tb.url}/api/v2/market/stocks/kospi/005930/master`;
    const none = await fetch(path);
    expect(none.status).toBe(401);
    expect(await none.json()).toEqual({ error: { code: 'unauthorized', message: 'token required' } });
    expect((await fetch(path, { headers: { Authorization: 'Bearer wrong' } })).status).toBe(401);
    expect((await fetch(path, { headers: { Authorization: 'Bearer inline-token-1', Origin: 'https://evil.example' } })).status).toBe(403);
    const ok = await fetch(path, { headers: { Authorization: 'Bearer inline-token-1' } });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ data: { isuSrtCd: '005930' } });
    const byQuery = await fetch(`${path}?token=file-token-plain`);
    expect(byQuery.status).toBe(200);
    const t = await jwt({ sub: 'api-user' }, nowSec() + 60);
    expect((await fetch(path, { headers: { Authorization: `Bearer ${t}` } })).status).toBe(200);
  });
});

/**
 * A JWT that expires between its check and the WebSocket handshake: the
 * connection still gets `welcome` first (every connection does), then
 * close 4001. The gateway's clock runs 5 s ahead of the token checker's
 * to make that gap certain.
 */
describe('a token that expires during the handshake', () => {
  let tb: TestBridge;
  beforeAll(async () => {
    tb = await startBridge({ AUTH_JWT_SECRET: SECRET }, { now: () => Date.now() + 5000 });
  });
  afterAll(async () => {
    await tb?.bridge.stop();
  });

  it('gets welcome, then close 4001', async () => {
    const c = new TestClient(tb.wsUrl, { Authorization: `Bearer ${await jwt({ sub: 'late' }, nowSec() + 3)}` });
    await until(() => c.closed !== undefined, 5000, 'close');
    expect(c.closed).toEqual({ code: 4001, reason: 'token expired' });
    expect(c.messages.map((m) => m.type)).toEqual(['welcome']);
  });
});

describe('re-reading the token file (SIGHUP)', () => {
  let tb: TestBridge;
  let file: string;
  const lines: string[] = [];

  beforeAll(async () => {
    file = join(mkdtempSync(join(tmpdir(), 'krx-auth-')), 'tokens');
    writeFileSync(file, 'kept-token\nrevoked-token\n');
    const logger = createLogger({ level: 'info', destination: { write: (l: string) => void lines.push(l) } });
    tb = await startBridge({ AUTH_TOKENS: ['inline-token'], AUTH_TOKENS_FILE: file }, { logger });
  });
  afterAll(async () => {
    await tb?.bridge.stop();
  });

  it('applies the new tokens at once and closes sessions of removed tokens with 4001', async () => {
    const kept = await welcomed(tb.wsUrl, { Authorization: 'Bearer kept-token' });
    const revoked = await welcomed(tb.wsUrl, { Authorization: 'Bearer revoked-token' });
    const inline = await welcomed(tb.wsUrl, { Authorization: 'Bearer inline-token' });
    expect((await upgrade(tb.wsUrl, { Authorization: 'Bearer added-token' })).status).toBe(401);

    writeFileSync(file, 'kept-token\nadded-token {"maxTopics":3}\n');
    expect(tb.bridge.reloadTokens()).toBe(true);
    await until(() => revoked.closed !== undefined, 3000, 'the revoked session closed');
    expect(revoked.closed).toEqual({ code: 4001, reason: 'token revoked' });
    expect(kept.closed).toBeUndefined();
    expect(inline.closed).toBeUndefined();
    expect(await metric(tb.bridge.metrics, 'krx_server_closes_total', { code: '4001' })).toBe(1);
    expect((await upgrade(tb.wsUrl, { Authorization: 'Bearer revoked-token' })).status).toBe(401);
    const added = await welcomed(tb.wsUrl, { Authorization: 'Bearer added-token' });
    expect(added.ofType('welcome')[0]!.limits).toMatchObject({ maxTopics: 3 });
    expect(lines.some((l) => l.includes('"msg":"token file re-read"') && l.includes('"closed":1'))).toBe(true);
    for (const c of [kept, inline, added]) c.close();
  });

  it('keeps the tokens it has when the new file is malformed, and says which line, never the token', async () => {
    writeFileSync(file, 'kept-token\nsecret-token-xyz {not json}\n');
    expect(tb.bridge.reloadTokens()).toBe(false);
    const err = lines.find((l) => l.includes('token file not re-read'));
    expect(err).toContain('line 2');
    expect(lines.join('\n')).not.toContain('secret-token-xyz');
    (await welcomed(tb.wsUrl, { Authorization: 'Bearer added-token' })).close();
    expect((await upgrade(tb.wsUrl, { Authorization: 'Bearer secret-token-xyz' })).status).toBe(401);
  });
});
