import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { buildDemo } from '../../scripts/build-demo.js';
import { Bridge } from '../../src/bridge.js';
import { defaultConfig } from '../../src/config/config.js';
import { RESULTS_DIR, launchChromium } from './chromium.js';

/**
 * The demo page on a closed market, in Chromium: the bridge's clock reads a
 * Saturday noon (KST), so its feeds fetch the last state once and say
 * `closed`. The page keeps the board, book and chart, and its header says
 * when the market opens. Screenshot: test-results/demo-closed.png.
 */

const SATURDAY_NOON = Date.parse('2026-11-28T12:00:00+09:00');

let outDir: string;
let bridge: Bridge;
let browser: Browser;
let page: Page;
const problems: string[] = [];

beforeAll(async () => {
  outDir = await mkdtemp(join(tmpdir(), 'krx-demo-closed-'));
  await buildDemo({ outDir, sourcemap: false });
  const start = Date.now();
  // The bridge's clock runs from Saturday noon; the simulator answers as it does any day.
  bridge = new Bridge(defaultConfig({ PORT: 0, HOST: '127.0.0.1', LOG_LEVEL: 'silent', STATE: 'off', RECORD: 'off', MARKET_CLOCK: 'kst' }), {
    staticDir: outDir,
    now: () => SATURDAY_NOON + (Date.now() - start),
  });
  const { url } = await bridge.start();
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  page.on('pageerror', (e) => problems.push(e.message));
  page.on('console', (m) => m.type() === 'error' && problems.push(`console: ${m.text()}`));
  await page.goto(`${url}/`);
}, 60_000);

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
    expect(marker).toMatch(/^Closed · opens Mon 08:30 · as of Sat \d\d:\d\d$/);
    await expect
      .poll(async () => page.$$eval('#board tbody tr .col-price', (els) => els.filter((e) => /^\d{1,3}(,\d{3})*$/.test(e.textContent ?? '')).length), { timeout: 10_000 })
      .toBe(10);
    await page.waitForFunction(() => document.querySelector('#book')?.getAttribute('data-levels') === '20', undefined, { timeout: 10_000 });
    await page.waitForFunction(() => Number(document.querySelector('#chart')?.getAttribute('data-bars')) > 0, undefined, { timeout: 10_000 });
    // Nothing is presented as live: every feed the panel shows is closed.
    const states = await page.$$eval('.feeds li[data-state]', (els) => els.map((e) => e.getAttribute('data-state')));
    expect(states.length).toBeGreaterThan(0);
    expect(new Set(states)).toEqual(new Set(['closed']));
    await page.screenshot({ path: join(RESULTS_DIR, 'demo-closed.png') });
    expect(problems).toEqual([]);
  }, 40_000);
});
