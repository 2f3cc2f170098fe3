import { describe, expect, it } from 'vitest';
import type { Change } from '../../src/client/index.js';
import type { AnyRow } from '../../src/client/rows.js';
import { Table, moreLine } from '../../src/cli/table.js';
import { cursorUps, fakeIo, frames, lastFrame } from './io.js';

/** The live table of `tail`, drawn into a recorded terminal (`close()` draws what is pending at once). */

const row = (price: number) => ({ trdPrc: price, cmpprevddPrc: 100, accTrdvol: 1000, trdTm: '100000' }) as unknown as AnyRow;
const change = (seq: number) => ({ seq }) as Change;
const lines = (frame: string) => frame.split('\n').filter((l) => l !== '');

describe('the table of tail', () => {
  // A redraw moves the cursor up by the lines drawn last; above the screen's top it cannot go, so a taller table scrolled by its height each time.
  it('is never taller than the terminal: the topics that do not fit are counted on one line', () => {
    const f = fakeIo({}, true, { rows: 10 });
    const t = new Table(f.io);
    for (let i = 0; i < 50; i++) t.update(`quote.kosdaq.${String(i).padStart(6, '0')}`, row(1000 + i), change(i + 1));
    t.status('quote.kosdaq', 'live', undefined);
    t.close();
    t.update('quote.kosdaq.000000', row(999), change(60));
    t.close();
    const drawn = frames(f.out());
    expect(drawn).toHaveLength(2);
    for (const frame of drawn) {
      // Nine lines and the cursor on the tenth: the first line drawn stays on the screen.
      expect(lines(frame)).toEqual([
        expect.stringMatching(/^topic\s+price/),
        ...Array.from({ length: 6 }, (_, i) => expect.stringMatching(new RegExp(`^quote\\.kosdaq\\.00000${i} `))),
        moreLine(44),
        'quote.kosdaq: live',
      ]);
    }
    expect(cursorUps(f.out())).toEqual([9]);
    expect(moreLine(44)).toBe('… and 44 more topics (pipe the output for every change as JSON)');
  });

  it('draws every topic when they fit, and at least its first line on a tiny terminal', () => {
    const f = fakeIo({}, true, { rows: 5 });
    const t = new Table(f.io);
    for (let i = 0; i < 3; i++) t.update(`price.kospi.00000${i}`, row(1000), change(1));
    t.close();
    expect(lines(lastFrame(f.out()))).toHaveLength(4);
    t.status('price.kospi', 'live', undefined);
    t.status('quote.kospi', 'live', undefined);
    t.close();
    expect(lines(lastFrame(f.out()))).toEqual([expect.stringMatching(/^topic/), moreLine(3), 'price.kospi: live', 'quote.kospi: live']);
    const g = fakeIo({}, true, { rows: 1 });
    const u = new Table(g.io);
    u.update('price.kospi.005930', row(1000), change(1));
    u.status('price.kospi', 'live', undefined);
    u.close();
    expect(lines(lastFrame(g.out()))).toEqual([expect.stringMatching(/^topic/)]);
  });

  it('says while the connection is not open, and shows no feed as live then', () => {
    const f = fakeIo({}, true);
    const t = new Table(f.io);
    t.update('price.kospi.005930', row(1000), change(1));
    t.status('price.kospi', 'live', undefined);
    t.close();
    expect(lastFrame(f.out())).toMatch(/price\.kospi: live\n$/);
    t.connection('reconnecting', 'closed 1006; attempt 2');
    t.close();
    expect(lines(lastFrame(f.out())).slice(-2)).toEqual(['price.kospi: not connected', 'connection: reconnecting (closed 1006; attempt 2)']);
    // Open again: the bridge sends each feed's state anew.
    t.connection('open', 'closed 1006; attempt 2');
    t.status('price.kospi', 'live', undefined);
    t.close();
    expect(lastFrame(f.out())).not.toContain('connection:');
    expect(lastFrame(f.out())).toMatch(/price\.kospi: live\n$/);
  });
});
