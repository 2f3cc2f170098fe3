import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { buildDemo } from '../../scripts/build-demo.js';
import { createBridge, type Bridge } from '../../src/bridge/bridge.js';
import { defaultConfig } from '../../src/config/config.js';
import { RESULTS_DIR, launchChromium } from './chromium.js';

/**
 * The demo page on a closed market, in Chromium. The bridge's clock first
 * reads Friday 17:59:30 KST (after-hours trading: its feeds poll), so it
 * holds the board and the book; then it jumps to Saturday noon, and the page
 * is opened again: it shows the last board, book and chart, the header says
 * when the market opens, and no feed reads as live. Screenshot:
 * test-results/demo-closed.png.
 */

const FRIDAY_AFTER_HOURS = Date.parse('2026-11-27T17:59:30+09:00');
const SATURDAY_NOON = Date.parse('2026-11-28T12:00:00+09:00');

let outDir: string;
let bridge: Bridge;
let browser: Browser;
let page: Page;
let url: string;
const problems: string[] = [];
let base = FRIDAY_AFTER_HOURS;
let start = Date.now();

async function openPage(): Promise<Page> {
  const p = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  p.on('pageerror', (e) => problems.push(e.message));
  p.on('console', (m) => m.type() === 'error' && problems.push(`console: ${m.text()}`));
  await p.goto(`${url}/`);
  return p;
}

const boardPrices = (p: Page) => p.$$eval('#board tbody tr .col-price', (els) => els.filter((e) => /^\d{1,3}(,\d{3})*$/.test(e.textContent ?? '')).length);

beforeAll(async () => {
  outDir = await mkdtemp(join(tmpdir(), 'krx-demo-closed-'));
  await buildDemo({ outDir, sourcemap: false });
  // The simulator answers as it does any day (open) on Friday, whatever the real date: the chart asks for Friday's bars, which a simulator on an earlier day has not traded yet. The bridge's clock decides what is open.
  const simStart = Date.now();
  bridge = await createBridge(defaultConfig({ PORT: 0, HOST: '127.0.0.1', LOG_LEVEL: 'silent', STATE: 'off', RECORD: 'off', MARKET_CLOCK: 'kst' }), {
    staticDir: outDir,
    now: () => base + (Date.now() - start),
    simulator: { now: () => FRIDAY_AFTER_HOURS + (Date.now() - simStart) },
  });
  ({ url } = bridge.address);
  browser = await launchChromium();
  // The session: the page subscribes, and the bridge polls the board and the book.
  const session = await openPage();
  await session.waitForFunction(() => document.querySelector('#book')?.getAttribute('data-levels') === '20', undefined, { timeout: 20_000 });
  await session.waitForFunction(
    () => [...document.querySelectorAll('#board tbody tr .col-price')].filter((e) => /^\d{1,3}(,\d{3})*$/.test(e.textContent ?? '')).length === 10,
    undefined,
    { timeout: 10_000 },
  );
  await session.close();
  // The weekend.
  base = SATURDAY_NOON;
  start = Date.now();
  page = await openPage();
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await bridge?.stop();
  if (outDir) await rm(outDir, { recursive: true, force: true });
});

describe('the demo page on a closed market', () => {
  it('shows the last board, book and chart, marked closed with when the market opens', async () => {
    await page.waitForFunction(() => document.querySelectorAll('#board tbody tr').length === 10);
    await page.waitForFunction(() => !(document.querySelector('#market') as HTMLElement).hidden, undefined, { timeout: 15_000 });
    const marker = await page.textContent('#market .pill-text');
    // The data is Friday's, the last the bridge saw; the market opens on Monday at 09:00, not at the 08:30 pre-market.
    expect(marker).toMatch(/^Closed · opens Mon 09:00 · as of Fri 1[78]:\d\d$/);
    await expect.poll(() => boardPrices(page), { timeout: 10_000 }).toBe(10);
    await page.waitForFunction(() => document.querySelector('#book')?.getAttribute('data-levels') === '20', undefined, { timeout: 10_000 });
    await page.waitForFunction(() => Number(document.querySelector('#chart')?.getAttribute('data-bars')) > 0, undefined, { timeout: 10_000 });
    // Nothing is presented as live: every feed the panel shows is closed.
    const states = await page.$$eval('.feeds li[data-state]', (els) => els.map((e) => e.getAttribute('data-state')));
    expect(states.length).toBeGreaterThan(0);
    expect(new Set(states)).toEqual(new Set(['closed']));
    // A closed feed is not polled: no interval of 0 ms, and the budget's pace says nothing is polled.
    expect(new Set(await page.$$eval('.feeds li .feed-interval', (els) => els.map((e) => e.textContent)))).toEqual(new Set(['–']));
    expect(await page.textContent('#health .budget-interval')).toBe('not polling');
    // The chart's candles are Friday's, and its caption says so (the page's day is the bridge's, whatever this machine's clock).
    await expect.poll(() => page.textContent('#chart-hint'), { timeout: 10_000 }).toBe('1-minute candles · last session, Fri 27 Nov · KST');
    await page.screenshot({ path: join(RESULTS_DIR, 'demo-closed.png') });
    expect(problems).toEqual([]);
  }, 40_000);
});
