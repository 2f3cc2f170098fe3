import { describe, expect, it } from 'vitest';
import { bounded } from '../../bench/lib/bounded.js';

describe('bounded', () => {
  it('runs every item with at most the limit in flight', async () => {
    let inFlight = 0;
    let most = 0;
    const done: number[] = [];
    await bounded([1, 2, 3, 4, 5, 6, 7], 3, async (i) => {
      inFlight++;
      most = Math.max(most, inFlight);
      // Yield, so the others start while this one is in flight.
      await new Promise((r) => setImmediate(r));
      done.push(i);
      inFlight--;
    });
    expect(done.sort()).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(most).toBe(3);
  });

  it('finishes at once with nothing to do', async () => {
    await expect(bounded([], 4, async () => undefined)).resolves.toBeUndefined();
  });
});
