import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { until } from './helpers.js';

/** The repository root. */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** A bridge run as its CLI runs (src/cli.ts through tsx, no build step), on a free port. */
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
}

/** Starts `src/cli.ts` with `env` (over a quiet default environment) and waits until it listens. */
export async function startCli(env: Record<string, string> = {}, opts: CliOptions = {}): Promise<CliBridge> {
  let out = '';
  let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts'], {
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
      ...(opts.faketime ? { TZ: 'UTC', LD_PRELOAD: LIBFAKETIME, FAKETIME: `@${opts.faketime}`, FAKETIME_DONT_FAKE_MONOTONIC: '1' } : {}),
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
