import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerMsg } from '../../src/protocol/messages.js';
import type { Simulator } from '../../src/sim/index.js';
import { MIN_CYCLE_GAP_MS, TestClient, cycleGaps, pollCycles, sleep, until } from '../bridge/helpers.js';
import { OwnRedis, bundleCli, clusterEnv, freePort, leaderOf, spawnBridge, startSim, stopBridge, truthAt, uniquePrefix, type BridgeProc } from './harness.js';

/**
 * Two bridge processes on a test-owned redis-server, which is killed
 * (losing everything it held) and started again mid-test: no process
 * exits, clients stay connected and are told `degraded`, then `live`; the
 * processes re-seed Redis from memory under the same epoch, so seqs stay
 * continuous, and there is never a second poller.
 */

const LEASE_MS = 1500;
const QUOTE = ['005930', '000660', '035420'];
const LIST = 'v2.multiquote.lists';

type Status = Extract<ServerMsg, { type: 'status' }>;

describe('cluster through a Redis restart', () => {
  let sim: Simulator;
  let simUrl: string;
  let cli: { path: string; remove: () => void };
  let redis: OwnRedis;
  let startedAt: number;
  const members: BridgeProc[] = [];
  const clients: TestClient[] = [];

  beforeAll(async () => {
    ({ sim, url: simUrl } = await startSim());
    cli = await bundleCli();
    redis = new OwnRedis(await freePort());
    await redis.start();
    startedAt = Math.floor(Date.now() / 1000);
    const env = clusterEnv(simUrl, redis.url, uniquePrefix(), { LEASE_MS: String(LEASE_MS) });
    members.push(...(await Promise.all(['a', 'b'].map((n) => spawnBridge(cli.path, n, env)))));
  }, 60_000);
  afterAll(async () => {
    for (const c of clients) c.close();
    await Promise.all(members.map((m) => stopBridge(m)));
    await redis?.kill();
    await sim?.stop();
    cli?.remove();
  }, 30_000);

  const states = (c: TestClient) =>
    c
      .ofType('status')
      .filter((s: Status) => s.channel === 'quote' && s.market === 'kospi')
      .map((s: Status) => s.state);

  it('keeps clients connected, reports degraded then live, and resumes with continuous seqs and one poller', async () => {
    for (const m of members) {
      const c = await new TestClient(m.wsUrl).ready();
      clients.push(c);
      await c.request({ op: 'subscribe', channel: 'quote', market: 'kospi', codes: QUOTE });
    }
    await leaderOf(members);
    await until(() => clients.every((c) => states(c).includes('live') && c.seqs.size === QUOTE.length), 15_000, 'live data everywhere');
    const epoch = clients[0]!.epoch;
    expect(clients[1]!.epoch).toBe(epoch);
    // A change more through the cluster on every client before the outage.
    const seqsUp = clients.map((c) => c.seqs.get(`quote.kospi.${QUOTE[0]}`)!);
    await until(() => clients.every((c, i) => c.seqs.get(`quote.kospi.${QUOTE[0]}`)! > seqsUp[i]!), 10_000, 'a change on every client');

    await redis.kill();
    await until(() => clients.every((c) => states(c).at(-1) === 'degraded'), 10_000, 'degraded on every client');
    const seqsDown = clients.map((c) => c.seqs.get(`quote.kospi.${QUOTE[0]}`)!);
    for (const m of members) {
      const s = await m.status();
      expect(s.cluster?.backplane).toBe('down');
      expect(s.cluster?.polling).toBe(false);
      expect(s.feeds.find((f) => f.channel === 'quote' && f.market === 'kospi')?.state).toBe('degraded');
    }
    // An outage, not a wait: Redis stays down a while.
    await sleep(2000);
    await redis.start();

    await until(() => clients.every((c) => states(c).at(-1) === 'live'), 20_000, 'live again on every client');
    await until(() => clients.every((c, i) => c.seqs.get(`quote.kospi.${QUOTE[0]}`)! > seqsDown[i]!), 10_000, 'changes after the restart');
    // Two more changes on every client: the flow after the restart goes on without a resnapshot.
    const seqsBack = clients.map((c) => c.seqs.get(`quote.kospi.${QUOTE[0]}`)!);
    await until(() => clients.every((c, i) => c.seqs.get(`quote.kospi.${QUOTE[0]}`)! >= seqsBack[i]! + 2), 10_000, 'two more changes');
    for (const m of members) expect(m.exit, `${m.name} exited`).toBeUndefined();
    for (const c of clients) {
      expect(c.closed).toBeUndefined();
      expect(c.problems).toEqual([]);
      // Continuity kept: no snapshot beyond the first one of each topic.
      expect(c.ofType('snapshot').length).toBe(QUOTE.length);
    }
    // The same epoch survives (Redis was re-seeded from memory): a new client is welcomed with it.
    const late = await new TestClient(members[1]!.wsUrl).ready();
    clients.push(late);
    expect(late.epoch).toBe(epoch);
    const leader = await leaderOf(members);
    expect((await leader.status()).cluster?.backplane).toBe('up');

    // One poller throughout, before, during and after the restart: one call per cycle, never closer than one poller spaces them.
    const cycles = pollCycles(sim.stats.callTimes(LIST), startedAt * 1000, Date.now());
    for (const c of cycles) expect(c.calls, `calls of the cycle at ${c.at}`).toBe(1);
    for (const g of cycleGaps(cycles)) expect(g).toBeGreaterThanOrEqual(MIN_CYCLE_GAP_MS);

    const pausedAt = Date.now();
    sim.pause();
    try {
      // Two polls since the pause: the second was asked after the first's answer, so after the pause.
      await until(() => pollCycles(sim.stats.callTimes(LIST), pausedAt, Infinity).length >= 2, 10_000, 'two polls of the frozen market');
      const truth = await truthAt(simUrl, LIST, { marketcode: 'kospi' });
      for (const c of clients.slice(0, 2)) for (const code of QUOTE) expect(c.rows.get(`quote.kospi.${code}`)).toEqual(truth.get(code));
    } finally {
      sim.resume();
    }
    const metrics = await (await fetch(`${leader.url}/metrics`)).text();
    expect(metrics).toMatch(/^krx_cluster_leader 1$/m);
    expect(metrics).toMatch(/^krx_cluster_backplane_up 1$/m);
  }, 80_000);

  it('starts without Redis (degraded, serving), and joins when Redis appears', async () => {
    const later = new OwnRedis(await freePort());
    const env = clusterEnv(simUrl, later.url, uniquePrefix(), { LEASE_MS: String(LEASE_MS) });
    const lone = await spawnBridge(cli.path, 'lone', env);
    members.push(lone);
    try {
      const s = await lone.status();
      expect(s.cluster?.backplane).toBe('down');
      const c = await new TestClient(lone.wsUrl).ready();
      clients.push(c);
      await c.request({ op: 'subscribe', channel: 'quote', market: 'kospi', codes: QUOTE });
      await until(() => states(c).at(-1) === 'degraded', 5000, 'degraded on subscribe');
      await later.start();
      await until(() => states(c).at(-1) === 'live' && c.seqs.size === QUOTE.length, 20_000, 'live data once Redis answers');
      expect(c.problems).toEqual([]);
      expect((await lone.status()).cluster).toMatchObject({ backplane: 'up', role: 'leader', polling: true, epochConfirmed: true });
    } finally {
      await stopBridge(lone);
      await later.kill();
    }
  }, 40_000);
});
