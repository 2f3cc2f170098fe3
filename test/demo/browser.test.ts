import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDemo, type BuiltFile } from '../../scripts/build-demo.js';
import { createBridge, type Bridge } from '../../src/bridge/bridge.js';
import { defaultConfig } from '../../src/config/config.js';
import { RESULTS_DIR, launchChromium } from './chromium.js';

/**
 * The demo page in Chromium against a real bridge and its simulator: the
 * board streams, search adds a symbol, the book shows 10 levels a side, the
 * chart draws, the health panel shows the connection, feeds and budget; and
 * screenshots at desktop and phone widths (test-results/demo-*.png, copied
 * to docs/ by hand).
 */

let outDir: string;
let built: BuiltFile[];
let bridge: Bridge;
let url: string;
let browser: Browser;
let page: Page;
/** Uncaught exceptions, console errors (a Content-Security-Policy violation is one) and failed requests of the pages under test. */
const pageErrors: string[] = [];

function watch(p: Page): Page {
  p.on('pageerror', (e) => pageErrors.push(e.message));
  p.on('console', (m) => m.type() === 'error' && pageErrors.push(`console: ${m.text()}`));
  p.on('response', (r) => r.status() >= 400 && pageErrors.push(`${r.status()} ${r.url()}`));
  return p;
}

beforeAll(async () => {
  outDir = await mkdtemp(join(tmpdir(), 'krx-demo-'));
  built = await buildDemo({ outDir, sourcemap: false });
  bridge = await createBridge(defaultConfig({ PORT: 0, HOST: '127.0.0.1', LOG_LEVEL: 'silent', IDLE_GRACE_MS: 1000, STATE: 'off', RECORD: 'off' }), {
    staticDir: outDir,
  });
  url = bridge.address.url;
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  watch(page);
  await page.goto(`${url}/`);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await bridge?.stop();
  if (outDir) await rm(outDir, { recursive: true, force: true });
});

/** The board's codes and their displayed last prices, in display order. */
async function boardPrices(p: Page): Promise<[string, string][]> {
  return p.$$eval('#board tbody tr', (rows) => rows.map((r) => [(r as HTMLElement).dataset.code ?? '', r.querySelector('.col-price')?.textContent ?? '']));
}

/** Waits until a freshly opened page shows a full book and a drawn chart. */
async function loaded(p: Page): Promise<void> {
  await p.waitForFunction(() => document.querySelector('#book')?.getAttribute('data-levels') === '20', undefined, { timeout: 10_000 });
  await p.waitForFunction(() => Number(document.querySelector('#chart')?.getAttribute('data-bars')) > 0, undefined, { timeout: 10_000 });
}

const priced = (text: string) => /^\d{1,3}(,\d{3})*$/.test(text);

describe('the demo page', () => {
  it('is a lean build: page, app, styles, SDK bundle and the minimal example', () => {
    const size = Object.fromEntries(built.map((f) => [f.file, f.bytes]));
    expect(Object.keys(size).sort()).toEqual(['app.css', 'app.js', 'examples/minimal.html', 'index.html', 'sdk/krx-client.js']);
    // As in test/client/bundle.test.ts: about 40 kB minified, the bound there to catch a large addition.
    expect(size['sdk/krx-client.js']).toBeLessThan(42_000);
    expect(size['app.js']).toBeLessThan(300_000);
  });

  it('streams prices onto the board: ten KOSPI large caps, prices changing within seconds', async () => {
    await page.waitForFunction(() => document.querySelectorAll('#board tbody tr').length === 10);
    await expect.poll(async () => (await boardPrices(page)).every(([, p]) => priced(p)), { timeout: 10_000 }).toBe(true);
    const first = new Map(await boardPrices(page));
    expect([...first.keys()]).toEqual(['005930', '000660', '373220', '207940', '005380', '000270', '035420', '068270', '105560', '069500']);
    await expect
      .poll(async () => (await boardPrices(page)).filter(([code, p]) => first.get(code) !== p).length, { timeout: 10_000, interval: 250 })
      .toBeGreaterThan(0);
    const names = await page.$$eval('#board .sym-name', (els) => els.map((e) => e.textContent));
    expect(names[0]).toBe('삼성전자');
    const colour = await page.$eval('#board tbody tr .col-price', (td) => td.className);
    expect(colour).toMatch(/\b(up|down|flat)\b/);
  });

  it('sorts by a column when its header is clicked', async () => {
    await page.click('#board th.col-price button');
    expect(await page.getAttribute('#board th.col-price', 'aria-sort')).toBe('descending');
    await page.waitForTimeout(100);
    const prices = (await boardPrices(page)).map(([, p]) => Number(p.replace(/,/g, '')));
    expect(prices).toEqual([...prices].sort((a, b) => b - a));
    await page.click('#board th.col-name button');
    expect(await page.getAttribute('#board th.col-name', 'aria-sort')).toBe('ascending');
  });

  it('adds a symbol found by name (click) and one typed by code (Enter); both get prices', async () => {
    await page.fill('#search', '동화약품');
    const option = page.locator('#matches li[data-code="000020"]');
    await option.waitFor({ timeout: 5000 });
    expect(await page.getAttribute('#search', 'aria-expanded')).toBe('true');
    await option.click();
    await page.locator('#board tbody tr[data-code="000020"]').waitFor();
    await page.fill('#search', '000050');
    await page.press('#search', 'Enter');
    await page.locator('#board tbody tr[data-code="000050"]').waitFor({ timeout: 5000 });
    for (const code of ['000020', '000050']) {
      await expect.poll(() => page.textContent(`#board tr[data-code="${code}"] .col-price`), { timeout: 10_000 }).toMatch(/^\d{1,3}(,\d{3})*$/);
    }
    expect(await page.textContent('#board tr[data-code="000020"] .sym-name')).toBe('동화약품');
    expect(await page.textContent('#board tr[data-code="000050"] .sym-name')).toBe('경방');
    expect(await page.getAttribute('#board tr[data-code="000050"]', 'class')).toContain('selected');
  });

  it('shows the selected symbol: 10 book levels a side with bars, and a drawn intraday chart', async () => {
    await page.click('#board tr[data-code="000660"] .sym');
    await page.waitForFunction(() => document.querySelector('#book')?.getAttribute('data-levels') === '20', undefined, { timeout: 10_000 });
    const asks = await page.$$eval('#book .ask-row .p', (els) => els.map((e) => e.textContent ?? '').filter((t) => t !== ''));
    const bids = await page.$$eval('#book .bid-row .p', (els) => els.map((e) => e.textContent ?? '').filter((t) => t !== ''));
    expect(asks).toHaveLength(10);
    expect(bids).toHaveLength(10);
    const num = (s: string) => Number(s.replace(/,/g, ''));
    expect(num(asks[asks.length - 1]!)).toBeGreaterThan(num(bids[0]!));
    expect(await page.textContent('#book .ask-total')).toMatch(/^\d{1,3}(,\d{3})*$/);
    const bars = await page.$$eval('#book .bar', (els) => els.filter((e) => (e as HTMLElement).style.transform !== 'scaleX(0.0000)').length);
    expect(bars).toBeGreaterThan(10);
    expect(await page.textContent('#chart-title')).toContain('000660');
    await page.waitForFunction(() => Number(document.querySelector('#chart')?.getAttribute('data-bars')) > 0, undefined, { timeout: 10_000 });
    const inked = await page.$$eval('#chart canvas', (canvases) =>
      canvases.map((c) => {
        const cv = c as HTMLCanvasElement;
        const ctx = cv.getContext('2d');
        if (!ctx || cv.width === 0 || cv.height === 0) return 0;
        const px = ctx.getImageData(0, 0, cv.width, cv.height).data;
        let n = 0;
        for (let i = 0; i < px.length; i += 4) if (px[i + 3]! > 0 && (px[i]! > 150 || px[i + 2]! > 150)) n++;
        return n;
      }),
    );
    // Red and blue candle pixels, not just the grid.
    expect(Math.max(...inked)).toBeGreaterThan(200);
  });

  it('shows the connection, the feeds and the call budget', async () => {
    await page.waitForSelector('#conn[data-state="open"]');
    expect(await page.textContent('#conn')).toContain('Connected');
    await page.waitForSelector('#health li[data-feed="price.kospi"][data-state="live"]', { timeout: 10_000 });
    await page.waitForSelector('#health li[data-feed="book.kospi"][data-state="live"]', { timeout: 10_000 });
    expect(await page.textContent('#health li[data-feed="price.kospi"] .feed-interval')).toMatch(/^\d+(\.\d)? (s|ms)$/);
    await expect.poll(() => page.textContent('#health .budget-remaining'), { timeout: 10_000 }).toMatch(/^[\d,]+ of 1,000,000 calls left$/);
    expect(await page.textContent('#health .budget-interval')).toMatch(/^\d/);
    expect(await page.textContent('#health')).toMatch(/resets 09:00 KST/);
  });

  it('switches to KOSDAQ: its large caps, priced, and the KOSPI feeds released', async () => {
    await page.click('button[data-market][value="kosdaq"]');
    await page.waitForFunction(() => document.querySelectorAll('#board tbody tr').length === 5);
    await expect.poll(async () => (await boardPrices(page)).every(([, p]) => priced(p)), { timeout: 10_000 }).toBe(true);
    expect((await boardPrices(page)).map(([c]) => c).sort()).toEqual(['028300', '086520', '247540', '263750', '293490']);
    await page.waitForSelector('#health li[data-feed="price.kosdaq"][data-state="live"]', { timeout: 10_000 });
    await page.waitForFunction(() => document.querySelector('#book')?.getAttribute('data-levels') === '20', undefined, { timeout: 10_000 });
    const status = (await (await fetch(`${url}/status`)).json()) as { subscribers: Record<string, { sessions: number } | undefined> };
    expect(status.subscribers['price.kosdaq']?.sessions).toBe(1);
    expect(status.subscribers['price.kospi']?.sessions ?? 0).toBe(0);
    expect(status.subscribers['book.kospi']?.sessions ?? 0).toBe(0);
    await page.click('button[data-market][value="kospi"]');
    await page.waitForFunction(() => document.querySelectorAll('#board tbody tr').length === 12);
    expect(pageErrors).toEqual([]);
  });

  it('drops a remembered code the market no longer lists, and only that one', async () => {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    try {
      await ctx.addInitScript(() =>
        localStorage.setItem('krx-bridge.demo.v1', JSON.stringify({ market: 'kospi', codes: { kospi: ['005930', '999990', '000660'], kosdaq: [] } })),
      );
      const p = watch(await ctx.newPage());
      await p.goto(`${url}/`);
      await p.waitForSelector('#notice:not([hidden])', { timeout: 10_000 });
      expect(await p.textContent('#notice')).toContain('999990');
      await expect.poll(async () => (await boardPrices(p)).map(([c, pr]) => `${c}:${priced(pr)}`), { timeout: 10_000 }).toEqual(['005930:true', '000660:true']);
    } finally {
      await ctx.close();
    }
  });

  it('saves screenshots at desktop and phone widths', async () => {
    // A fresh page each, alone on the bridge, so the pictures show what a new visitor sees.
    await page.close();
    // Its feeds released once IDLE_GRACE_MS has gone by with no subscriber.
    await expect.poll(() => bridge.poller.statuses().every((s) => s.state === 'idle'), { timeout: 10_000 }).toBe(true);
    const desktop = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    try {
      const fresh = watch(await desktop.newPage());
      await fresh.goto(`${url}/`);
      await loaded(fresh);
      // At 1280×800 the whole page fits the window: no page scrolling.
      expect(await fresh.evaluate(() => document.documentElement.scrollHeight)).toBeLessThanOrEqual(800);
      await fresh.waitForTimeout(2000);
      await fresh.screenshot({ path: join(RESULTS_DIR, 'demo-desktop.png') });
    } finally {
      await desktop.close();
    }
    const ctx = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 1 });
    try {
      const phone = watch(await ctx.newPage());
      await phone.goto(`${url}/`);
      await loaded(phone);
      // Stacked: the board above the chart above the book, each full width.
      const box = async (sel: string) => (await phone.locator(sel).boundingBox())!;
      const [board, chart, book] = [await box('.board-panel'), await box('.chart-panel'), await box('.book-panel')];
      expect(board.y + board.height).toBeLessThanOrEqual(chart.y);
      expect(chart.y + chart.height).toBeLessThanOrEqual(book.y);
      expect(book.width).toBeGreaterThan(340);
      expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await phone.waitForTimeout(1000);
      await phone.screenshot({ path: join(RESULTS_DIR, 'demo-phone.png'), fullPage: true });
      expect(pageErrors).toEqual([]);
    } finally {
      await ctx.close();
    }
  });
});

describe('the demo page on a bridge that requires a token', () => {
  let locked: Bridge;
  beforeAll(async () => {
    locked = await createBridge(
      defaultConfig({ PORT: 0, HOST: '127.0.0.1', LOG_LEVEL: 'silent', IDLE_GRACE_MS: 1000, STATE: 'off', RECORD: 'off', AUTH_TOKENS: ['demo-token-1'] }),
      { staticDir: outDir },
    );
  }, 30_000);
  afterAll(async () => {
    await locked?.stop();
  });

  it('says the bridge refused it, by code, and stops retrying', async () => {
    const p = await browser.newPage();
    try {
      await p.goto(`${locked.address.url}/`);
      await p.waitForFunction(() => document.getElementById('conn')?.dataset.state === 'closed', undefined, { timeout: 10_000 });
      expect(await p.textContent('#notice')).toBe('unauthorized: the server refused the connection: token required (HTTP 401)');
    } finally {
      await p.close();
    }
  });

  it('streams with the token of its #token= fragment, which leaves the address and stays for reloads', async () => {
    const p = watch(await browser.newPage());
    try {
      await p.goto(`${locked.address.url}/#token=demo-token-1`);
      await expect.poll(async () => (await boardPrices(p)).some(([, price]) => priced(price)), { timeout: 10_000 }).toBe(true);
      expect(await p.evaluate(() => document.getElementById('conn')?.dataset.state)).toBe('open');
      // Out of the address (a shared link would carry it), kept for the tab's reloads.
      expect(p.url()).toBe(`${locked.address.url}/`);
      await p.reload();
      await p.waitForFunction(() => document.getElementById('conn')?.dataset.state === 'open', undefined, { timeout: 10_000 });
    } finally {
      await p.close();
    }
    expect(pageErrors).toEqual([]);
  });
});
