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
 * The demo page reopened after the 15:30 close, in Chromium. The bridge's
 * clock (and its simulator's) reads Friday 15:30:40 KST: the closing
 * auction's price (15:30:00) is every symbol's row. The board shows it, and
 * so must the chart's last candle: the row comes while the chart loads the
 * symbol's history, and the chart dropped a row that came then, so its
 * last candle stayed the last intraday bar's (another price). Screenshot:
 * test-results/demo-close.png.
 */

const FRIDAY_AFTER_CLOSE = Date.parse('2026-11-27T15:30:40+09:00');

let outDir: string;
let bridge: Bridge;
let browser: Browser;
let page: Page;
const problems: string[] = [];

beforeAll(async () => {
  outDir = await mkdtemp(join(tmpdir(), 'krx-demo-close-'));
  await buildDemo({ outDir, sourcemap: false });
  const start = Date.now();
  const now = () => FRIDAY_AFTER_CLOSE + (Date.now() - start);
  bridge = await createBridge(
    defaultConfig({ PORT: 0, HOST: '127.0.0.1', LOG_LEVEL: 'silent', STATE: 'off', RECORD: 'off', MARKET_CLOCK: 'kst', SIM_CLOCK: 'kst' }),
    {
      staticDir: outDir,
      now,
      simulator: { now },
    },
  );
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  page.on('pageerror', (e) => problems.push(e.message));
  page.on('console', (m) => m.type() === 'error' && problems.push(`console: ${m.text()}`));
  await page.goto(`${bridge.address.url}/`);
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await bridge?.stop();
  if (outDir) await rm(outDir, { recursive: true, force: true });
});

describe('the demo page after the close', () => {
  it('ends the chart at the closing price the board shows', async () => {
    await page.waitForFunction(() => Number(document.querySelector('#chart')?.getAttribute('data-bars')) > 0, undefined, { timeout: 30_000 });
    const selected = page.locator('#board tbody tr').first();
    await expect.poll(async () => (await selected.locator('.col-time').textContent())?.trim(), { timeout: 10_000 }).toBe('15:30:00');
    const board = Number((await selected.locator('.col-price').textContent())!.replace(/,/g, ''));
    await expect.poll(async () => Number(await page.getAttribute('#chart', 'data-last')), { timeout: 5_000 }).toBe(board);
    await page.screenshot({ path: join(RESULTS_DIR, 'demo-close.png') });
    expect(problems).toEqual([]);
  }, 60_000);
});
