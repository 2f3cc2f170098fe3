import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { buildDemo } from '../../scripts/build-demo.js';
import { createBridge, type Bridge } from '../../src/bridge/bridge.js';
import { KrxClient, type PriceRow } from '../../src/client/index.js';
import { defaultConfig } from '../../src/config/config.js';
import { fmtInt, kstDate } from '../../src/demo/format.js';
import { RESULTS_DIR, launchChromium } from './chromium.js';

/**
 * The demo page's replay control in Chromium against a real bridge that
 * records: the page streams live for a few seconds (so the bridge records
 * its board and book), then the control picks that day and a window of it
 * from `/recordings`, and the board, book and chart play it back through
 * `/ws/replay`; the board ends on the prices the SDK reads from the same
 * replay; "Back to live" streams live again. Writes
 * test-results/demo-replay.png.
 */

let outDir: string;
let dataDir: string;
let bridge: Bridge;
let url: string;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];

beforeAll(async () => {
  outDir = await mkdtemp(join(tmpdir(), 'krx-demo-replay-'));
  dataDir = await mkdtemp(join(tmpdir(), 'krx-demo-data-'));
  await buildDemo({ outDir, sourcemap: false });
  bridge = await createBridge(
    defaultConfig({ PORT: 0, HOST: '127.0.0.1', LOG_LEVEL: 'silent', IDLE_GRACE_MS: 1000, STATE: 'off', RECORD: 'on', DATA_DIR: dataDir, NAMES_PER_DAY: 0 }),
    { staticDir: outDir },
  );
  url = bridge.address.url;
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  page.on('pageerror', (e) => pageErrors.push(e.message));
  page.on('console', (m) => m.type() === 'error' && pageErrors.push(`console: ${m.text()}`));
  page.on('response', (r) => r.status() >= 400 && pageErrors.push(`${r.status()} ${r.url()}`));
  await page.goto(`${url}/`);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await bridge?.stop();
  for (const d of [outDir, dataDir]) if (d) await rm(d, { recursive: true, force: true });
});

/** The board's codes and their displayed last prices. */
async function boardPrices(p: Page): Promise<Map<string, string>> {
  const rows = await p.$$eval('#board tbody tr', (trs) =>
    trs.map((r) => [(r as HTMLElement).dataset.code ?? '', r.querySelector('.col-price')?.textContent ?? '']),
  );
  return new Map(rows as [string, string][]);
}

interface Listed {
  days: { date: string; from: string; to: string; feeds: { feed: string; from: string; to: string }[] }[];
}

/** Seconds of the day of `HHMMSS`. */
const seconds = (hhmmss: string) => Number(hhmmss.slice(0, 2)) * 3600 + Number(hhmmss.slice(2, 4)) * 60 + Number(hhmmss.slice(4, 6));

/** `HHMMSS` plus `s` seconds. */
function plus(hhmmss: string, s: number): string {
  const t = seconds(hhmmss) + s;
  return [Math.floor(t / 3600), Math.floor((t % 3600) / 60), t % 60].map((n) => String(n).padStart(2, '0')).join('');
}
const colons = (hhmmss: string) => `${hhmmss.slice(0, 2)}:${hhmmss.slice(2, 4)}:${hhmmss.slice(4, 6)}`;

/** The `price` rows of `codes` at the end of a replay, as the SDK reads it. */
async function replayedPrices(replay: { date: string; from: string; to: string }, codes: readonly string[]): Promise<Map<string, string>> {
  const client = new KrxClient(`${url.replace('http', 'ws')}/ws`, { WebSocket, replay: { ...replay, speed: 'max' } });
  const ended = new Promise<void>((resolve) => client.on('state', (_p, next) => next === 'closed' && resolve()));
  await client.subscribe('price', 'kospi', codes);
  await ended;
  return new Map(codes.map((c) => [c, fmtInt((client.row('price', 'kospi', c) as PriceRow | undefined)?.trdPrc)]));
}

describe('the demo page replays a recorded day', () => {
  it('picks a recorded day and time, plays the board, book and chart back, and goes back to live', async () => {
    // Live first: the board and the selected symbol's book stream, and the bridge records them.
    await page.waitForFunction(() => document.querySelector('#book')?.getAttribute('data-levels') === '20', undefined, { timeout: 15_000 });
    const today = kstDate(Date.now());
    const priceFeed = async () =>
      ((await (await fetch(`${url}/recordings`)).json()) as Listed).days.find((d) => d.date === today)?.feeds.find((f) => f.feed === 'price.kospi');
    await expect
      .poll(
        async () => {
          const f = await priceFeed();
          // In seconds: `HHMMSS` as numbers jumps by 41 at a minute's end (100059 → 100100).
          return f ? seconds(f.to) - seconds(f.from) : 0;
        },
        { timeout: 20_000, interval: 500 },
      )
      .toBeGreaterThanOrEqual(6);
    const recorded = (await priceFeed())!;
    const window = { date: today, from: plus(recorded.from, 1), to: plus(recorded.from, 5) };
    const codes = [...(await boardPrices(page)).keys()];
    expect(codes).toHaveLength(10);

    // The control lists the day, and takes a window of it.
    await page.click('#replay-open');
    await page.waitForSelector(`#replay-day option[value="${today}"]`, { state: 'attached' });
    await page.selectOption('#replay-day', today);
    expect(await page.inputValue('#replay-from')).toBe(colons(recorded.from));
    await page.fill('#replay-from', colons(window.from));
    await page.fill('#replay-to', colons(window.to));
    await page.selectOption('#replay-speed', '10');
    await page.click('#replay-form button[type="submit"]');
    await page.waitForSelector('#replay-bar:not([hidden])');
    expect(await page.textContent('#replay-bar')).toContain(`${colons(window.from)}–${colons(window.to)} KST`);

    // Four recorded seconds at ten times: the replay ends, and the board shows the prices it ended on.
    await page.waitForSelector('#replay-bar[data-state="ended"]', { timeout: 15_000 });
    const expected = await replayedPrices(window, codes);
    expect([...expected.values()].every((p) => /^\d{1,3}(,\d{3})*$/.test(p))).toBe(true);
    expect(await boardPrices(page)).toEqual(expected);
    expect(await page.textContent('#replay-bar .replay-clock')).toMatch(/^\d\d:\d\d:\d\d · ended$/);
    expect(await page.getAttribute('#book', 'data-levels')).toBe('20');
    expect(Number(await page.getAttribute('#chart', 'data-bars'))).toBeGreaterThan(0);
    expect(await page.textContent('#chart-hint')).toContain('replayed trades');
    // Ended: nothing live reaches the board.
    await page.waitForTimeout(1500);
    expect(await boardPrices(page)).toEqual(expected);
    await page.screenshot({ path: join(RESULTS_DIR, 'demo-replay.png') });

    // Back to live: the bar goes and prices stream again.
    await page.click('#replay-live');
    await page.waitForSelector('#replay-bar', { state: 'hidden' });
    await page.waitForSelector('#conn[data-state="open"]');
    await expect
      .poll(async () => [...(await boardPrices(page))].filter(([c, p]) => p !== expected.get(c) && p !== '–').length, { timeout: 15_000, interval: 250 })
      .toBeGreaterThan(0);
    expect(await page.textContent('#chart-hint')).toBe('1-minute candles · today · KST');
    expect(pageErrors).toEqual([]);
  }, 90_000);

  it('says why a window cannot be replayed, and plays nothing', async () => {
    await page.click('#replay-open');
    await page.waitForSelector('#replay-day option', { state: 'attached' });
    // A window hours away from the recording, which holds only the minutes this file has run: the other half of the KST day.
    const kstHour = new Date(Date.now() + 9 * 3600_000).getUTCHours();
    const [from, to] = kstHour < 12 ? ['22:00:00', '22:30:00'] : ['01:00:00', '01:30:00'];
    await page.fill('#replay-from', from);
    await page.fill('#replay-to', to);
    await page.click('#replay-form button[type="submit"]');
    expect(await page.textContent('#replay-msg')).toMatch(/^the recording of \d{4}-\d\d-\d\d runs from /);
    expect(await page.isHidden('#replay-bar')).toBe(true);
    await page.click('#replay-cancel');
    expect(await page.isHidden('#replay-form')).toBe(true);
    expect(pageErrors).toEqual([]);
  });
});
