import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { createClient } from 'redis';
import { afterAll, beforeAll } from 'vitest';
import { clusterKeys, type ClusterKeys } from '../../src/cluster/keys.js';
import { Simulator } from '../../src/sim/index.js';
import { endpoint } from '../../src/upstream/catalogue.js';
import { normaliseBody, type Row } from '../../src/upstream/normalise.js';
import { renderPath } from '../../src/upstream/paths.js';
import { TestClient, sleep, until } from '../bridge/helpers.js';

/**
 * Test bed of the cluster tests: one simulator in the test process, bridge
 * processes spawned from a bundle of src/cli.ts (built once per test file,
 * so a process starts in about a second), a unique Redis key prefix per
 * run, and a test-owned redis-server for the restart test.
 */

/** The simulator's key in these tests. */
export const SIM_KEY = 'cluster-test-key-5b8e1d';
/** The shared Redis of the test machine. */
export const REDIS_URL = process.env.KRX_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** A Redis client as the tests use them. */
export type RedisClient = ReturnType<typeof createClient>;

/** A test file's Redis: its own key prefix and a client connected before its tests. */
export interface RedisSuite {
  readonly prefix: string;
  readonly keys: ClusterKeys;
  /** The client (set once the suite's `beforeAll` ran). */
  readonly redis: RedisClient;
}

/**
 * Registers the hooks of a test file that talks to Redis: connects a client
 * before its tests, and closes it and deletes every key under the file's
 * prefix after them. Call at the top of a `describe`.
 */
export function redisSuite(): RedisSuite {
  const prefix = uniquePrefix();
  let client: RedisClient | undefined;
  beforeAll(async () => {
    client = createClient({ url: REDIS_URL });
    // Errors are the tests' to see through failed commands.
    client.on('error', () => undefined);
    await client.connect();
  });
  afterAll(async () => {
    await client?.close();
    await dropPrefix(REDIS_URL, prefix);
  });
  return {
    prefix,
    keys: clusterKeys(prefix),
    get redis(): RedisClient {
      if (!client) throw new Error('redisSuite: the client connects in beforeAll');
      return client;
    },
  };
}

/** A key prefix no other test run uses. */
export function uniquePrefix(): string {
  return `krxtest:${process.pid}:${randomBytes(3).toString('hex')}:`;
}

/** Deletes every key under `prefix`. */
export async function dropPrefix(url: string, prefix: string): Promise<void> {
  const c = createClient({ url });
  c.on('error', () => undefined);
  try {
    await c.connect();
    for await (const keys of c.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 })) if (keys.length) await c.del(keys);
  } catch {
    // Redis may already be gone (the restart test kills its own).
  } finally {
    if (c.isOpen) await c.close().catch(() => undefined);
  }
}

/** Starts the shared simulator (market open, ticking every second). */
export async function startSim(): Promise<{ sim: Simulator; url: string }> {
  const sim = new Simulator({ apiKey: SIM_KEY, clock: 'open', dailyLimit: 100_000_000 });
  const { url } = await sim.start({ port: 0, host: '127.0.0.1' });
  return { sim, url };
}

/** Bundles src/cli.ts for spawning; returns the bundle's path and a remover. */
export async function bundleCli(): Promise<{ path: string; remove: () => void }> {
  // Inside node_modules so the bundle's bare imports resolve to the project's packages.
  const dir = `${ROOT}node_modules/.cache/krx-cluster-test/${process.pid}-${randomBytes(3).toString('hex')}`;
  mkdirSync(dir, { recursive: true });
  const path = `${dir}/cli.mjs`;
  await build({ entryPoints: [`${ROOT}src/cli.ts`], bundle: true, platform: 'node', format: 'esm', packages: 'external', outfile: path, logLevel: 'error' });
  return { path, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A bridge process. */
export interface BridgeProc {
  readonly name: string;
  readonly proc: ChildProcess;
  readonly url: string;
  readonly wsUrl: string;
  /** Its log lines (JSON). */
  readonly logs: string[];
  /** Set once it exited. */
  exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  /** Its `/status`. */
  status(): Promise<StatusBody>;
}

/** What the tests read of `/status`. */
export interface StatusBody {
  epoch: string;
  feeds: { channel: string; market: string; state: string }[];
  symbols: Record<string, number>;
  cluster?: { node: string; role: string; polling: boolean; generation: number | null; backplane: string; epochConfirmed: boolean };
}

/** The variables of a `faketime` wrapper around the test run, so the bridges keep the clock the test has. */
function fakeClock(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && (k.startsWith('FAKETIME') || k === 'LD_PRELOAD')) out[k] = v;
  return out;
}

/** Starts `node <cli>` with `env` and waits until it listens. */
export async function spawnBridge(cli: string, name: string, env: Record<string, string>): Promise<BridgeProc> {
  const proc = spawn(process.execPath, [cli], {
    cwd: ROOT,
    env: {
      ...fakeClock(),
      PATH: process.env.PATH ?? '',
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      MARKET_CLOCK: 'always',
      STATE: 'off',
      RECORD: 'off',
      NAMES_PER_DAY: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  let url = '';
  let buf = '';
  const onData = (d: Buffer) => {
    buf += d.toString();
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      logs.push(line);
      if (!url && line.includes('krx-bridge listening')) url = (JSON.parse(line) as { url: string }).url;
    }
  };
  proc.stdout!.on('data', onData);
  proc.stderr!.on('data', onData);
  const b: BridgeProc = {
    name,
    proc,
    logs,
    exit: undefined,
    get url() {
      return url;
    },
    get wsUrl() {
      return `${url.replace(/^http/, 'ws')}/ws`;
    },
    status: async () => (await (await fetch(`${url}/status`)).json()) as StatusBody,
  };
  proc.once('exit', (code, signal) => (b.exit = { code, signal }));
  await until(() => url !== '' || b.exit !== undefined, 30_000, `${name} listening`);
  if (!url) throw new Error(`${name} exited before listening: ${logs.slice(-5).join('\n')}`);
  return b;
}

/** Stops a bridge process (SIGTERM, then SIGKILL) and waits for its exit. */
export async function stopBridge(b: BridgeProc | undefined): Promise<void> {
  if (!b || b.exit) return;
  const exited = new Promise<void>((r) => b.proc.once('exit', () => r()));
  b.proc.kill('SIGTERM');
  const kill = setTimeout(() => b.proc.kill('SIGKILL'), 8000);
  await exited;
  clearTimeout(kill);
}

/** Environment of a cluster member. */
export function clusterEnv(simUrl: string, redisUrl: string, prefix: string, extra: Record<string, string> = {}): Record<string, string> {
  return { UPSTREAM_URL: simUrl, UPSTREAM_API_KEY: SIM_KEY, REDIS_URL: redisUrl, REDIS_PREFIX: prefix, IDLE_GRACE_MS: '1000', ...extra };
}

/** The member that polls now, once exactly one does. */
export async function leaderOf(members: readonly BridgeProc[], timeoutMs = 15_000): Promise<BridgeProc> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const live = members.filter((m) => !m.exit);
    const states = await Promise.all(live.map((m) => m.status().catch(() => undefined)));
    const polling = live.filter((_, i) => states[i]?.cluster?.polling);
    if (polling.length === 1) return polling[0]!;
    if (Date.now() > end) throw new Error(`no single leader: ${polling.length} polling`);
    await sleep(100);
  }
}

/** A test file's cluster: a simulator, the bundled CLI, a key prefix of its own, and the members and clients it started. */
export interface ClusterBed {
  readonly prefix: string;
  /** The simulator and its URL, the bundle's path (set once the file's `beforeAll` ran). */
  readonly sim: Simulator;
  readonly simUrl: string;
  readonly cli: string;
  /** Members started through `spawn`, in order. */
  readonly members: BridgeProc[];
  /** Starts a member joined to the cluster (`clusterEnv` plus `extra`); stopped after the file's tests. */
  spawn(name: string, extra?: Record<string, string>): Promise<BridgeProc>;
  /** A client of `m`, welcomed; closed after the file's tests. */
  client(m: BridgeProc): Promise<TestClient>;
}

/**
 * Registers the hooks of a test file that runs bridge processes joined by
 * the shared Redis: starts the simulator and bundles the CLI before its
 * tests; after them closes its clients, stops its members and the
 * simulator, deletes its keys and the bundle. Call at the top of a
 * `describe`.
 */
export function clusterBed(): ClusterBed {
  const prefix = uniquePrefix();
  const members: BridgeProc[] = [];
  const clients: TestClient[] = [];
  let started: { sim: Simulator; url: string } | undefined;
  let bundle: { path: string; remove: () => void } | undefined;
  beforeAll(async () => {
    started = await startSim();
    bundle = await bundleCli();
  }, 60_000);
  afterAll(async () => {
    for (const c of clients) c.close();
    await Promise.all(members.map((m) => stopBridge(m)));
    await started?.sim.stop();
    await dropPrefix(REDIS_URL, prefix);
    bundle?.remove();
  }, 30_000);
  const ready = <T>(v: T | undefined): T => {
    if (v === undefined) throw new Error('clusterBed: the simulator and the bundle start in beforeAll');
    return v;
  };
  const bed: ClusterBed = {
    prefix,
    members,
    get sim() {
      return ready(started).sim;
    },
    get simUrl() {
      return ready(started).url;
    },
    get cli() {
      return ready(bundle).path;
    },
    spawn: async (name, extra = {}) => {
      const m = await spawnBridge(bed.cli, name, clusterEnv(bed.simUrl, REDIS_URL, prefix, extra));
      members.push(m);
      return m;
    },
    client: async (m) => {
      const c = new TestClient(m.wsUrl);
      clients.push(c);
      return c.ready();
    },
  };
  return bed;
}

/** A free TCP port on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** A redis-server owned by a test (no persistence), restartable on the same port. */
export class OwnRedis {
  private proc: ChildProcess | undefined;

  /** A server for `port`; `start()` to run it. */
  constructor(readonly port: number) {}

  /** Its URL. */
  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts it and waits until it answers. */
  async start(): Promise<void> {
    // On the real clock, like the shared Redis, whatever clock a faketime wrapper gives the test and its bridges.
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !(k in fakeClock())));
    this.proc = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore', env });
    const end = Date.now() + 10_000;
    for (;;) {
      const c = createClient({ url: this.url, socket: { reconnectStrategy: false } });
      c.on('error', () => undefined);
      try {
        await c.connect();
        await c.ping();
        await c.close();
        return;
      } catch {
        if (Date.now() > end) throw new Error(`redis-server on ${this.port} did not start`);
        await sleep(50);
      }
    }
  }

  /** Kills it (SIGKILL: everything it held is lost) and waits for the exit. */
  async kill(): Promise<void> {
    const p = this.proc;
    if (!p || p.exitCode !== null) return;
    const exited = new Promise((r) => p.once('exit', r));
    p.kill('SIGKILL');
    await exited;
  }
}

/** The simulator's current answer for an endpoint, normalised as the bridge does: rows by code. */
export async function truthAt(simUrl: string, endpointId: string, params: Record<string, unknown>): Promise<Map<string, Row>> {
  const e = endpoint(endpointId);
  const res = await fetch(`${simUrl}${renderPath(e, e.params.parse(params))}`, { headers: { apikey: SIM_KEY } });
  const n = normaliseBody(e.response, await res.json());
  if (!n.ok) throw new Error(n.reason);
  const rows = e.response.list ? n.value.rows : [n.value.data as Row];
  return new Map(rows.map((r) => [String(r.isuSrtCd ?? params.issuecode), r]));
}
