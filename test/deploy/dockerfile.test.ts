import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { freePort } from '../cluster/harness.js';
import { envPairs, execForm, parseDockerfile, type Stage } from './dockerfile.js';

/**
 * No Docker engine runs on our machines, so this test runs the Dockerfile's
 * own steps as plain commands: in a temporary copy of the repository (git
 * ls-files) each stage's WORKDIR, ENV, COPY (also --from another
 * stage) and RUN are carried out in a directory standing for the stage's
 * filesystem; then the runtime stage's CMD is started there and probed with
 * its HEALTHCHECK command, and must exit 0 on SIGTERM. It skips itself only
 * when the npm registry cannot be reached.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const NETWORK = /ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|ECONNRESET|ENETUNREACH|network request|request to https?:\/\/\S+ failed/i;

interface Ran {
  code: number | null;
  output: string;
}

function run(cmd: string, args: string[], cwd: string, env: Record<string, string>, timeoutMs: number): Promise<Ran> {
  return new Promise((resolve) => {
    const p = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    p.stdout.on('data', (d: Buffer) => (output += d.toString()));
    p.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const t = setTimeout(() => p.kill('SIGKILL'), timeoutMs);
    p.on('close', (code) => {
      clearTimeout(t);
      resolve({ code, output });
    });
  });
}

/** The environment a RUN or CMD sees: a clean PATH/HOME (so npm uses this machine's cache) plus the stage's ENV. */
function baseEnv(extra: Record<string, string>): Record<string, string> {
  const keep = ['PATH', 'HOME', 'TMPDIR'].filter((k) => process.env[k] !== undefined).map((k) => [k, process.env[k]!]);
  return { ...Object.fromEntries(keep), ...extra };
}

/**
 * Copies the repository's files as they are on disk into `to`: what git
 * tracks plus new files it does not ignore (in a clean checkout, exactly the
 * tracked files), never node_modules or dist.
 */
function copyTracked(to: string): void {
  const list = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT });
  const files = list.toString().split('\0').filter(Boolean);
  for (const f of files) {
    const src = join(ROOT, f);
    if (!existsSync(src)) continue;
    mkdirSync(dirname(join(to, f)), { recursive: true });
    copyFileSync(src, join(to, f));
  }
}

/** Where a stage's container path lives on the host. */
const hostPath = (stageDir: string, containerPath: string) => join(stageDir, posix.resolve('/', containerPath));

interface Built {
  readonly dir: string;
  workdir: string;
  env: Record<string, string>;
  cmd?: string[];
  health?: string[];
  user?: string;
  expose?: string;
}

function copyStep(args: string, flags: Readonly<Record<string, string>>, st: Built, context: string, done: ReadonlyMap<string, Built>): void {
  const parts = args.split(/\s+/);
  const dest = parts.pop()!;
  const target = hostPath(st.dir, posix.resolve(st.workdir, dest));
  for (const src of parts) {
    const from = flags.from !== undefined ? done.get(flags.from) : undefined;
    if (flags.from !== undefined && !from) throw new Error(`COPY --from=${flags.from}: no such stage`);
    const source = from ? hostPath(from.dir, posix.resolve(from.workdir, src)) : join(context, src);
    if (statSync(source).isDirectory()) cpSync(source, target, { recursive: true });
    else {
      const into = dest.endsWith('/') || parts.length > 1;
      mkdirSync(into ? target : dirname(target), { recursive: true });
      copyFileSync(source, into ? join(target, basename(src)) : target);
    }
  }
}

/** Carries out one stage; returns undefined when the registry cannot be reached. */
async function buildStage(stage: Stage, tmp: string, context: string, done: ReadonlyMap<string, Built>): Promise<Built | undefined> {
  const st: Built = { dir: join(tmp, `stage-${stage.name}`), workdir: '/', env: {} };
  mkdirSync(st.dir, { recursive: true });
  for (const ins of stage.instructions) {
    if (ins.op === 'WORKDIR') {
      st.workdir = posix.resolve(st.workdir, ins.args);
      mkdirSync(hostPath(st.dir, st.workdir), { recursive: true });
    } else if (ins.op === 'ENV') Object.assign(st.env, envPairs(ins.args));
    else if (ins.op === 'COPY') copyStep(ins.args, ins.flags, st, context, done);
    else if (ins.op === 'RUN') {
      const r = await run('sh', ['-c', ins.args], hostPath(st.dir, st.workdir), baseEnv(st.env), 240_000);
      if (r.code !== 0 && NETWORK.test(r.output)) return undefined;
      if (r.code !== 0) throw new Error(`RUN ${ins.args} failed (${r.code}):\n${r.output.slice(-3000)}`);
    } else if (ins.op === 'CMD') st.cmd = execForm(ins.args);
    else if (ins.op === 'HEALTHCHECK') st.health = execForm(ins.args);
    else if (ins.op === 'USER') st.user = ins.args;
    else if (ins.op === 'EXPOSE') st.expose = ins.args;
    else throw new Error(`instruction ${ins.op} is not carried out by this test`);
  }
  return st;
}

describe('Dockerfile', () => {
  const stages = parseDockerfile(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));

  it('builds on node:20-bookworm-slim and runs dist/cli.js directly as the unprivileged node user', () => {
    expect(stages.map((s) => s.base)).toEqual(['node:20-bookworm-slim', 'node:20-bookworm-slim']);
    const [build, runtime] = stages as [Stage, Stage];
    const runs = (s: Stage) => s.instructions.filter((i) => i.op === 'RUN').map((i) => i.args);
    expect(runs(build).some((r) => /^npm ci\b/.test(r) && !r.includes('--omit'))).toBe(true);
    expect(runs(build)).toContain('npm run build');
    expect(runs(runtime).some((r) => r.startsWith('npm ci --omit=dev --ignore-scripts'))).toBe(true);
    const op = (s: Stage, name: string) => s.instructions.filter((i) => i.op === name);
    expect(op(runtime, 'COPY').some((i) => i.flags.from === build.name && i.args.startsWith('/app/dist'))).toBe(true);
    expect(op(runtime, 'USER').map((i) => i.args)).toEqual(['node']);
    expect(op(runtime, 'EXPOSE').map((i) => i.args)).toEqual(['8080']);
    const health = op(runtime, 'HEALTHCHECK')[0]!;
    expect(health.args).toContain('/healthz');
    expect(execForm(health.args)[0]).toBe('node');
    expect(execForm(op(runtime, 'CMD')[0]!.args)).toEqual(['node', 'dist/cli.js']);
  });

  it('builds and runs as written: the stages’ steps in a copy of the repository, then CMD answers its HEALTHCHECK and exits 0 on SIGTERM', async (ctx) => {
    const tmp = mkdtempSync(join(tmpdir(), 'krx-dockerfile-'));
    let proc: ChildProcess | undefined;
    try {
      const context = join(tmp, 'context');
      copyTracked(context);
      const done = new Map<string, Built>();
      for (const stage of stages) {
        const st = await buildStage(stage, tmp, context, done);
        if (!st) return ctx.skip('the npm registry is unreachable, so the Dockerfile’s npm ci cannot run here');
        done.set(stage.name, st);
      }
      const rt = done.get(stages.at(-1)!.name)!;
      expect(existsSync(hostPath(rt.dir, posix.join(rt.workdir, 'dist/cli.js')))).toBe(true);
      // Production dependencies only.
      expect(existsSync(hostPath(rt.dir, posix.join(rt.workdir, 'node_modules/ws')))).toBe(true);
      expect(existsSync(hostPath(rt.dir, posix.join(rt.workdir, 'node_modules/vitest')))).toBe(false);

      const port = String(await freePort());
      const env = baseEnv({ ...rt.env, PORT: port, HOST: '127.0.0.1', LOG_LEVEL: 'warn' });
      const cwd = hostPath(rt.dir, rt.workdir);
      const p = spawn(rt.cmd![0]!, rt.cmd!.slice(1), { cwd, env, stdio: 'ignore' });
      proc = p;
      const exited = new Promise<number | null>((resolve) => p.once('exit', (code) => resolve(code)));
      let healthy: Ran = { code: null, output: '' };
      const end = Date.now() + 30_000;
      while (Date.now() < end && p.exitCode === null) {
        healthy = await run(rt.health![0]!, rt.health!.slice(1), cwd, env, 5000);
        if (healthy.code === 0) break;
        await new Promise((r) => setTimeout(r, 250));
      }
      expect(healthy.code, healthy.output).toBe(0);
      p.kill('SIGTERM');
      expect(await exited).toBe(0);
      // The same probe fails once nothing answers.
      expect((await run(rt.health![0]!, rt.health!.slice(1), cwd, env, 5000)).code).not.toBe(0);
    } finally {
      if (proc && proc.exitCode === null) proc.kill('SIGKILL');
      rmSync(tmp, { recursive: true, force: true });
    }
  }, 180_000);
});
