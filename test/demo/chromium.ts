import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';

/**
 * Launching the system's Chromium (Debian's package) for browser tests, and
 * where their screenshots go.
 */

/** Chromium's path: `CHROMIUM_PATH`, else Debian's `/usr/bin/chromium`. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Flags for a headless run on a machine without network: without the
 * background-networking ones Chromium keeps calling home and floods the
 * closed network with retries.
 */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** test-results/ of the project (created on demand); screenshots are written here. */
export const RESULTS_DIR = fileURLToPath(new URL('../../test-results/', import.meta.url));

/** Launches Chromium; fails with instructions when it is not installed (the browser tests never pass silently without it). */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `Chromium not found at ${CHROMIUM_PATH}. The browser tests drive Debian's chromium package: ` +
        'install it with `apt-get install chromium fonts-nanum` (CI does this in .ci/run), or set CHROMIUM_PATH.',
    );
  }
  await mkdir(RESULTS_DIR, { recursive: true });
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
}
