import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { cpus, loadavg, platform, totalmem } from 'node:os';
import { parseArgs, type BenchConfig, type ScenarioName } from './config.js';
import { Child, canPin } from './lib/child.js';
import { median } from './lib/stats.js';
import { medianRatios, mergeRounds, roundRatios } from './lib/rounds.js';
import { summariseDir } from './lib/profile.js';
import { waitForQuiet } from './lib/procstat.js';
import { checkResults, checkTable } from './check.js';
import { report, type Results } from './report.js';
import { runConnections } from './scenarios/connections.js';
import type { CycleResult } from './scenarios/cycle.js';
import { runE2e } from './scenarios/e2e.js';
import type { EconomyResult } from './scenarios/economy.js';
import type { RecorderResult } from './scenarios/recorder.js';
import { runFanoutPeer, type PeerResult } from './scenarios/fanout.js';
import { runStalled, stalledTable, type StalledResult, type StalledResults } from './scenarios/stalled.js';
import type { PeerName } from './server/peer.js';

/**
 * `npm run bench [-- --quick]`: runs the scenarios, prints a table per
 * scenario and writes bench/results/latest.json. See bench/README.md.
 */

const log = (s: string): void => void process.stderr.write(s + '\n');

function errorOf(e: unknown): { error: string } {
  return { error: e instanceof Error ? e.message : String(e) };
}

/** Waits for a quiet machine when `--wait-idle` asks for it; returns the seconds waited. */
async function settle(cfg: BenchConfig): Promise<number | undefined> {
  if (cfg.waitIdleS <= 0) return undefined;
  const ms = await waitForQuiet(0.3, cfg.waitIdleS * 1000, cpus().length);
  if (ms > 2_500) log(`  waited ${(ms / 1000).toFixed(0)} s for the machine to go quiet`);
  return Math.round(ms / 100) / 10;
}

async function inServer<T>(cmd: string, args: unknown, timeoutMs: number): Promise<T> {
  const server = new Child({ name: `server(${cmd})`, script: 'bench/server/main.ts', core: 0 });
  try {
    return await server.request<T>(cmd, args, timeoutMs);
  } finally {
    await server.close();
  }
}

async function fanout(cfg: BenchConfig, results: Results): Promise<void> {
  const f = cfg.fanout;
  const out: Record<string, unknown> = {
    clients: f.clients,
    topicsPerClient: f.topicsPerClient,
    symbols: f.symbols,
    changeRatio: f.changeRatio,
    tickMs: f.tickMs,
  };
  const rounds: Record<string, PeerResult | undefined>[] = [];
  const failed = new Map<PeerName, { error: string }>();
  for (let round = 0; round < cfg.rounds; round++) {
    const got: Record<string, PeerResult | undefined> = {};
    for (const peer of cfg.peers) {
      if (failed.has(peer)) continue;
      log(`fanout: ${peer}${cfg.rounds > 1 ? ` (round ${round + 1} of ${cfg.rounds})` : ''}`);
      try {
        // Profiles are of the first round only.
        const dir = (proc: 'server' | 'load'): string | undefined =>
          round === 0 && cfg.profile.includes(proc) ? `bench/results/profiles/${peer}-${proc}` : undefined;
        const dirs = { server: dir('server'), load: dir('load') };
        for (const d of Object.values(dirs)) if (d) rmSync(d, { recursive: true, force: true });
        const waitedIdleS = await settle(cfg);
        const r = await runFanoutPeer(peer, f, log, dirs);
        got[peer] = { ...r, ...profiles(peer, dirs), ...(waitedIdleS !== undefined ? { waitedIdleS } : {}) };
      } catch (e) {
        failed.set(peer, errorOf(e));
        log(`  ${peer} failed: ${(e as Error).message}`);
      }
    }
    rounds.push(got);
  }
  for (const peer of cfg.peers) {
    const mine = rounds.map((r) => r[peer]).filter((r): r is PeerResult => r !== undefined);
    out[peer] = failed.get(peer) ?? (mine.length === 1 ? mine[0] : mergeRounds(mine));
  }
  // Each round's ratios pair peers that ran close together; the run's ratios are their medians.
  const perRound = rounds.map(roundRatios);
  out.ratios = medianRatios(perRound);
  if (cfg.rounds > 1) out.roundRatios = perRound;
  results.fanout = out;
  const probes = (out.bridge as PeerResult | undefined)?.snapshotProbes;
  results.snapshot = probes?.length
    ? {
        symbols: f.symbols,
        ms: median(probes.map((p) => p.ms)),
        maxMs: Math.max(...probes.map((p) => p.ms)),
        subscribedMs: median(probes.map((p) => p.subscribedMs)),
        probes: probes.length,
        underLoad: true,
        loadClients: f.clients,
      }
    : { skipped: cfg.peers.includes('bridge') ? 'the bridge fan-out run failed' : 'the bridge is not among --peers' };
}

/** Hot functions of the profiles written for a peer, also logged. */
function profiles(peer: string, dirs: { server?: string; load?: string }): { profile?: Record<string, unknown> } {
  const out: Record<string, unknown> = {};
  for (const [proc, dir] of Object.entries(dirs)) {
    if (!dir) continue;
    const s = summariseDir(dir)[0];
    if (!s) continue;
    out[proc] = s;
    log(`  ${peer} ${proc} profile (${s.file}), self time:`);
    for (const h of s.hot.slice(0, 10)) log(`    ${String(h.pct).padStart(5)}%  ${h.fn}`);
  }
  return Object.keys(out).length ? { profile: out } : {};
}

async function connections(cfg: BenchConfig, results: Results): Promise<void> {
  const c = cfg.connections;
  const out: Record<string, unknown> = {};
  for (const peer of c.peers) {
    log(`connections: ${peer}`);
    await settle(cfg);
    try {
      const r = await runConnections(peer, c, log);
      if (peer === 'bridge') Object.assign(out, r);
      else out[peer] = r;
    } catch (e) {
      if (peer === 'bridge') Object.assign(out, errorOf(e));
      else out[peer] = errorOf(e);
    }
  }
  results.connections = out;
}

/** Whether a scenario, or one peer of a scenario, recorded an error. */
function hasErrors(results: Results): boolean {
  const isError = (v: unknown): boolean => v !== null && typeof v === 'object' && 'error' in v;
  return Object.values(results).some((v) => isError(v) || (v !== null && typeof v === 'object' && Object.values(v).some(isError)));
}

function machine(): Record<string, unknown> {
  const c = cpus();
  return {
    cpus: c.length,
    model: c[0]?.model.trim() ?? 'unknown',
    node: process.version,
    platform: platform(),
    memoryGb: Math.round(totalmem() / 2 ** 30),
    pinned: canPin(),
    loadavgAtStart: loadavg().map((l) => Math.round(l * 100) / 100),
  };
}

async function main(): Promise<void> {
  const cfg = parseArgs(process.argv.slice(2));
  const t0 = Date.now();
  const results: Results & StalledResults = { machine: machine(), mode: cfg.mode, startedAt: new Date(t0).toISOString() };
  if (!canPin()) log('note: taskset unavailable or fewer than two cores: server and load are not pinned');
  const timings: Record<string, number> = {};
  const timed = async (name: ScenarioName, run: () => Promise<void>): Promise<void> => {
    if (!cfg.only.includes(name)) return;
    const t = Date.now();
    await run();
    timings[name] = Math.round((Date.now() - t) / 100) / 10;
  };
  await timed('cycle', async () => {
    log('cycle');
    await settle(cfg);
    const profileDir = cfg.profile.includes('server') ? 'bench/results/profiles/cycle' : undefined;
    if (profileDir) rmSync(profileDir, { recursive: true, force: true });
    results.cycle = await inServer<CycleResult>('cycle', { ...cfg.cycle, ...(profileDir ? { profileDir } : {}) }, 300_000).catch(errorOf);
    const prof = (results.cycle as CycleResult).profile;
    if (prof) {
      for (const [path, hot] of Object.entries(prof)) {
        log(`  cycle ${path} path profile (${profileDir}/cycle-${path}.cpuprofile), self time:`);
        for (const h of hot.slice(0, 10)) log(`    ${String(h.pct).padStart(5)}%  ${h.fn}`);
      }
    }
  });
  await timed('fanout', () => fanout(cfg, results));
  await timed('e2e', async () => {
    const profileDir = (peer: string): string => `bench/results/profiles/e2e-${peer}-server`;
    const profiling = cfg.profile.includes('server');
    if (profiling) for (const p of cfg.e2e.peers) rmSync(profileDir(p), { recursive: true, force: true });
    results.e2e = await runE2e(cfg.e2e, { rounds: cfg.rounds, settle: () => settle(cfg), log, ...(profiling ? { profileDir } : {}) }).catch(errorOf);
    if (profiling) for (const p of cfg.e2e.peers) profiles(`e2e ${p}`, { server: profileDir(p) });
  });
  await timed('connections', () => connections(cfg, results));
  await timed('economy', async () => {
    log('economy');
    results.economy = await inServer<EconomyResult>('economy', cfg.economy, 300_000).catch(errorOf);
  });
  await timed('recorder', async () => {
    log('recorder');
    await settle(cfg);
    results.recorder = await inServer<RecorderResult>('recorder', cfg.recorder, 300_000).catch(errorOf);
  });
  await timed('stalled', async () => {
    log('stalled');
    await settle(cfg);
    results.stalled = await runStalled(cfg.stalled, log).catch(errorOf);
  });
  results.timingsS = timings;
  const ran = [...cfg.only, ...(cfg.only.includes('fanout') ? ['snapshot'] : [])];
  const outcomes = checkResults(results, ran, cfg.peers);
  results.targets = outcomes;
  results.machine.loadavgAtEnd = loadavg().map((l) => Math.round(l * 100) / 100);
  results.durationS = Math.round((Date.now() - t0) / 100) / 10;
  mkdirSync(dirname(cfg.out), { recursive: true });
  writeFileSync(cfg.out, JSON.stringify(results, (_k, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? null : v), 2) + '\n');
  const stalled = !cfg.only.includes('stalled')
    ? ''
    : '\n\n' +
      ('error' in (results.stalled ?? {})
        ? `stalled: error: ${(results.stalled as { error: string }).error.split('\n')[0]}`
        : stalledTable(cfg.stalled, results.stalled as StalledResult));
  process.stdout.write(report(cfg, results) + stalled + '\n\n' + checkTable(outcomes, cfg.check) + `\n\nwritten to ${cfg.out} in ${results.durationS} s\n`);
  if (hasErrors(results) || (cfg.check && outcomes.some((o) => !o.withinCi))) process.exitCode = 1;
}

main().catch((e: unknown) => {
  log(e instanceof Error ? e.message : String(e));
  process.exitCode = 2;
});
