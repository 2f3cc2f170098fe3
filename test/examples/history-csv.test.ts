import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Bridge } from '../../src/bridge/bridge.js';
import { runExample, startBridge } from './helpers.js';

/** examples/history-csv.ts against a bridge: a header and one row per trading day per code. */

let bridge: Bridge;
let wsUrl: string;
let dir: string;

beforeAll(async () => {
  ({ bridge, wsUrl } = await startBridge());
  dir = await mkdtemp(join(tmpdir(), 'krx-csv-'));
});
afterAll(async () => {
  await bridge?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the history CSV export', () => {
  it('writes every trading day of each code, oldest first, paging past 100 days', async () => {
    const out = join(dir, 'prices.csv');
    const run = await runExample('history-csv.ts', ['--from', '20260101', '--to', '20261031', '--out', out, '005930', '000660'], { wsUrl });
    expect(run.code, run.stderr).toBe(0);
    const lines = (await readFile(out, 'utf8')).trim().split('\n');
    expect(lines[0]).toBe('code,date,open,high,low,close,change,volume,value');
    const rows = lines.slice(1).map((l) => l.split(','));
    for (const code of ['005930', '000660']) {
      const mine = rows.filter((r) => r[0] === code);
      const dates = mine.map((r) => r[1]!);
      // About 200 trading days in ten months: more than two pages of 100.
      expect(mine.length).toBeGreaterThan(180);
      expect(mine.length).toBeLessThan(220);
      expect(dates.every((d) => /^2026-(0\d|10)-\d\d$/.test(d))).toBe(true);
      expect([...dates].sort()).toEqual(dates);
      expect(new Set(dates).size).toBe(dates.length);
      for (const r of mine) {
        const [open, high, low, close] = r.slice(2, 6).map(Number);
        expect(high!).toBeGreaterThanOrEqual(Math.max(open!, close!, low!));
        expect(low!).toBeLessThanOrEqual(Math.min(open!, close!));
        expect(Number(r[7])).toBeGreaterThan(0);
      }
      const weekdays = dates.map((d) => new Date(`${d}T00:00:00Z`).getUTCDay());
      expect(weekdays.every((w) => w >= 1 && w <= 5)).toBe(true);
    }
    expect(run.stderr).toMatch(/005930: \d+ days/);
  }, 30_000);

  it('fails with a message and no output for a code the market does not list', async () => {
    const run = await runExample('history-csv.ts', ['--market', 'kospi', '247540'], { wsUrl });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/history-csv: .*247540/);
    expect(run.stdout).toBe('');
  }, 30_000);
});
