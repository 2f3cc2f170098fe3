import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { buildDemo } from '../../scripts/build-demo.js';
import { createBridge, type Bridge } from '../../src/bridge/bridge.js';
import { defaultConfig, type Config } from '../../src/config/config.js';
import { launchChromium } from './chromium.js';

/**
 * The demo page in Chromium against a bridge whose clock (and its
 * simulator's) starts at a given moment and runs on from there: the page
 * at an hour of the trading day (the KST market clock), whatever the real
 * time. Page errors and console errors are collected in `problems`.
 */
export interface ClockedDemo {
  readonly bridge: Bridge;
  readonly page: Page;
  readonly problems: string[];
  /** Closes the browser, stops the bridge and removes the built page. */
  stop(): Promise<void>;
}

/**
 * Builds the page, starts a bridge with its clock at `at` (ms epoch; no
 * state, no recording) and settings `extra` (`SIM_CLOCK: 'kst'` for a
 * simulator that trades on the KST day), and opens the page; `watch` is
 * given the page before it loads (to listen to its WebSocket, say).
 */
export async function clockedDemo(at: number, extra: Partial<Config> = {}, watch?: (page: Page) => void): Promise<ClockedDemo> {
  const outDir = await mkdtemp(join(tmpdir(), 'krx-demo-clocked-'));
  let bridge: Bridge | undefined;
  let browser: Browser | undefined;
  const stop = async (): Promise<void> => {
    await browser?.close();
    await bridge?.stop();
    await rm(outDir, { recursive: true, force: true });
  };
  try {
    await buildDemo({ outDir, sourcemap: false });
    const start = Date.now();
    const now = () => at + (Date.now() - start);
    const config = defaultConfig({ PORT: 0, HOST: '127.0.0.1', LOG_LEVEL: 'silent', STATE: 'off', RECORD: 'off', MARKET_CLOCK: 'kst', ...extra });
    bridge = await createBridge(config, { staticDir: outDir, now, simulator: { now } });
    browser = await launchChromium();
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(e.message));
    page.on('console', (m) => m.type() === 'error' && problems.push(`console: ${m.text()}`));
    watch?.(page);
    await page.goto(`${bridge.address.url}/`);
    return { bridge, page, problems, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
