import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { parseSimEnv } from '../../src/sim/env.js';

/**
 * The simulator as `npm run sim` runs it: the CLI with its defaults, on a
 * free port; plus a bad setting.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
let child: ChildProcess | undefined;

afterEach(() => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  child = undefined;
});

function runCli(env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', 'src/sim/cli.ts'], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Resolves with the URL the simulator logs; keeps reading its output into `out`. */
function listening(c: ChildProcess, out: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    c.stdout!.on('data', (chunk: Buffer) => {
      out.push(String(chunk));
      const m = /"url":"(http:\/\/[^"]+)"/.exec(out.join(''));
      if (m) resolve(m[1]!);
    });
    c.once('exit', () => reject(new Error(`simulator exited: ${out.join('')}`)));
  });
}

type List = { isuLists: { isuSrtCd: string; trdPrc: number }[] };

describe('sim CLI', () => {
  it('serves thousands of KOSPI rows whose prices change from one second to the next', async () => {
    const out: string[] = [];
    child = runCli({ SIM_PORT: '0', SIM_API_KEY: 'cli-secret-key' });
    const url = await listening(child, out);
    const get = async () => {
      const res = await request(`${url}/v2/market/multiquote/stocks/kospi/lists`, { headers: { apikey: 'cli-secret-key' } });
      expect(res.statusCode).toBe(200);
      return (await res.body.json()) as List;
    };
    const first = await get();
    expect(first.isuLists.length).toBeGreaterThan(2000);
    const before = new Map(first.isuLists.map((r) => [r.isuSrtCd, r.trdPrc]));
    const changed = async () => (await get()).isuLists.filter((r) => before.get(r.isuSrtCd) !== r.trdPrc).length;
    // The next second's prices (the simulator ticks once a second), asked for until they come.
    await expect.poll(changed, { timeout: 2500, interval: 100 }).toBeGreaterThan(50);
    child.kill('SIGTERM');
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(0);
    expect(out.join('')).not.toContain('cli-secret-key');
  });

  it('names a bad setting on one line and exits 1', async () => {
    child = runCli({ SIM_DAILY_LIMIT: 'lots' });
    let err = '';
    child.stderr!.on('data', (d: Buffer) => (err += String(d)));
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(1);
    expect(err.trim().split('\n')).toHaveLength(1);
    expect(err).toContain('SIM_DAILY_LIMIT');
  });

  it('reads the bridge’s calendar settings, so both trade on the same days', () => {
    const r = parseSimEnv({ MARKET_HOLIDAYS: '20261126, 2026-11-27', MARKET_EXAM_DAYS: '20271118' });
    expect(r.ok && r.value.MARKET_HOLIDAYS).toEqual(['20261126', '20261127']);
    expect(r.ok && r.value.MARKET_EXAM_DAYS).toEqual(['20271118']);
    expect(parseSimEnv({}).ok && (parseSimEnv({}) as { value: { MARKET_HOLIDAYS: string[] } }).value.MARKET_HOLIDAYS).toEqual([]);
    const bad = parseSimEnv({ MARKET_HOLIDAYS: '2026-13-01' });
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.message).toMatch(/^invalid MARKET_HOLIDAYS: not a date/);
  });
});
