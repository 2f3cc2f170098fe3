import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createBridge, type Bridge, type BridgeOptions } from '../../src/bridge/bridge.js';
import { defaultConfig, type Config } from '../../src/config/config.js';

/** Running the examples as a user does (`npx tsx examples/….ts`) against a bridge on port 0. */

/** The project root (examples run from there). */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Starts a bridge with its simulator on 127.0.0.1, port 0. */
export async function startBridge(opts: BridgeOptions = {}, over: Partial<Config> = {}): Promise<{ bridge: Bridge; url: string; wsUrl: string }> {
  const bridge = await createBridge(
    defaultConfig({ PORT: 0, HOST: '127.0.0.1', LOG_LEVEL: 'silent', IDLE_GRACE_MS: 1000, STATE: 'off', RECORD: 'off', NAMES_PER_DAY: 0, ...over }),
    opts,
  );
  const addr = bridge.address;
  return { bridge, url: addr.url, wsUrl: addr.wsUrl };
}

/** What an example printed, and how it ended. */
export interface ExampleRun {
  readonly stdout: string;
  readonly stderr: string;
  /** Exit code (null when ended by a signal). */
  readonly code: number | null;
  /** Whether `until` became true (false: the example exited or the time ran out first). */
  readonly reached: boolean;
}

/** Options of `runExample`. */
export interface RunOptions {
  /** The bridge's WebSocket URL, passed as KRX_BRIDGE_URL. */
  readonly wsUrl: string;
  /** Stop the example (SIGTERM) once this holds for its stdout; default: let it exit. */
  readonly until?: (stdout: string) => boolean;
  /** Stop it after this long in any case, ms; default 20000. */
  readonly timeoutMs?: number;
  /** Stop it when this aborts. */
  readonly signal?: AbortSignal;
}

/** Runs `examples/<file>` with `node --import tsx` and collects its output. */
export function runExample(file: string, args: readonly string[], opts: RunOptions): Promise<ExampleRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', `examples/${file}`, ...args], {
      cwd: ROOT,
      env: { ...process.env, KRX_BRIDGE_URL: opts.wsUrl, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let reached = false;
    const stop = () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    };
    const timer = setTimeout(stop, opts.timeoutMs ?? 20_000);
    opts.signal?.addEventListener('abort', stop, { once: true });
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      if (!reached && opts.until?.(stdout)) {
        reached = true;
        stop();
      }
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ stdout, stderr, code, reached });
    });
  });
}
