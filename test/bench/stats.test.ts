import { describe, expect, it } from 'vitest';
import { LatencyHistogram, SeqTracker, emptyTotals, median, percentile, summarise } from '../../bench/lib/stats.js';

describe('percentile', () => {
  it('interpolates between closest ranks', () => {
    const s = [10, 20, 30, 40, 50];
    expect(percentile(s, 0)).toBe(10);
    expect(percentile(s, 50)).toBe(30);
    expect(percentile(s, 100)).toBe(50);
    expect(percentile(s, 25)).toBe(20);
    expect(percentile(s, 90)).toBeCloseTo(46);
    expect(percentile([1, 2], 50)).toBe(1.5);
  });

  it('is NaN with no samples and the sample itself with one', () => {
    expect(percentile([], 50)).toBeNaN();
    expect(percentile([7], 99)).toBe(7);
  });
});

describe('median', () => {
  it('sorts, ignores NaN, and averages the middle pair', () => {
    expect(median([5, 1, 3])).toBe(3);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([NaN, 2, NaN])).toBe(2);
    expect(median([])).toBeNaN();
  });
});

describe('LatencyHistogram', () => {
  it('reports percentiles within 1% and exact extremes', () => {
    const h = new LatencyHistogram();
    for (let i = 1; i <= 1000; i++) h.record(i / 10); // 0.1 … 100 ms
    expect(h.count).toBe(1000);
    expect(h.min).toBe(0.1);
    expect(h.max).toBe(100);
    expect(h.percentile(50)).toBeGreaterThanOrEqual(50);
    expect(h.percentile(50)).toBeLessThanOrEqual(50 * 1.01);
    expect(h.percentile(99)).toBeGreaterThanOrEqual(99);
    expect(h.percentile(99)).toBeLessThanOrEqual(99 * 1.01);
    expect(h.percentile(100)).toBe(100);
    expect(h.mean).toBeCloseTo(50.05, 5);
  });

  it('weights samples, counts negatives in the first bucket, and resets', () => {
    const h = new LatencyHistogram();
    h.record(1, 99);
    h.record(1000, 1);
    expect(h.percentile(99)).toBeCloseTo(1, 1);
    expect(h.percentile(99.5)).toBe(1000);
    h.record(-0.5);
    expect(h.negative).toBe(1);
    expect(h.min).toBe(-0.5);
    h.reset();
    expect(h.count).toBe(0);
    expect(h.percentile(50)).toBeNaN();
  });

  it('keeps huge samples in its last bucket', () => {
    const h = new LatencyHistogram();
    h.record(5e6);
    expect(h.percentile(50)).toBe(5e6);
  });
});

describe('SeqTracker', () => {
  it('counts in-order updates, gaps and what they skipped', () => {
    const t = new SeqTracker(4);
    t.baseline(1, 1);
    t.update(1, 2);
    t.update(1, 3);
    t.update(1, 7); // 4, 5, 6 lost
    t.update(1, 8);
    expect(t.totals).toEqual({ inOrder: 3, gaps: 1, lost: 3, outOfOrder: 0, unexpected: 0 });
    expect(t.lastSeq(1)).toBe(8);
  });

  it('counts duplicates and reordering without moving back', () => {
    const t = new SeqTracker(2);
    t.baseline(0, 5);
    t.update(0, 5);
    t.update(0, 4);
    t.update(0, 6);
    expect(t.totals.outOfOrder).toBe(2);
    expect(t.totals.inOrder).toBe(1);
    expect(t.lastSeq(0)).toBe(6);
  });

  it('takes a snapshot as the new baseline and flags an older one', () => {
    const t = new SeqTracker(2);
    t.baseline(0, 0);
    t.snapshot(0, 10);
    t.update(0, 11);
    t.snapshot(0, 9);
    expect(t.lastSeq(0)).toBe(11);
    expect(t.totals.outOfOrder).toBe(1);
    expect(t.totals.inOrder).toBe(1);
  });

  it('counts updates of slots never subscribed, and out-of-range slots', () => {
    const t = new SeqTracker(2);
    t.update(1, 1);
    t.update(5, 1);
    t.snapshot(5, 1);
    expect(t.totals.unexpected).toBe(3);
  });

  it('sums several clients into shared totals and measures tail loss', () => {
    const totals = emptyTotals();
    const a = new SeqTracker(3, totals);
    const b = new SeqTracker(3, totals);
    a.baseline(0, 1);
    b.baseline(0, 1);
    b.baseline(2, 1);
    a.update(0, 2);
    b.update(0, 2);
    b.update(2, 2);
    expect(totals.inOrder).toBe(3);
    const final = [4, 9, 2];
    // a misses 3 and 4 of slot 0; b misses the same; slot 1 is nobody's.
    expect(a.tailLoss((i) => final[i]!)).toBe(2);
    expect(b.tailLoss((i) => final[i]!)).toBe(2);
  });
});

describe('summarise', () => {
  it('gives NaN figures for an empty window and percentiles otherwise', () => {
    const h = new LatencyHistogram();
    expect(summarise(h)).toMatchObject({ count: 0, p50: NaN, max: NaN });
    h.record(2);
    h.record(4);
    const s = summarise(h);
    expect(s.count).toBe(2);
    expect(s.max).toBe(4);
    expect(s.mean).toBe(3);
    expect(s.p50).toBeCloseTo(2, 1);
  });
});
