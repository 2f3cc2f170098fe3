import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/sim/index.js';
import { MIN_CYCLE_GAP_MS, TestClient, cycleGaps, pollCycles, until } from '../bridge/helpers.js';
import {
  REDIS_URL,
  bundleCli,
  clusterEnv,
  dropPrefix,
  leaderOf,
  spawnBridge,
  startSim,
  stopBridge,
  truthAt,
  uniquePrefix,
  type BridgeProc,
} from './harness.js';

/**
 * Three bridge processes against one simulator: a client that leaves one
 * process resumes on another with exactly the patches it missed; the
 * leader is killed with SIGKILL and another process polls within two lease
 * periods, with continuous seqs on the survivors and never two pollers in
 * one wall-clock second.
 */

const LEASE_MS = 2000;
const QUOTE = ['005930', '000660', '035420', '005380'];
const LIST = 'v2.multiquote.lists';

/** A client preloaded with another client's rows and seqs, so it checks continuity across the move. */
function carryOver(from: TestClient, to: TestClient): Record<string, number> {
  const since: Record<string, number> = {};
  for (const [t, seq] of from.seqs) {
    since[t] = seq;
    to.seqs.set(t, seq);
    to.rows.set(t, { ...from.rows.get(t)! });
  }
  return since;
}

describe('cluster failover and resume', () => {
  let sim: Simulator;
  let simUrl: string;
  let cli: { path: string; remove: () => void };
  let startedAt: number;
  const prefix = uniquePrefix();
  const members: BridgeProc[] = [];
  const clients: TestClient[] = [];

  beforeAll(async () => {
    ({ sim, url: simUrl } = await startSim());
    cli = await bundleCli();
    startedAt = Math.floor(Date.now() / 1000);
    members.push(
      ...(await Promise.all(['a', 'b', 'c'].map((n) => spawnBridge(cli.path, n, clusterEnv(simUrl, REDIS_URL, prefix, { LEASE_MS: String(LEASE_MS) }))))),
    );
  }, 60_000);
  afterAll(async () => {
    for (const c of clients) c.close();
    await Promise.all(members.map((m) => stopBridge(m)));
    await sim?.stop();
    await dropPrefix(REDIS_URL, prefix);
    cli?.remove();
  }, 30_000);

  async function client(m: BridgeProc): Promise<TestClient> {
    const c = await new TestClient(m.wsUrl).ready();
    clients.push(c);
    return c;
  }

  it('resumes a client on another process with exactly the patches it missed', async () => {
    const [a, b, c] = members;
    // Someone stays subscribed on a third process, so the feed keeps changing while the client is away.
    const keeper = await client(c!);
    await keeper.request({ op: 'subscribe', channel: 'quote', market: 'kospi', codes: QUOTE });
    const x = await client(a!);
    await x.request({ op: 'subscribe', channel: 'quote', market: 'kospi', codes: QUOTE });
    await until(() => QUOTE.every((c) => (x.seqs.get(`quote.kospi.${c}`) ?? 0) >= 3), 20_000, 'a few patches on A');
    const epoch = x.epoch;
    x.close();
    // Patches of every topic go by while the client is away (more than one per topic in all).
    const missed = () => QUOTE.map((code) => (keeper.seqs.get(`quote.kospi.${code}`) ?? 0) - (x.seqs.get(`quote.kospi.${code}`) ?? 0));
    await until(() => missed().every((n) => n > 0) && missed().reduce((a, n) => a + n, 0) > QUOTE.length + 1, 20_000, 'changes missed on every topic');

    const y = await client(b!);
    expect(y.epoch).toBe(epoch);
    const since = carryOver(x, y);
    const mark = y.messages.length;
    await y.request({ op: 'subscribe', channel: 'quote', market: 'kospi', codes: QUOTE, since, epoch });
    const data = () => y.messages.slice(mark).filter((m) => m.type === 'snapshot' || m.type === 'patch');
    await until(() => data().length > QUOTE.length && Object.keys(since).every((t) => y.seqs.get(t)! > since[t]!), 5000, 'the missed changes');
    const replayed = data();
    expect(replayed.filter((m) => m.type === 'snapshot')).toEqual([]);
    // Several seconds of changes came back as patches, each following the seq the client had.
    expect(replayed.length).toBeGreaterThan(QUOTE.length);
    for (const t of Object.keys(since)) expect(y.seqs.get(t)!).toBeGreaterThan(since[t]!);
    expect(y.problems).toEqual([]);
  }, 40_000);

  it('survives SIGKILL of the leader: another polls within two lease periods, seqs stay continuous, never two pollers at once', async () => {
    const leader = await leaderOf(members);
    const survivors = members.filter((m) => m !== leader);
    const watchers = await Promise.all(survivors.map((m) => client(m)));
    const onLeader = await client(leader);
    for (const c of [...watchers, onLeader]) await c.request({ op: 'subscribe', channel: 'quote', market: 'kospi', codes: QUOTE });
    await until(() => [...watchers, onLeader].every((c) => c.ofType('patch').length > 0), 10_000, 'patches on every process');
    const frames = onLeader.frames.length;
    // Kill just after a batch went out, so no call of the old leader is in flight.
    await until(() => onLeader.frames.length > frames, 5000, 'a batch');
    const listCalls = () => sim.stats.snapshot().byEndpoint[LIST] ?? 0;
    const callsAtKill = listCalls();
    const killedAt = Date.now();
    leader.proc.kill('SIGKILL');
    await until(() => listCalls() > callsAtKill, 4 * LEASE_MS, 'a call by the new leader');
    const takeover = Date.now() - killedAt;
    console.log('failover figures', JSON.stringify({ leaseMs: LEASE_MS, takeoverMs: takeover }));
    expect(takeover).toBeLessThan(2 * LEASE_MS);
    const next = await leaderOf(survivors);
    expect(survivors).toContain(next);

    // The client of the dead process resumes on a survivor with exactly what it missed.
    const moved = await client(survivors[0]!);
    const since = carryOver(onLeader, moved);
    await moved.request({ op: 'subscribe', channel: 'quote', market: 'kospi', codes: QUOTE, since, epoch: onLeader.epoch });
    const seqsAfter = new Map(watchers.map((w) => [w, w.seqs.get(`quote.kospi.${QUOTE[0]}`) ?? 0]));
    const movedOn = () => watchers.every((w) => (w.seqs.get(`quote.kospi.${QUOTE[0]}`) ?? 0) > seqsAfter.get(w)!) && moved.ofType('patch').length > 0;
    await until(movedOn, 15_000, 'patches under the new leader');
    for (const w of watchers) {
      expect(w.problems).toEqual([]);
      expect(w.closed).toBeUndefined();
      expect(w.seqs.get(`quote.kospi.${QUOTE[0]}`)!).toBeGreaterThan(seqsAfter.get(w)!);
      // Continuity across the takeover: no snapshot after the first one per topic.
      expect(w.ofType('snapshot').length).toBe(QUOTE.length);
    }
    expect(moved.problems).toEqual([]);
    expect(moved.ofType('snapshot')).toEqual([]);

    // Never two pollers at once: the one list feed's cycles are one call each, never closer than one poller spaces them.
    const cycles = pollCycles(sim.stats.callTimes(LIST), startedAt * 1000, Date.now());
    expect(cycles.length).toBeGreaterThan(5);
    for (const c of cycles) expect(c.calls, `calls of the cycle at ${c.at}`).toBe(1);
    for (const g of cycleGaps(cycles)) expect(g).toBeGreaterThanOrEqual(MIN_CYCLE_GAP_MS);

    // And the survivors' clients still match the simulator.
    const pausedAt = Date.now();
    sim.pause();
    try {
      // Two polls since the pause: the second was asked after the first's answer, so after the pause.
      await until(() => pollCycles(sim.stats.callTimes(LIST), pausedAt, Infinity).length >= 2, 10_000, 'two polls of the frozen market');
      const truth = await truthAt(simUrl, LIST, { marketcode: 'kospi' });
      for (const c of [...watchers, moved]) for (const code of QUOTE) expect(c.rows.get(`quote.kospi.${code}`)).toEqual(truth.get(code));
    } finally {
      sim.resume();
    }
  }, 60_000);
});
