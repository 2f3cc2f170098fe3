import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { RESULTS_DIR } from './chromium.js';
import { clockedDemo, type ClockedDemo } from './clocked.js';

/**
 * The demo page across the 08:30 pre-market, in Chromium. The bridge's
 * clock (and its simulator's) reads Monday 08:29:50 KST: the market is
 * closed, and the page shows the last session's chart. At 08:30 the feeds
 * turn live, with rows whose time is hours before the chart's last bar: a
 * new day, so the chart loads its history again, and that history is still
 * the last session's. The chart must then start the day from nothing: it
 * loaded the history again with every row (four requests a second), until
 * the bridge refused the page (`rate_limited`), an uncaught error, and the
 * chart stayed empty. (Rows of the upstream's pre-market carry 00:00:00 as
 * their time, no trade yet; the chart ignores those, a unit test in
 * units.test.ts.) Screenshot: test-results/demo-premarket.png.
 */

const MONDAY_BEFORE_PREMARKET = Date.parse('2026-11-30T08:29:50+09:00');

let demo: ClockedDemo;
let page: Page;
let problems: string[];
/** Loads of the chart's history the page made: `get intraday` requests of its first page (the newest bars, no `to`). */
let intraday = 0;

describe('the demo page across the pre-market', () => {
  beforeAll(async () => {
    demo = await clockedDemo(MONDAY_BEFORE_PREMARKET, {}, (p) =>
      p.on('websocket', (ws) =>
        ws.on('framesent', (f) => typeof f.payload === 'string' && f.payload.includes('"intraday"') && !f.payload.includes('"to"') && intraday++),
      ),
    );
    ({ page, problems } = demo);
  }, 90_000);

  afterAll(() => demo?.stop());

  it('turns live at 08:30 and keeps its chart, asking for the history once, not again with every pre-market row', async () => {
    await page.waitForFunction(() => document.querySelectorAll('#board tbody tr').length === 10);
    // Before 08:30 the bridge has no book to show (none is provided at night, and it held none): the empty ladder says why.
    const why = page.locator('#book .book-why');
    await why.waitFor({ state: 'visible', timeout: 10_000 });
    expect(await why.textContent()).toMatch(/^market closed; no data to show until the session opens/);
    await page.screenshot({ path: join(RESULTS_DIR, 'demo-premarket-closed.png') });
    // Live from 08:30: the closed marker goes.
    await page.waitForFunction(() => (document.querySelector('#market') as HTMLElement).hidden, undefined, { timeout: 30_000 });
    const states = () => page.$$eval('.feeds li[data-state]', (els) => els.map((e) => e.getAttribute('data-state')));
    await expect.poll(states, { timeout: 10_000 }).toContain('live');
    // The book's levels; a failure says them, with every feed's state and reason as the page lists them.
    const book = () =>
      page.evaluate(() => ({
        levels: document.querySelector('#book')?.getAttribute('data-levels'),
        why: document.querySelector('#book .book-why')?.textContent,
        feeds: [...document.querySelectorAll('.feeds li[data-feed]')].map(
          (e) => `${e.getAttribute('data-feed')} ${e.getAttribute('data-state')} ${e.getAttribute('title')}`,
        ),
      }));
    try {
      await expect.poll(async () => (await book()).levels, { timeout: 10_000 }).toBe('20');
    } catch {
      throw new Error(`the book did not fill its 20 levels: ${JSON.stringify(await book())}`);
    }
    expect(await why.isHidden()).toBe(true);
    const before = intraday;
    // Ten seconds of pre-market rows, one a second per symbol.
    await page.waitForTimeout(10_000);
    expect(intraday - before).toBeLessThanOrEqual(1);
    expect(Number(await page.getAttribute('#chart', 'data-bars'))).toBeGreaterThan(0);
    await page.screenshot({ path: join(RESULTS_DIR, 'demo-premarket.png') });
    expect(problems).toEqual([]);
  }, 60_000);
});

/**
 * In the pre-market (the simulator on the KST clock, Monday 08:45), the
 * rows are live and no symbol has traded today (their time is 00:00:00),
 * while the intraday history is still the last session's: the chart shows
 * those bars, and its caption says whose they are.
 */
describe('the demo chart in the pre-market', () => {
  let pre: ClockedDemo;
  beforeAll(async () => {
    pre = await clockedDemo(Date.parse('2026-11-30T08:45:00+09:00'), { SIM_CLOCK: 'kst' });
  }, 90_000);
  afterAll(() => pre?.stop());

  it('captions the last session’s bars as such until the day’s first trade', async () => {
    const p = pre.page;
    await p.waitForFunction(() => document.querySelectorAll('#board tbody tr').length === 10);
    await p.waitForFunction(() => Number(document.querySelector('#chart')?.getAttribute('data-bars')) > 0, undefined, { timeout: 15_000 });
    await expect.poll(() => p.textContent('#chart-hint'), { timeout: 10_000 }).toBe('1-minute candles · last session, until the day’s first trade · KST');
    expect(pre.problems).toEqual([]);
  }, 40_000);
});
