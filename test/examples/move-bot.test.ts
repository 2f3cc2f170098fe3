import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Bridge } from '../../src/bridge/bridge.js';
import { runExample, startBridge } from './helpers.js';

/** examples/move-bot.ts against a bridge: it logs moves above its threshold, and only those. */

let bridge: Bridge;
let wsUrl: string;

beforeAll(async () => {
  ({ bridge, wsUrl } = await startBridge());
});
afterAll(() => bridge?.stop());

const MOVE = /^(\d\d:\d\d:\d\d)Z (\d{6}) (.*) ([+-]\d+\.\d\d)% in (\d+)s: ([\d,]+) -> ([\d,]+)$/;
const CODES = ['005930', '000660', '373220', '207940', '005380'];

describe('the move bot', () => {
  it('logs moves over N% within a minute (N small, so ordinary ticks pass it); a large N logs nothing', async () => {
    const done = new AbortController();
    const big = runExample('move-bot.ts', ['--pct', '50', ...CODES], { wsUrl, signal: done.signal });
    const small = await runExample('move-bot.ts', ['--pct', '0.05', ...CODES], {
      wsUrl,
      until: (out) => out.split('\n').filter((l) => MOVE.test(l)).length >= 3,
      timeoutMs: 20_000,
    });
    expect(small.reached, `stdout: ${small.stdout}\nstderr: ${small.stderr}`).toBe(true);
    expect(small.stderr).toContain('watching 5 kospi codes for moves over 0.05% within a minute');
    for (const line of small.stdout.trim().split('\n')) {
      const m = MOVE.exec(line);
      expect(m, line).not.toBeNull();
      const [, , code, name, pct, secs, from, to] = m!;
      expect(CODES).toContain(code);
      if (code === '005930') expect(name).toBe('삼성전자');
      const num = (s: string) => Number(s.replace(/,/g, ''));
      const exact = (num(to!) / num(from!) - 1) * 100;
      expect(Math.abs(exact)).toBeGreaterThan(0.05);
      expect(Number(pct)).toBeCloseTo(exact, 2);
      expect(Number(secs)).toBeLessThanOrEqual(60);
    }
    // The same feed for the same seconds, but nothing moves 50% in a minute.
    done.abort();
    const quiet = await big;
    expect(quiet.stderr).toContain('watching 5 kospi codes');
    expect(quiet.stdout).toBe('');
  }, 45_000);

  it("exits 1 with the bridge's reason when the bridge refuses it", async () => {
    const run = await runExample('move-bot.ts', ['--pct', '1', ...CODES], { wsUrl: `${wsUrl}?tokn=abc`, timeoutMs: 10_000 });
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).toContain('error invalid_params: the server refused the connection: 1 unknown query parameter; this takes only token (HTTP 400)');
  });

  it('runs unchanged on a recorded day (--replay), and exits when the replay ends', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'krx-bot-'));
    const rec = await startBridge({}, { RECORD: 'on', DATA_DIR: dir });
    try {
      // A live client makes the bridge poll (and so record) the codes for a few seconds.
      const done = new AbortController();
      const live = runExample('move-bot.ts', ['--pct', '50', ...CODES], { wsUrl: rec.wsUrl, signal: done.signal });
      const t0 = Date.now();
      // Recorded: a few changes of every code.
      const seqs = () => CODES.map((code) => rec.bridge.store.entry('price', 'kospi', code)?.seq ?? 0);
      await expect.poll(() => Math.min(...seqs()), { timeout: 20_000, interval: 100 }).toBeGreaterThanOrEqual(5);
      done.abort();
      await live;
      const kst = (ms: number) => new Date(ms + 9 * 3600_000).toISOString();
      const day = kst(t0).slice(0, 10).replace(/-/g, '');
      const span = `${kst(t0 - 1000)
        .slice(11, 19)
        .replace(/:/g, '')}-${kst(Date.now() + 1000)
        .slice(11, 19)
        .replace(/:/g, '')}`;
      const run = await runExample('move-bot.ts', ['--pct', '0.05', '--replay', `${day}/${span}@max`, ...CODES], { wsUrl: rec.wsUrl, timeoutMs: 20_000 });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toContain('watching 5 kospi codes');
      expect(
        run.stdout
          .trim()
          .split('\n')
          .filter((l) => MOVE.test(l)).length,
      ).toBeGreaterThanOrEqual(1);
    } finally {
      await rec.bridge.stop();
    }
  }, 45_000);
});
