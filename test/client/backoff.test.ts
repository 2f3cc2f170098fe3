import { describe, expect, it } from 'vitest';
import { Backoff } from '../../src/client/backoff.js';
import { seeded } from './helpers.js';

describe('Backoff', () => {
  it('ceilings grow by the factor from the minimum and stop at the maximum', () => {
    const b = new Backoff({ random: () => 0 });
    const ceilings: number[] = [];
    for (let i = 0; i < 9; i++) {
      ceilings.push(b.ceiling());
      b.next();
    }
    expect(ceilings).toEqual([250, 500, 1000, 2000, 4000, 8000, 15000, 15000, 15000]);
  });

  it('full jitter: each delay is uniform below its ceiling', () => {
    const top = new Backoff({ random: () => 0.999999 });
    const bottom = new Backoff({ random: () => 0 });
    const half = new Backoff({ random: () => 0.5 });
    expect([top.next(), top.next(), top.next()]).toEqual([249, 499, 999]);
    expect([bottom.next(), bottom.next()]).toEqual([0, 0]);
    expect([half.next(), half.next(), half.next()]).toEqual([125, 250, 500]);
  });

  it('delays stay within bounds and actually spread (seeded)', () => {
    const b = new Backoff({ minDelayMs: 100, maxDelayMs: 3000, factor: 3, random: seeded(7) });
    const seen: number[] = [];
    for (let i = 0; i < 200; i++) {
      const c = b.ceiling();
      const d = b.next();
      expect(d).toBeGreaterThanOrEqual(0);
      expect(d).toBeLessThan(c);
      expect(c).toBeLessThanOrEqual(3000);
      if (c === 3000) seen.push(d);
    }
    expect(Math.min(...seen)).toBeLessThan(1000);
    expect(Math.max(...seen)).toBeGreaterThan(2000);
  });

  it('reset starts the sequence over', () => {
    const b = new Backoff({ random: () => 0.5 });
    b.next();
    b.next();
    b.next();
    expect(b.attempt).toBe(3);
    b.reset();
    expect(b.attempt).toBe(0);
    expect(b.next()).toBe(125);
  });

  it('a penalty jumps ahead and never comes back quickly', () => {
    const b = new Backoff({ random: () => 0 });
    // First penalty: ceiling 250·2^4 = 4000, at least half of it.
    expect(b.penalty()).toBe(2000);
    // A second one reaches the maximum: at least 7.5 s.
    expect(b.penalty()).toBe(7500);
    const worst = new Backoff({ random: () => 0.999 });
    expect(worst.penalty()).toBeLessThan(4000);
  });

  it('a restart is prompt, spread over restartSpreadMs, and resets the sequence', () => {
    const b = new Backoff({ random: () => 0.5, restartSpreadMs: 800 });
    b.next();
    b.next();
    expect(b.restart()).toBe(400);
    expect(b.attempt).toBe(0);
    expect(b.next()).toBe(125);
  });
});
