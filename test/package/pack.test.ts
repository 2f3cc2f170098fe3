import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { ROOT } from '../bridge/cli.js';
import { until } from '../bridge/helpers.js';

/**
 * The package as a user gets it: `npm pack` (its prepack builds), the
 * tarball installed into an empty folder, `npx krx-bridge` started there on
 * a free port, `npx krx-bridge tail` piped against it, and the SDK imported.
 */

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/**
 * `npx …` in a process group of its own: npx runs the command in a shell of
 * its own and does not pass signals on, so a signal to npx alone leaves the
 * bridge or the simulator running after the tests.
 */
function npx(args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv }): ChildProcess {
  return spawn('npx', ['--no-install', ...args], { ...opts, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
}

/** Sends `signal` to every process of `child`'s group and waits until none is left (SIGKILL after 10 s). */
async function stopGroup(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  const pid = child.pid;
  if (pid === undefined) return;
  const alive = (): boolean => {
    try {
      process.kill(-pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  if (!alive()) return;
  process.kill(-pid, signal);
  try {
    await until(() => !alive(), 10_000, `the processes of ${child.spawnargs.join(' ')} to end`);
  } catch (err) {
    if (alive()) process.kill(-pid, 'SIGKILL');
    throw err;
  }
}

describe('the packed package', () => {
  const work = mkdtempSync(join(tmpdir(), 'krx-pack-'));
  const app = join(work, 'app');
  let files: string[] = [];
  let bridge: ChildProcess | undefined;
  beforeAll(() => {
    const json = execFileSync('npm', ['pack', '--json', '--pack-destination', work], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    const packed = (JSON.parse(json.slice(json.indexOf('['))) as { filename: string; files: { path: string }[] }[])[0]!;
    files = packed.files.map((f) => f.path);
    execFileSync('mkdir', ['-p', app]);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true, type: 'module' }));
    execFileSync('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', join(work, packed.filename)], { cwd: app, stdio: 'ignore' });
  }, 240_000);
  afterAll(async () => {
    if (bridge) await stopGroup(bridge, 'SIGKILL');
    rmSync(work, { recursive: true, force: true });
  });

  it('ships the built code, the demo page and the licence; no tests, benchmarks, sources, maps or build info', () => {
    expect(files).toContain('dist/cli.js');
    expect(files).toContain('dist/client/index.js');
    expect(files).toContain('dist/public/index.html');
    expect(files).toContain('LICENSE');
    expect(files.filter((f) => /^(test|bench|src)\//.test(f) || f.endsWith('.map') || f.endsWith('.tsbuildinfo'))).toEqual([]);
  });

  it('npx krx-bridge --help works from the install', () => {
    const help = execFileSync('npx', ['--no-install', 'krx-bridge', '--help'], { cwd: app, encoding: 'utf8' });
    expect(help).toMatch(/^Usage: krx-bridge/);
    expect(execFileSync('npx', ['--no-install', 'krx-bridge', 'tail', '--help'], { cwd: app, encoding: 'utf8' })).toMatch(/--url/);
  });

  it('npx krx-bridge serves, and npx krx-bridge tail, piped, prints a JSON line for 005930', async () => {
    const port = await freePort();
    let out = '';
    bridge = npx(['krx-bridge', '--port', String(port), '--host', '127.0.0.1'], { cwd: app, env: { ...process.env, DATA_DIR: join(work, 'data') } });
    bridge.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    bridge.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    await until(() => out.includes('krx-bridge listening'), 60_000, `the bridge to listen: ${out}`);
    const health = await request(`http://127.0.0.1:${port}/healthz`);
    expect(health.statusCode).toBe(200);
    expect(await health.body.text()).toBe('ok\n');
    let line = '';
    const tail = npx(['krx-bridge', 'tail', 'price.kospi.005930', '--url', `ws://127.0.0.1:${port}/ws`], { cwd: app });
    tail.stdout!.on('data', (d: Buffer) => (line += d.toString()));
    try {
      await until(() => line.includes('\n'), 10_000, 'a JSON line');
    } finally {
      await stopGroup(tail, 'SIGINT');
    }
    expect(JSON.parse(line.split('\n')[0]!)).toMatchObject({ topic: 'price.kospi.005930', row: { isuSrtCd: '005930' } });
    // The README's lookup, from the install.
    const got = execFileSync('npx', ['--no-install', 'krx-bridge', 'get', 'history', 'kospi', '005930', '--count', '3', '--url', `ws://127.0.0.1:${port}/ws`], {
      cwd: app,
      encoding: 'utf8',
    });
    expect((JSON.parse(got) as { hisLists: unknown[] }).hisLists).toHaveLength(3);
  }, 90_000);

  it('npx krx-bridge sim runs the simulator alone from the install', async () => {
    const port = await freePort();
    let out = '';
    const sim = npx(['krx-bridge', 'sim', '--sim-port', String(port)], { cwd: app });
    sim.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    sim.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    try {
      await until(() => out.includes('listening'), 30_000, `the simulator to listen: ${out}`);
      const r = await request(`http://127.0.0.1:${port}/_sim/health`);
      expect(r.statusCode).toBe(200);
      await r.body.dump();
    } finally {
      // SIGINT, as Ctrl-C sends it to the whole group: every process of it ends.
      await stopGroup(sim, 'SIGINT');
    }
  }, 60_000);

  it('the SDK imports from the install', () => {
    const r = execFileSync('node', ['--input-type=module', '-e', "const m = await import('krx-bridge/client'); console.log(typeof m.KrxClient)"], {
      cwd: app,
      encoding: 'utf8',
    });
    expect(r.trim()).toBe('function');
    expect(readdirSync(join(app, 'node_modules', 'krx-bridge', 'dist')).some((f) => f.endsWith('.map'))).toBe(false);
  });
});
