import { describe, expect, it } from 'vitest';
import { Budget, nextReset, type BudgetSnapshot } from '../../src/upstream/budget.js';

const T = (iso: string) => Date.parse(iso);

describe('nextReset', () => {
  it.each([
    ['2024-03-04T08:59:59.999+09:00', '2024-03-04T00:00:00.000Z'],
    ['2024-03-04T09:00:00.000+09:00', '2024-03-05T00:00:00.000Z'],
    ['2024-03-04T00:00:00.001Z', '2024-03-05T00:00:00.000Z'],
    ['2024-03-04T23:59:59.999Z', '2024-03-05T00:00:00.000Z'],
    ['2024-02-29T15:30:00.000+09:00', '2024-03-01T00:00:00.000Z'],
    ['2024-12-31T23:00:00.000Z', '2025-01-01T00:00:00.000Z'],
  ])('%s -> %s', (now, reset) => {
    expect(new Date(nextReset(T(now))).toISOString()).toBe(reset);
  });
});

describe('Budget', () => {
  const t0 = T('2024-03-04T10:00:00+09:00');
  const reset = T('2024-03-05T00:00:00Z');

  it('knows nothing before the first response', () => {
    const b = new Budget();
    expect(b.snapshot()).toStrictEqual({ limit: null, remaining: null, resetAt: null, observedAt: null });
    expect(b.isExhausted(t0)).toBe(false);
  });

  it('follows the headers across responses, in any letter case', () => {
    const b = new Budget();
    const seen: BudgetSnapshot[] = [];
    b.on('change', (s) => seen.push(s));
    b.update({ 'x-ratelimit-limit-day': '50000', 'x-ratelimit-remaining-day': '49999' }, t0);
    expect(b.snapshot()).toStrictEqual({ limit: 50000, remaining: 49999, resetAt: reset, observedAt: t0 });
    b.update({ 'X-RateLimit-Limit-Day': '50000', 'X-RateLimit-Remaining-Day': '49990' }, t0 + 1000);
    expect(b.remaining).toBe(49990);
    b.update(new Headers({ 'X-RATELIMIT-REMAINING-DAY': '49980' }), t0 + 2000);
    expect(b.remaining).toBe(49980);
    expect(b.limit).toBe(50000);
    expect(b.observedAt).toBe(t0 + 2000);
    b.update({ 'x-ratelimit-remaining-day': ['49970', '1'] }, t0 + 3000);
    expect(b.remaining).toBe(49970);
    expect(seen.map((s) => s.remaining)).toStrictEqual([49999, 49990, 49980, 49970]);
  });

  it('ignores absent and garbage values', () => {
    const b = new Budget();
    b.update({ 'x-ratelimit-limit-day': '100', 'x-ratelimit-remaining-day': '40' }, t0);
    for (const bad of ['', 'abc', '-1', '1.5', '1e3', ' ']) {
      b.update({ 'x-ratelimit-limit-day': bad, 'x-ratelimit-remaining-day': bad }, t0 + 5);
    }
    b.update({ 'content-type': 'application/json' }, t0 + 6);
    expect(b.snapshot()).toStrictEqual({ limit: 100, remaining: 40, resetAt: reset, observedAt: t0 });
    b.update({ 'x-ratelimit-remaining-day': ' 39 ' }, t0 + 7);
    expect(b.remaining).toBe(39);
  });

  it('is exhausted after a 429 until the reset, then starts a new day', () => {
    const b = new Budget();
    b.update({ 'x-ratelimit-limit-day': '100', 'x-ratelimit-remaining-day': '3' }, t0);
    b.exhaust(t0 + 10);
    expect(b.remaining).toBe(0);
    expect(b.resetAt).toBe(reset);
    expect(b.isExhausted(t0 + 10)).toBe(true);
    expect(b.isExhausted(reset - 1)).toBe(true);
    expect(b.isExhausted(reset)).toBe(false);
    expect(b.remaining).toBe(100);
    expect(b.resetAt).toBe(nextReset(reset));
  });

  it('stays at zero when a response that was in flight reports more left', () => {
    const b = new Budget();
    b.update({ 'x-ratelimit-limit-day': '100', 'x-ratelimit-remaining-day': '5' }, t0);
    b.exhaust(t0 + 1);
    b.update({ 'x-ratelimit-limit-day': '100', 'x-ratelimit-remaining-day': '4' }, t0 + 2);
    expect(b.remaining).toBe(0);
    expect(b.isExhausted(t0 + 3)).toBe(true);
    // the next day's headers count again
    b.update({ 'x-ratelimit-limit-day': '100', 'x-ratelimit-remaining-day': '99' }, reset + 1);
    expect(b.remaining).toBe(99);
    expect(b.isExhausted(reset + 2)).toBe(false);
  });

  it('leaves out the count of a response whose request was sent before the reset it arrived after: it is the day before', () => {
    const b = new Budget();
    const hdr = (limit: number, left: number) => ({ 'x-ratelimit-limit-day': String(limit), 'x-ratelimit-remaining-day': String(left) });
    const reset = Date.parse('2026-11-25T00:00:00Z'); // 09:00 KST
    b.update(hdr(50_000, 106), reset - 60_000);
    // A call sent 300 ms before the reset, answered 278 ms after it, with the old day's count.
    b.update(hdr(50_000, 105), reset + 278, reset - 300);
    expect(b.snapshot()).toMatchObject({ limit: 50_000, remaining: 50_000, resetAt: reset + 86_400_000 });
    // A 429 of that day does not spend the new one either.
    b.exhaust(reset + 300, reset - 200);
    expect(b.isExhausted(reset + 301)).toBe(false);
    // The next response, sent after the reset, counts.
    b.update(hdr(50_000, 49_990), reset + 1_000, reset + 900);
    expect(b.remaining).toBe(49_990);
    b.exhaust(reset + 2_000, reset + 1_500);
    expect(b.isExhausted(reset + 2_001)).toBe(true);
  });

  it('is exhausted when the headers say zero are left', () => {
    const b = new Budget();
    b.update({ 'x-ratelimit-remaining-day': '0' }, t0);
    expect(b.isExhausted(t0)).toBe(true);
    expect(b.limit).toBeNull();
    expect(b.isExhausted(reset)).toBe(false);
    expect(b.remaining).toBeNull();
  });

  it('restores a snapshot another process saved', () => {
    const a = new Budget();
    a.update({ 'x-ratelimit-limit-day': '50000', 'x-ratelimit-remaining-day': '7' }, t0);
    a.exhaust(t0 + 1);
    const shared = JSON.parse(JSON.stringify(a.snapshot())) as BudgetSnapshot;
    const b = new Budget();
    let changes = 0;
    b.on('change', () => changes++);
    b.restore(shared);
    expect(changes).toBe(1);
    expect(b.snapshot()).toStrictEqual(a.snapshot());
    expect(b.isExhausted(t0 + 2)).toBe(true);
    expect(b.isExhausted(reset)).toBe(false);
  });

  it('refuses a snapshot that is not one, changing nothing', () => {
    const b = new Budget();
    b.update({ 'x-ratelimit-limit-day': '10', 'x-ratelimit-remaining-day': '5' }, t0);
    const before = b.snapshot();
    for (const bad of [null, 'x', { limit: 'a', remaining: 1, resetAt: 1, observedAt: 1 }, { limit: 1, remaining: -1, resetAt: 1, observedAt: 1 }, {}]) {
      expect(() => b.restore(bad as unknown as BudgetSnapshot)).toThrow(TypeError);
    }
    expect(b.snapshot()).toStrictEqual(before);
  });

  it('survives a listener that throws', () => {
    const b = new Budget();
    b.on('change', () => {
      throw new Error('listener');
    });
    b.update({ 'x-ratelimit-remaining-day': '3' }, t0);
    expect(b.remaining).toBe(3);
  });
});
