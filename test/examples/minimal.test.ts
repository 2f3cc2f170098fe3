import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDemo } from '../../scripts/build-demo.js';
import type { Bridge } from '../../src/bridge/bridge.js';
import { launchChromium } from '../demo/chromium.js';
import { startBridge } from './helpers.js';

/** examples/minimal.html as the build ships it (at /examples/minimal.html, importing /sdk/krx-client.js), in Chromium. */

let outDir: string;
let bridge: Bridge;
let url: string;
let browser: Browser;

beforeAll(async () => {
  outDir = await mkdtemp(join(tmpdir(), 'krx-minimal-'));
  await buildDemo({ outDir, sourcemap: false });
  ({ bridge, url } = await startBridge({ staticDir: outDir }));
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await bridge?.stop();
  if (outDir) await rm(outDir, { recursive: true, force: true });
});

describe('the minimal HTML example', () => {
  it('subscribes to one symbol through the SDK bundle and shows its price', async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${url}/examples/minimal.html`);
    await page.waitForFunction(() => /^\d{1,3}(,\d{3})* KRW$/.test(document.getElementById('price')?.textContent ?? ''), undefined, { timeout: 10_000 });
    expect(await page.textContent('#meta')).toMatch(/^005930 · change -?\d+ · trade at \d{8}$/);
    const sdk = await page.evaluate(async () => (await fetch('/sdk/krx-client.js')).headers.get('content-type'));
    expect(sdk).toBe('text/javascript; charset=utf-8');
    expect(errors).toEqual([]);
  });

  it('the SDK in the browser reports a refused upgrade by its code, though the WebSocket only saw 1006', async () => {
    const page = await browser.newPage();
    await page.goto(`${url}/examples/minimal.html`);
    // A string: the test runner would rewrite an `import()` written in a function.
    const seen = (await page.evaluate(`(async () => {
      const { KrxClient } = await import('/sdk/krx-client.js');
      const c = new KrxClient('ws://' + location.host + '/ws?tokn=abc');
      const out = [];
      c.on('error', (e) => out.push('error ' + e.code));
      c.on('disconnect', (code) => out.push('disconnect ' + code));
      c.on('reconnecting', () => out.push('reconnecting'));
      await c.ready({ timeoutMs: 5000 }).then(
        () => out.push('open'),
        (e) => out.push('ready ' + e.code + ': ' + e.message),
      );
      out.push('state ' + c.state);
      return out;
    })()`)) as string[];
    expect(seen).toEqual([
      'error invalid_params',
      'ready invalid_params: the server refused the connection: 1 unknown query parameter; this takes only token (HTTP 400)',
      'state closed',
    ]);
  });
});
