import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ReplayRings, type FrameMaker, type RingPlace } from '../../src/state/ring.js';
import type { Row } from '../../src/upstream/normalise.js';

/** A holder of a ring as the store's entries are: its index and where it stands. */
function place(): RingPlace {
  return { ring: undefined, ringHead: 0, ringSize: 0, ringLast: 0 };
}

/** A new ring of `rings`, in a holder of its own. */
function added(rings: ReplayRings): RingPlace {
  const h = place();
  rings.add(h);
  return h;
}

/**
 * One ring of a `ReplayRings`, as the tests below use it: added between
 * two neighbours that are pushed to whenever it is, so a write past its
 * own slots would show in what they give.
 */
class ReplayRing {
  private readonly rings: ReplayRings;
  private readonly r: RingPlace;
  private readonly neighbours: RingPlace[];
  constructor(capacity: number) {
    this.rings = new ReplayRings(capacity);
    const before = added(this.rings);
    this.r = added(this.rings);
    this.neighbours = [before, added(this.rings)];
  }
  push(seq: number, frame: string): void {
    for (const n of this.neighbours) this.rings.push(n, seq, `other-${seq}`);
    this.rings.push(this.r, seq, frame);
  }
  pushRows(seq: number, ts: number, prev: Row, row: Row): void {
    for (const n of this.neighbours) this.rings.pushRows(n, seq, ts + 1, row, prev);
    this.rings.pushRows(this.r, seq, ts, prev, row);
  }
  oldest(): number | undefined {
    return this.rings.oldest(this.r);
  }
  since(after: number, latest: number, make: FrameMaker): string[] | undefined {
    return this.rings.since(this.r, after, latest, make);
  }
  covers(after: number, latest: number): boolean {
    return this.rings.covers(this.r, after, latest);
  }
  clear(): void {
    this.rings.clear(this.r);
  }
}

/** For rings given only frames: a change held as rows would be a mistake here. */
const NO_ROWS: FrameMaker = () => {
  throw new Error('no change was pushed as rows');
};

describe('ReplayRing', () => {
  const filled = (n: number, cap: number) => {
    const r = new ReplayRing(cap);
    for (let s = 2; s <= n; s++) r.push(s, `f${s}`);
    return r;
  };
  it('returns exactly the missed frames within capacity', () => {
    const r = filled(10, 32);
    expect(r.since(7, 10, NO_ROWS)).toEqual(['f8', 'f9', 'f10']);
    expect(r.since(1, 10, NO_ROWS)).toEqual(['f2', 'f3', 'f4', 'f5', 'f6', 'f7', 'f8', 'f9', 'f10']);
    expect(r.since(10, 10, NO_ROWS)).toEqual([]);
  });
  it('refuses a resume older than what it holds', () => {
    const r = filled(100, 8);
    expect(r.oldest()).toBe(93);
    expect(r.since(91, 100, NO_ROWS)).toBeUndefined();
    expect(r.since(92, 100, NO_ROWS)).toHaveLength(8);
  });
  it('refuses a seq ahead of the latest and an empty ring', () => {
    expect(filled(10, 32).since(11, 10, NO_ROWS)).toBeUndefined();
    expect(new ReplayRing(4).since(1, 3, NO_ROWS)).toBeUndefined();
  });
  it('refuses when the latest is not held', () => {
    const r = filled(10, 32);
    expect(r.since(5, 12, NO_ROWS)).toBeUndefined();
    expect(r.since(5, 9, NO_ROWS)).toBeUndefined();
  });
  it('after a gap in seqs, holds only the frames from the gap on', () => {
    const r = filled(6, 32);
    r.push(9, 'f9');
    r.push(10, 'f10');
    expect(r.oldest()).toBe(9);
    expect(r.since(5, 10, NO_ROWS)).toBeUndefined();
    expect(r.since(8, 10, NO_ROWS)).toEqual(['f9', 'f10']);
  });
});

describe('ReplayRing contents', () => {
  it('returns exactly the last frames pushed, for any capacity', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }),
        fc.array(fc.string({ maxLength: 300, unit: 'grapheme' }), { minLength: 1, maxLength: 200 }),
        (cap, frames) => {
          const r = new ReplayRing(cap);
          const pushed: string[] = [];
          frames.forEach((f, i) => {
            r.push(i + 1, f);
            pushed.push(f);
            const latest = i + 1;
            const held = Math.min(cap, latest);
            expect(r.oldest()).toBe(latest - held + 1);
            // covers says what since gives, for every seq around what the ring holds.
            for (let after = latest - held - 2; after <= latest + 1; after++) {
              for (const top of [latest - 1, latest, latest + 1]) expect(r.covers(after, top)).toBe(r.since(after, top, NO_ROWS) !== undefined);
            }
            expect(r.since(latest - held, latest, NO_ROWS)).toEqual(pushed.slice(latest - held));
            if (held > 1) expect(r.since(latest - 2, latest, NO_ROWS)).toEqual(pushed.slice(latest - 2));
          });
        },
      ),
      { numRuns: 300 },
    );
  });
  it('keeps frames of any sizes, for any capacity', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), fc.array(fc.nat({ max: 3000 }), { minLength: 1, maxLength: 300 }), (cap, sizes) => {
        const r = new ReplayRing(cap);
        const pushed = sizes.map((n, i) => `${i}:` + '한x'.repeat(n % 7 === 0 ? n : n % 97));
        pushed.forEach((f, i) => r.push(i + 1, f));
        const held = Math.min(cap, pushed.length);
        expect(r.since(pushed.length - held, pushed.length, NO_ROWS)).toEqual(pushed.slice(pushed.length - held));
      }),
      { numRuns: 200 },
    );
  });
  it('forgets everything on clear', () => {
    const r = new ReplayRing(4);
    r.push(1, 'a');
    r.clear();
    expect(r.oldest()).toBeUndefined();
    r.push(2, 'b');
    expect(r.since(1, 2, NO_ROWS)).toEqual(['b']);
  });
});

describe('ReplayRing of rows', () => {
  const make: FrameMaker = (seq, ts, prev, row) => JSON.stringify({ seq, ts, from: prev.v, to: row.v });
  const r = (v: number) => ({ isuSrtCd: '005930', v });

  it('makes the frame of a change held as rows when a resume asks, from the rows before and after it', () => {
    const ring = new ReplayRing(3);
    let prev = r(0);
    // Times before, near and far from the ring's base (an offset too large for a small integer included).
    const times = [0, 0, 1_002, 1_003, 999, 1_000 + 2 ** 40, 1_795_834_800_123];
    for (let seq = 2; seq <= 6; seq++) {
      const row = r(seq);
      ring.pushRows(seq, times[seq]!, prev, row);
      prev = row;
    }
    expect(ring.oldest()).toBe(4);
    expect(ring.since(3, 6, make)!.map((f) => JSON.parse(f))).toEqual([
      { seq: 4, ts: 999, from: 3, to: 4 },
      { seq: 5, ts: 1_000 + 2 ** 40, from: 4, to: 5 },
      { seq: 6, ts: 1_795_834_800_123, from: 5, to: 6 },
    ]);
    expect(ring.since(2, 6, make)).toBeUndefined();
  });

  it('keeps frames given as they are beside changes held as rows, in seq order', () => {
    const ring = new ReplayRing(4);
    ring.push(1, 'loaded-1');
    ring.push(2, 'loaded-2');
    ring.pushRows(3, 30, r(2), r(3));
    ring.push(4, 'loaded-4');
    expect(ring.since(0, 4, make)).toEqual(['loaded-1', 'loaded-2', make(3, 30, r(2), r(3)), 'loaded-4']);
    // The slot of a frame given as it is, reused for rows, makes its frame again (and the other way round).
    ring.pushRows(5, 50, r(4), r(5));
    ring.push(6, 'loaded-6');
    expect(ring.since(2, 6, make)).toEqual([make(3, 30, r(2), r(3)), 'loaded-4', make(5, 50, r(4), r(5)), 'loaded-6']);
  });

  it('after a gap or a clear, holds only what came after', () => {
    const ring = new ReplayRing(4);
    ring.pushRows(1, 10, r(0), r(1));
    ring.pushRows(3, 30, r(2), r(3));
    expect(ring.oldest()).toBe(3);
    expect(ring.since(0, 3, make)).toBeUndefined();
    expect(ring.since(2, 3, make)).toEqual([make(3, 30, r(2), r(3))]);
    ring.clear();
    expect(ring.oldest()).toBeUndefined();
    expect(ring.since(2, 3, make)).toBeUndefined();
  });
});

describe('ReplayRings side by side', () => {
  it('keeps every ring of a feed of a thousand topics apart, across the blocks they are added in', () => {
    // Rings of 40: 128 to a block, so the thousand span several blocks.
    const cap = 40;
    const rings = new ReplayRings(cap);
    const n = 1_100;
    const idx = Array.from({ length: n }, () => added(rings));
    expect(idx.map((h) => h.ring)).toEqual(Array.from({ length: n }, (_, r) => r));
    // Ring r gets r % 50 + 1 changes (some more than it holds), pushed round by round across all rings: frames on even rings, rows on odd ones.
    const changes = (r: number) => (r % 50) + 1;
    const make: FrameMaker = (seq, ts, prev, row) => `${String(prev.t)}>${String(row.t)}@${seq}/${ts}`;
    for (let seq = 1; seq <= 50; seq++) {
      for (let r = 0; r < n; r++) {
        if (seq > changes(r)) continue;
        if (r % 2 === 0) rings.push(idx[r]!, seq, `${r}:${seq}`);
        else rings.pushRows(idx[r]!, seq, 1_000 * r + seq, { t: `${r}.${seq - 1}` }, { t: `${r}.${seq}` });
      }
    }
    const oldest = (r: number) => changes(r) - Math.min(cap, changes(r)) + 1;
    for (let r = 0; r < n; r++) {
      const last = changes(r);
      const first = oldest(r);
      const want = Array.from({ length: last - first + 1 }, (_, k) => {
        const seq = first + k;
        return r % 2 === 0 ? `${r}:${seq}` : `${r}.${seq - 1}>${r}.${seq}@${seq}/${1_000 * r + seq}`;
      });
      expect(rings.since(idx[r]!, first - 1, last, make), `ring ${r}`).toEqual(want);
      expect(rings.oldest(idx[r]!)).toBe(first);
    }
    // A clear empties its ring alone, its neighbours across a block's end too.
    rings.clear(idx[127]!);
    rings.clear(idx[300]!);
    expect(rings.oldest(idx[127]!)).toBeUndefined();
    expect(rings.oldest(idx[300]!)).toBeUndefined();
    for (const r of [126, 128, 129, 255, 256, 299, 301]) expect(rings.oldest(idx[r]!), `ring ${r}`).toBe(oldest(r));
  });
  it('gives each ring exactly what was pushed to it, whatever the order of pushes, gaps, clears and growth', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.array(fc.tuple(fc.nat({ max: 40 }), fc.constantFrom('push', 'rows', 'gap', 'clear')), { minLength: 1, maxLength: 400 }),
        (cap, ops) => {
          const rings = new ReplayRings(cap);
          // The model: per ring, its last seq and the frames of its current run.
          const model: { r: RingPlace; last: number; run: string[] }[] = [];
          const make: FrameMaker = (seq, ts, prev, row) => `${String(prev.t)}>${String(row.t)}@${seq}/${ts}`;
          for (const [t, op] of ops) {
            // A topic seen for the first time gets its ring then, as the store adds them.
            while (model.length <= t % 20) model.push({ r: added(rings), last: 0, run: [] });
            const m = model[t % 20]!;
            if (op === 'clear') {
              rings.clear(m.r);
              m.run = [];
              continue;
            }
            const seq = m.last + (op === 'gap' ? 2 : 1);
            if (op === 'gap') m.run = [];
            m.last = seq;
            if (op === 'rows') {
              rings.pushRows(m.r, seq, 1_700_000_000_000 + seq, { t: `${t}a` }, { t: `${t}b` });
              m.run.push(`${t}a>${t}b@${seq}/${1_700_000_000_000 + seq}`);
            } else {
              rings.push(m.r, seq, `${t}:${seq}`);
              m.run.push(`${t}:${seq}`);
            }
            if (m.run.length > cap) m.run.shift();
          }
          for (const m of model) {
            const held = m.run.length;
            expect(rings.oldest(m.r)).toBe(held === 0 ? undefined : m.last - held + 1);
            if (held > 0) expect(rings.since(m.r, m.last - held, m.last, make)).toEqual(m.run);
            expect(rings.covers(m.r, m.last - held - 1, m.last)).toBe(false);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
