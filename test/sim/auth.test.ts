import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { ERROR_BODIES } from '../../src/upstream/wire.js';
import { startSim, type Running } from './helpers.js';

/**
 * The API key and the daily call budget.
 */

const PATH = '/v3/market/closed/kospi/005930/closeprice';
let s: Running | undefined;

afterEach(async () => {
  await s?.stop();
  s = undefined;
});

describe('api key', () => {
  it('answers 401 without a key or with a wrong one, and 200 with rate-limit headers with the right one', async () => {
    s = await startSim({ apiKey: 'k-123456' });
    const none = await s.get(PATH, {});
    expect([none.status, none.json()]).toEqual([401, ERROR_BODIES.noKey]);
    const wrong = await s.get(PATH, { apikey: 'nope' });
    expect([wrong.status, wrong.json()]).toEqual([401, ERROR_BODIES.badKey]);
    expect(wrong.headers['x-ratelimit-remaining-day']).toBeUndefined();
    const good = await s.get(PATH, { apikey: 'k-123456' });
    expect(good.status).toBe(200);
    expect(good.headers['x-ratelimit-limit-day']).toBe('50000');
    expect(good.headers['x-ratelimit-remaining-day']).toBe('49999');
    expect(good.text).not.toContain('k-123456');
  });

  it('answers 404 for unknown routes before checking the key, and control routes need no key', async () => {
    s = await startSim();
    const r = await s.get('/v9/nothing', {});
    expect([r.status, r.json()]).toEqual([404, ERROR_BODIES.notFound]);
    const h = await s.get('/_sim/health', {});
    expect(h.status).toBe(200);
    expect((h.json() as { ok: boolean }).ok).toBe(true);
    expect(s.sim.budget.remaining()).toBe(50_000);
  });
});

describe('daily limit', () => {
  it('answers 429 on the call after the limit, with remaining 0', async () => {
    s = await startSim({ dailyLimit: 5 });
    for (let i = 4; i >= 0; i--) {
      const r = await s.get(PATH);
      expect(r.status).toBe(200);
      expect(r.headers['x-ratelimit-remaining-day']).toBe(String(i));
    }
    const over = await s.get(PATH);
    expect([over.status, over.json()]).toEqual([429, ERROR_BODIES.rateLimited]);
    expect(over.headers['x-ratelimit-remaining-day']).toBe('0');
    expect(over.headers['x-ratelimit-limit-day']).toBe('5');
  });

  it('the 50,001st call of the day returns 429 (budget set through the control route)', async () => {
    s = await startSim();
    const set = await request(`${s.url}/_sim/budget`, { method: 'PUT', body: JSON.stringify({ remaining: 1 }) });
    expect(await set.body.json()).toEqual({ limit: 50_000, remaining: 1 });
    const last = await s.get(PATH);
    expect(last.status).toBe(200);
    expect(last.headers['x-ratelimit-remaining-day']).toBe('0');
    expect((await s.get(PATH)).status).toBe(429);
    const bad = await request(`${s.url}/_sim/budget`, { method: 'PUT', body: JSON.stringify({ remaining: -1 }) });
    expect(bad.statusCode).toBe(400);
    await bad.body.text();
  });

  it('resets at 00:00 GMT and does not count refused keys', async () => {
    let now = Date.parse('2025-06-04T23:59:58Z');
    s = await startSim({ dailyLimit: 2, now: () => now });
    await s.get(PATH, { apikey: 'wrong' });
    expect((await s.get(PATH)).status).toBe(200);
    expect((await s.get(PATH)).status).toBe(200);
    expect((await s.get(PATH)).status).toBe(429);
    now = Date.parse('2025-06-05T00:00:01Z');
    const next = await s.get(PATH);
    expect(next.status).toBe(200);
    expect(next.headers['x-ratelimit-remaining-day']).toBe('1');
  });
});
