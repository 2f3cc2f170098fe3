import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { RESULTS_DIR } from './chromium.js';
import { clockedDemo, type ClockedDemo } from './clocked.js';

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

let demo: ClockedDemo;
let page: Page;
let problems: string[];

beforeAll(async () => {
  demo = await clockedDemo(FRIDAY_AFTER_CLOSE, { SIM_CLOCK: 'kst' });
  ({ page, problems } = demo);
}, 90_000);

afterAll(() => demo?.stop());

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
