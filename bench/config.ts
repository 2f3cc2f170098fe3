import type { ConnectionsConfig } from './scenarios/connections.js';
import type { CycleConfig } from './scenarios/cycle.js';
import type { E2eConfig } from './scenarios/e2e.js';
import type { EconomyConfig } from './scenarios/economy.js';
import type { FanoutConfig } from './scenarios/fanout.js';
import type { RecorderConfig } from './scenarios/recorder.js';
import type { StalledConfig } from './scenarios/stalled.js';
import { PEERS, type PeerName } from './server/peer.js';
import { POLLING_PEERS } from './server/polling.js';

/**
 * Benchmark settings: the full run, the quick run (about two minutes on two
 * cores), and the command-line overrides.
 */

/** The scenarios, in the order they run. */
export const SCENARIOS = ['cycle', 'fanout', 'e2e', 'connections', 'economy', 'recorder', 'stalled'] as const;
/** A scenario name (`snapshot` runs inside `fanout`, against the bridge). */
export type ScenarioName = (typeof SCENARIOS)[number];

/** Everything one run does. */
export interface BenchConfig {
  readonly mode: 'full' | 'quick';
  readonly only: readonly ScenarioName[];
  readonly peers: readonly PeerName[];
  readonly fanout: FanoutConfig;
  readonly connections: ConnectionsConfig & { readonly peers: readonly PeerName[] };
  readonly cycle: CycleConfig;
  readonly economy: EconomyConfig;
  readonly recorder: RecorderConfig;
  /** The end-to-end scenario; its peers are those of `--peers` that poll (bridge, socketio). */
  readonly e2e: E2eConfig;
  readonly stalled: StalledConfig;
  /** Where the results file goes. */
  readonly out: string;
  /** Processes to CPU-profile (`--cpu-prof`), profiles written to bench/results/profiles/. */
  readonly profile: readonly ('server' | 'load')[];
  /** Before each measured run, wait up to this long for the machine to go quiet, s (0: do not wait). */
  readonly waitIdleS: number;
  /** Exit 1 when a figure is past its CI limit (bench/check.ts). */
  readonly check: boolean;
  /** Fan-out rounds: each runs every peer once; figures are medians over rounds (bench/lib/rounds.ts). */
  readonly rounds: number;
}

const SEED = 20_240_603;
const SYMBOLS = 4_500;

const FULL: Omit<BenchConfig, 'only' | 'peers' | 'out' | 'profile' | 'waitIdleS' | 'check' | 'rounds'> = {
  mode: 'full',
  fanout: {
    symbols: SYMBOLS,
    clients: 2_000,
    topicsPerClient: 50,
    changeRatio: 0.3,
    tickMs: 200,
    seed: SEED,
    warmupMs: 5_000,
    windows: 5,
    windowMs: 4_000,
    concurrency: 200,
    drainMs: 2_000,
    snapshotProbes: 5,
  },
  connections: {
    count: 18_000,
    topicsPerClient: 20,
    symbols: SYMBOLS,
    seed: SEED,
    concurrency: 200,
    perAddress: 100,
    perLoadProcess: 10_000,
    snapshotProbes: 5,
    peers: ['bridge', 'floor'],
  },
  cycle: { symbols: SYMBOLS, changeRatio: 0.3, seed: SEED, warmup: 30, cycles: 100 },
  economy: { measureMs: 30_000, idleMs: 15_000 },
  recorder: { symbols: SYMBOLS, changeRatio: 0.3, seed: SEED, warmup: 30, cycles: 100 },
  e2e: {
    symbols: SYMBOLS,
    clients: 1_000,
    topicsPerClient: 50,
    changeRatio: 0.3,
    periodMs: 1_000,
    seed: SEED,
    warmupMs: 5_000,
    windows: 5,
    windowMs: 5_000,
    concurrency: 200,
    drainMs: 2_000,
    perAddress: 100,
    peers: POLLING_PEERS,
  },
  // KOSPI and KOSDAQ as listed (about 2,500 and 1,800 symbols with ETFs and ETNs): a KRX-sized market.
  stalled: {
    stalled: 30,
    kospi: 2_600,
    kosdaq: 1_900,
    changeRatio: 0.3,
    seed: SEED,
    feedIntervalMs: 1_000,
    warmupMs: 15_000,
    baselineMs: 10_000,
    behindWithinMs: 20_000,
    holdMs: 5_000,
  },
};

const QUICK: Omit<BenchConfig, 'only' | 'peers' | 'out' | 'profile' | 'waitIdleS' | 'check' | 'rounds'> = {
  mode: 'quick',
  fanout: { ...FULL.fanout, clients: 400, warmupMs: 1_000, windows: 3, windowMs: 1_000, drainMs: 400, snapshotProbes: 3 },
  connections: { ...FULL.connections, count: 1_500, perLoadProcess: 1_000, snapshotProbes: 3, peers: ['bridge'] },
  cycle: { ...FULL.cycle, warmup: 10, cycles: 60 },
  economy: { measureMs: 3_000, idleMs: 2_000 },
  recorder: { ...FULL.recorder, warmup: 10, cycles: 60 },
  e2e: { ...FULL.e2e, warmupMs: 3_000, windows: 3, windowMs: 3_000, drainMs: 500 },
  stalled: { ...FULL.stalled, warmupMs: 3_000, baselineMs: 3_000, holdMs: 2_000 },
};

/** Usage text of `npm run bench`. */
export const USAGE = `usage: npm run bench [-- options]
  --quick              smaller run, about two minutes on two cores
  --only=a,b           scenarios to run: ${SCENARIOS.join(', ')} (default all)
  --peers=a,b          fan-out peers: ${PEERS.join(', ')} (default all; e2e runs those of them that poll: ${POLLING_PEERS.join(', ')})
  --clients=N          fan-out clients (default 2000, quick 400)
  --connections=N      connections scenario size (default 18000, quick 1500)
  --e2e-clients=N      end-to-end scenario clients (default 1000)
  --out=PATH           results file (default bench/results/latest.json)
  --profile=server,load  write V8 CPU profiles of those processes to bench/results/profiles/
  --wait-idle=S        before each measured run, wait up to S seconds for other processes to leave the CPUs
  --check              exit 1 when a figure is past its CI limit (see the targets table)
  --rounds=N           run the fan-out and e2e peers N times in turn; figures are medians over the rounds (default 1)`;

function list<T extends string>(value: string, allowed: readonly T[], what: string): T[] {
  const items = value.split(',').filter(Boolean);
  for (const i of items) if (!(allowed as readonly string[]).includes(i)) throw new Error(`unknown ${what} "${i}"\n${USAGE}`);
  return items as T[];
}

function count(value: string, what: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${what} must be a positive integer\n${USAGE}`);
  return n;
}

/** The configuration for command-line arguments (without the node and script paths). */
export function parseArgs(argv: readonly string[]): BenchConfig {
  const quick = argv.includes('--quick');
  const base = quick ? QUICK : FULL;
  let only: ScenarioName[] = [...SCENARIOS];
  let peers: PeerName[] = [...PEERS];
  let fanout = base.fanout;
  let connections = base.connections;
  let out = 'bench/results/latest.json';
  let profile: ('server' | 'load')[] = [];
  let waitIdleS = 0;
  let check = false;
  let rounds = 1;
  let e2eClients = base.e2e.clients;
  for (const a of argv) {
    const [k, v = ''] = a.split('=', 2) as [string, string?];
    if (k === '--quick') continue;
    else if (k === '--check') check = true;
    else if (k === '--rounds') rounds = count(v, '--rounds');
    else if (k === '--only') only = list(v, SCENARIOS, 'scenario');
    else if (k === '--peers') peers = list(v, PEERS, 'peer');
    else if (k === '--clients') fanout = { ...fanout, clients: count(v, '--clients') };
    else if (k === '--connections') connections = { ...connections, count: count(v, '--connections') };
    else if (k === '--e2e-clients') e2eClients = count(v, '--e2e-clients');
    else if (k === '--out' && v) out = v;
    else if (k === '--wait-idle') waitIdleS = count(v, '--wait-idle');
    else if (k === '--profile') profile = list(v || 'server', ['server', 'load'] as const, 'process');
    else throw new Error(`unknown option ${a}\n${USAGE}`);
  }
  const e2e = { ...base.e2e, clients: e2eClients, peers: base.e2e.peers.filter((p) => peers.includes(p)) };
  return { ...base, fanout, connections, e2e, only, peers, out, profile, waitIdleS, check, rounds };
}
