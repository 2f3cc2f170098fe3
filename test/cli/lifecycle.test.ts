import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { run } from '../../src/cli/main.js';
import { sleep, startBridge, until, type TestBridge } from '../bridge/helpers.js';
import { fakeIo, lastFrame } from './io.js';

/** `tail` while the bridge it follows goes away: refused for good (exit 2, saying why), or down for a while (the table says so). */

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

let tb: TestBridge | undefined;
let stop: (() => void) | undefined;
afterEach(async () => {
  stop?.();
  stop = undefined;
  await tb?.bridge.stop();
  tb = undefined;
});

describe('tail while the bridge goes away', () => {
  // It used to await only the interrupt: the client closed, the loop emptied, and the process ended with 0, saying nothing.
  it('exits 2 with the bridge’s reason when its token is revoked (AUTH_TOKENS_FILE re-read on SIGHUP)', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'krx-cli-auth-')), 'tokens');
    writeFileSync(file, 'tail-token\nother-token\n');
    tb = await startBridge({ AUTH_TOKENS_FILE: file });
    for (const isTTY of [false, true]) {
      const f = fakeIo({ KRX_BRIDGE_TOKEN: 'tail-token' }, isTTY);
      stop = f.stop;
      const done = run(['tail', 'price.kospi.005930', '--url', tb.wsUrl], f.io);
      await until(() => f.out().includes(isTTY ? 'price.kospi: ' : '"topic":"price.kospi.005930"'), 10_000, 'the first change');
      writeFileSync(file, 'other-token\n');
      expect(tb.bridge.reloadTokens()).toBe(true);
      const code = await Promise.race([done, sleep(5000).then(() => 'still running')]);
      expect(code).toBe(2);
      expect(f.err()).toMatch(
        new RegExp(
          `^krx-bridge: disconnected from ${tb.wsUrl.replace(/[.]/g, '\\.')} \\(closed 4001 token revoked\\) and cannot reconnect: unauthorized: the server refused the connection: .+ \\(HTTP 401\\)\\n$`,
        ),
      );
      if (isTTY) expect(lastFrame(f.out())).toMatch(/^connection: closed \(the server refused the connection: .+ \(HTTP 401\)\)$/m);
      writeFileSync(file, 'tail-token\nother-token\n');
      expect(tb.bridge.reloadTokens()).toBe(true);
    }
  }, 30_000);

  it('on a terminal, says the connection is down and shows no feed as live until it is back', async () => {
    const port = await freePort();
    tb = await startBridge({ PORT: port });
    const f = fakeIo({}, true);
    stop = f.stop;
    const done = run(['tail', 'price.kospi.005930', '--url', tb.wsUrl], f.io);
    await until(() => /^price\.kospi: live$/m.test(lastFrame(f.out())), 10_000, 'the feed live');
    await tb.bridge.stop();
    tb = undefined;
    await until(() => /^connection: reconnecting \(closed 1001.*\)$/m.test(lastFrame(f.out())), 5000, 'the connection line');
    expect(lastFrame(f.out())).toMatch(/^price\.kospi: not connected$/m);
    tb = await startBridge({ PORT: port });
    await until(() => /^price\.kospi: live$/m.test(lastFrame(f.out())), 10_000, 'the feed live again');
    expect(lastFrame(f.out())).not.toContain('connection:');
    f.stop();
    expect(await done).toBe(0);
  }, 30_000);
});
