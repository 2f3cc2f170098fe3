import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { TestClient, until } from './helpers.js';

/**
 * End to end: the bridge as `npm start` runs it (its `prestart` build, then
 * the `start` command itself, read from package.json), with no configuration
 * but the port, checked from a plain `ws` client. The start command is
 * spawned directly so SIGTERM reaches the bridge as it does under a process
 * manager (npm does not forward signals to its script's children).
 */
describe('npm start', () => {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  let child: ChildProcess;
  let out = '';
  let url = '';
  let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;

  beforeAll(async () => {
    execFileSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'ignore' });
    const pkg = JSON.parse(readFileSync(`${root}/package.json`, 'utf8')) as { scripts: Record<string, string> };
    const [cmd, ...args] = pkg.scripts.start!.split(' ');
    child = spawn(cmd!, args, {
      cwd: root,
      env: {
        ...process.env,
        PORT: '0',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
        UPSTREAM_URL: '',
        UPSTREAM_API_KEY: '',
        DATA_DIR: mkdtempSync(join(tmpdir(), 'krx-e2e-')),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code, signal) => (exit = { code, signal }));
    await until(() => /"msg":"krx-bridge listening"/.test(out) || exit !== undefined, 110_000, 'the bridge to listen');
    const line = out.split('\n').find((l) => l.includes('krx-bridge listening'))!;
    url = (JSON.parse(line) as { url: string }).url;
  }, 120_000);

  afterAll(() => {
    if (!exit) child.kill('SIGKILL');
  });

  it('says in its first log lines that it runs against the built-in simulator', () => {
    const first = out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .slice(0, 3)
      .join('\n');
    expect(first).toMatch(/no UPSTREAM_URL set: starting the built-in simulator/);
  });

  it('serves health, status and a live market over WebSocket', async () => {
    expect((await request(`${url}/healthz`)).statusCode).toBe(200);
    await until(() => /"msg":"symbol list loaded".*"market":"kosdaq"|"market":"kosdaq".*symbol list loaded/.test(out), 20_000, 'symbols');
    const c = await new TestClient(`${url.replace('http', 'ws')}/ws`).ready();
    const r = await c.request({ op: 'subscribe', channel: 'quote', market: 'kospi', codes: ['005930', '000660'] });
    expect(r.type).toBe('subscribed');
    await until(() => c.ofType('patch').length >= 2, 15_000, 'patches');
    expect(c.problems).toEqual([]);
    const g = await c.request({ op: 'get', resource: 'master', market: 'kospi', code: '005930' });
    expect(g).toMatchObject({ type: 'result', data: { isuSrtCd: '005930' } });
    const status = (await (await request(`${url}/status`)).body.json()) as { upstream: { simulated: boolean }; clients: number };
    expect(status.upstream.simulated).toBe(true);
    expect(status.clients).toBe(1);

    // SIGHUP re-reads the token file; with none configured the bridge says so and keeps serving.
    child.kill('SIGHUP');
    await until(() => out.includes('token file not re-read'), 5000, 'the SIGHUP log line');
    // Still serving after the signal: a request sent after it is answered.
    expect((await c.request({ op: 'ping' })).type).toBe('pong');
    expect(exit).toBeUndefined();
    expect(c.closed).toBeUndefined();

    // SIGTERM: the client is closed with 1001 and the process exits 0.
    child.kill('SIGTERM');
    await until(() => c.closed !== undefined && exit !== undefined, 20_000, 'drain and exit');
    expect(c.closed!.code).toBe(1001);
    expect(exit).toEqual({ code: 0, signal: null });
  }, 60_000);
});
