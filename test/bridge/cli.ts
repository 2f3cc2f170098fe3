import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { buildDemo } from '../../scripts/build-demo.js';
import { until } from './helpers.js';

/** The repository root. */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** A bridge run as its CLI runs (src/cli.ts through tsx, or a build's dist/cli.js), on a free port. */
export interface CliBridge {
  readonly child: ChildProcess;
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  readonly port: number;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
  /** Its exit, once it has exited. */
  exited(): { code: number | null; signal: NodeJS.Signals | null } | undefined;
  /** SIGKILLs it if still running. */
  kill(): void;
}

/** Debian's libfaketime (package faketime, installed by .ci/run). */
export const LIBFAKETIME = '/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1';

/** Options of `startCli`. */
export interface CliOptions {
  /**
   * Run under Debian's `faketime` with the wall clock starting at this UTC
   * time (`YYYY-MM-DD HH:MM:SS`); timers keep the real monotonic clock.
   */
  readonly faketime?: string;
  /**
   * With `faketime`: the clock runs this many times faster than real time,
   * timers included (the monotonic clock is faked too), so a minute of the
   * bridge's time passes in 60/speed real seconds.
   */
  readonly speed?: number;
  /** Run this built entry (`dist/cli.js` of `buildCli`) with node instead of src/cli.ts through tsx. */
  readonly entry?: string;
}

/**
 * Builds the bridge as `npm start` does (`npm run build`: tsc with
 * tsconfig.build.json, then the demo page) into a folder of its own under
 * node_modules/.cache (so its bare imports resolve to the project's
 * packages, and no other test's build writes under it); returns the path of
 * its `dist/cli.js` and a remover.
 */
export async function buildCli(): Promise<{ entry: string; remove: () => void }> {
  const dir = join(ROOT, 'node_modules', '.cache', `krx-build-${process.pid}-${Date.now().toString(36)}`);
  mkdirSync(dir, { recursive: true });
  copyFileSync(join(ROOT, 'package.json'), join(dir, 'package.json'));
  const dist = join(dir, 'dist');
  await promisify(execFile)(
    process.execPath,
    [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json', '--outDir', dist, '--tsBuildInfoFile', join(dist, '.tsbuildinfo')],
    { cwd: ROOT },
  );
  await buildDemo({ outDir: join(dist, 'public') });
  return { entry: join(dist, 'cli.js'), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Starts `src/cli.ts` with `env` (over a quiet default environment) and waits until it listens. */
export async function startCli(env: Record<string, string> = {}, opts: CliOptions = {}): Promise<CliBridge> {
  let out = '';
  let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const fake = opts.faketime
    ? {
        TZ: 'UTC',
        LD_PRELOAD: LIBFAKETIME,
        FAKETIME: `@${opts.faketime}${opts.speed ? ` x${opts.speed}` : ''}`,
        ...(opts.speed ? {} : { FAKETIME_DONT_FAKE_MONOTONIC: '1' }),
      }
    : {};
  const child = spawn(process.execPath, opts.entry ? [opts.entry] : ['--import', 'tsx', 'src/cli.ts'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      IDLE_GRACE_MS: '1000',
      STATE: 'off',
      RECORD: 'off',
      // Debian's libfaketime preloaded into node itself (the `faketime` wrapper forks and would not pass signals on).
      ...fake,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  child.on('exit', (code, signal) => (exit = { code, signal }));
  await until(() => /"msg":"krx-bridge listening"/.test(out) || exit !== undefined, 60_000, 'the bridge to listen');
  if (exit) throw new Error(`the bridge exited at start: ${out.slice(-2000)}`);
  const line = out.split('\n').find((l) => l.includes('krx-bridge listening'))!;
  const url = (JSON.parse(line) as { url: string }).url;
  return {
    child,
    url,
    port: Number(new URL(url).port),
    output: () => out,
    exited: () => exit,
    kill: () => {
      if (!exit) child.kill('SIGKILL');
    },
  };
}
