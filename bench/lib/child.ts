import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpus } from 'node:os';

/**
 * Benchmark processes: the orchestrator starts the server and the load
 * generator as separate Node processes, each pinned to its own core with
 * `taskset` when there is one and the machine has two cores or more, with
 * the open-file limit raised as far as the hard limit allows. They talk
 * over Node's IPC channel: one request, one reply.
 */

/** Where a child runs. */
export interface ChildOptions {
  /** Label used in error messages. */
  readonly name: string;
  /** Script path (TypeScript, run through tsx). */
  readonly script: string;
  /** Core to pin to; ignored without `taskset` or with one core. */
  readonly core?: number;
  /** Extra environment. */
  readonly env?: Record<string, string>;
  /** Directory to write a V8 CPU profile of the whole process to (`--cpu-prof`); none by default. */
  readonly profileDir?: string;
}

interface Reply {
  readonly id: number;
  readonly ok: boolean;
  readonly value?: unknown;
  readonly error?: string;
}

let tasksetChecked: boolean | undefined;

/** Whether processes can be pinned: `taskset` runs and there are two cores or more. */
export function canPin(): boolean {
  if (tasksetChecked === undefined) {
    const r = spawnSync('taskset', ['-c', '0', 'true'], { stdio: 'ignore' });
    tasksetChecked = r.status === 0 && cpus().length >= 2;
  }
  return tasksetChecked;
}

// Raise the soft open-file limit (65,536 or the hard limit, whichever the
// kernel allows) and tell the child what it got.
const WRAPPER = 'ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null; BENCH_NOFILE="$(ulimit -n)"; export BENCH_NOFILE; exec "$@"';

/** A benchmark child process with request/reply over IPC. */
export class Child {
  private readonly proc: ChildProcess;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private nextId = 1;
  private exited: string | undefined;

  /** Starts the script; stdout and stderr go to this process's stderr. */
  constructor(readonly opts: ChildOptions) {
    const prof = opts.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${opts.profileDir}`] : [];
    const node = [process.execPath, ...prof, '--import', 'tsx', '--expose-gc', opts.script];
    const cmd = opts.core !== undefined && canPin() ? ['taskset', '-c', String(opts.core), ...node] : node;
    this.proc = spawn('sh', ['-c', WRAPPER, 'sh', ...cmd], {
      stdio: ['ignore', process.stderr, process.stderr, 'ipc'],
      env: { ...process.env, ...opts.env },
    });
    this.proc.on('message', (m: Reply) => {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (m.ok) p.resolve(m.value);
      else p.reject(new Error(`${opts.name}: ${m.error ?? 'failed'}`));
    });
    this.proc.on('exit', (code, signal) => {
      this.exited = `${opts.name} exited (${signal ?? code})`;
      for (const p of this.pending.values()) p.reject(new Error(this.exited));
      this.pending.clear();
    });
  }

  /** Process id of the child (of its wrapper shell, which `exec`s into node). */
  get pid(): number | undefined {
    return this.proc.pid;
  }

  /** Sends a command and waits for its reply (rejects after `timeoutMs`, default 120 s). */
  request<T>(cmd: string, args: unknown = {}, timeoutMs = 120_000): Promise<T> {
    if (this.exited) return Promise.reject(new Error(this.exited));
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${this.opts.name}: ${cmd} timed out after ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, {
        resolve: (v) => {
          clearTimeout(timer);
          resolve(v as T);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      this.proc.send({ id, cmd, args });
    });
  }

  /** Asks the child to exit, and kills it if it has not after `graceMs` (default 5 s). */
  async close(graceMs = 5_000): Promise<void> {
    if (this.exited) return;
    const gone = new Promise<void>((r) => this.proc.once('exit', () => r()));
    try {
      this.proc.send({ id: 0, cmd: 'exit', args: {} });
    } catch {
      // The channel is already closed; the kill below covers it.
    }
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), graceMs);
    await gone;
    clearTimeout(timer);
  }
}

/** A child-side command handler; each declares the arguments its command is sent with. */
export type Handler = (args: never) => unknown;

/**
 * Serves requests in a child: each command runs its handler and the
 * result (or error message) is sent back. `exit` runs `onExit` and ends
 * the process.
 */
export function serve(handlers: Record<string, Handler>, onExit?: () => Promise<void> | void): void {
  process.on('message', (m: { id: number; cmd: string; args: unknown }) => {
    if (m.cmd === 'exit') {
      void Promise.resolve(onExit?.()).finally(() => process.exit(0));
      return;
    }
    const h = handlers[m.cmd];
    Promise.resolve()
      .then(() => {
        if (!h) throw new Error(`unknown command ${m.cmd}`);
        // The orchestrator sends each command the arguments its handler declares.
        return h(m.args as never);
      })
      .then(
        (value) => process.send?.({ id: m.id, ok: true, value }),
        (e: unknown) => process.send?.({ id: m.id, ok: false, error: e instanceof Error ? (e.stack ?? e.message) : String(e) }),
      );
  });
  // The orchestrator died: do not linger.
  process.on('disconnect', () => process.exit(0));
}

/** The open-file limit the wrapper set for this process, or undefined when unknown. */
export function fileLimit(): number | undefined {
  const n = Number(process.env.BENCH_NOFILE);
  return Number.isFinite(n) && n > 0 ? n : undefined;
}

/** CPU time this process spent in `probe`s so far, µs. */
let probedUs = 0;

function processCpuUs(): number {
  const u = process.cpuUsage();
  return u.user + u.system;
}

/**
 * Cumulative CPU time of this process, µs (user + system, every thread),
 * less what its `probe`s took: a window between two readings counts the
 * peer's own work, not the benchmark's questions about it.
 */
export function cpuMicros(): number {
  return processCpuUs() - probedUs;
}

/**
 * Runs `f`, a question of the benchmark's own to a peer (its counters for a
 * mark), and leaves the CPU it takes out of `cpuMicros`. Only up to `f`'s
 * return: what an asynchronous `f` does after its first `await` may run
 * beside the peer's own work, and is counted as the peer's.
 */
export function probe<T>(f: () => T): T {
  const a = processCpuUs();
  try {
    return f();
  } finally {
    probedUs += processCpuUs() - a;
  }
}

/** Runs a full garbage collection when the process was started with `--expose-gc`. */
export function fullGc(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc) {
    gc();
    gc();
  }
}
