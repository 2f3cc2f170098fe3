import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Bridge } from '../../src/bridge/bridge.js';
import { runExample, startBridge } from './helpers.js';

/** examples/ticker.ts against a bridge, its output piped (not a terminal): whole tables with codes, names and prices. */

let bridge: Bridge;
let wsUrl: string;

beforeAll(async () => {
  ({ bridge, wsUrl } = await startBridge());
});
afterAll(() => bridge?.stop());

const ROW = /^(\d{6})\s+(\S.*?)\s+([\d,]+)\s+([+-]?[\d,]+)\s+([+-]?\d+\.\d\d%)\s+([\d,]+)\s+(\d\d:\d\d:\d\d)$/;

describe('the terminal ticker', () => {
  it('prints a table of the codes with their names and live prices', async () => {
    const codes = ['005930', '000660', '069500'];
    const run = await runExample('ticker.ts', codes, {
      wsUrl,
      until: (out) => out.split('\n').filter((l) => ROW.test(l)).length >= 3,
      timeoutMs: 15_000,
    });
    expect(run.reached, `stdout: ${run.stdout}\nstderr: ${run.stderr}`).toBe(true);
    const rows = run.stdout
      .split('\n')
      .filter((l) => ROW.test(l))
      .map((l) => ROW.exec(l)!);
    expect(rows.map((m) => m[1])).toEqual(codes);
    expect(rows.map((m) => m[2])).toEqual(['삼성전자', 'SK하이닉스', 'KODEX 200']);
    for (const m of rows) expect(Number(m[3]!.replace(/,/g, ''))).toBeGreaterThan(0);
    expect(run.stdout).toMatch(/^krx-bridge ticker · KOSPI · open · /m);
    // Piped output carries no escape sequences.
    expect(run.stdout).not.toContain('\x1b');
  }, 30_000);

  it("exits 1 with the bridge's reason when the bridge refuses it", async () => {
    const run = await runExample('ticker.ts', ['005930'], { wsUrl: `${wsUrl}?tokn=abc`, timeoutMs: 10_000 });
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr.trim()).toBe('error invalid_params: the server refused the connection: 1 unknown query parameter; this takes only token (HTTP 400)');
  });
});
