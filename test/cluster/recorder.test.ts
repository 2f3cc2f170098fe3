import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kstDate } from '../../src/market/calendar.js';
import { readDay } from '../../src/recorder/reader.js';
import type { Simulator } from '../../src/sim/index.js';
import { TestClient, until } from '../bridge/helpers.js';
import { REDIS_URL, bundleCli, clusterEnv, dropPrefix, leaderOf, spawnBridge, startSim, stopBridge, uniquePrefix, type BridgeProc } from './harness.js';

/**
 * The recorder in a cluster: every process receives every change, but only
 * the one holding the poller lease records; when it stops, the process that
 * takes the lease records from then on.
 */

const LEASE_MS = 2000;

/** The change lines each process's DATA_DIR holds for today (KST) and the times they were observed. */
async function recorded(dataDir: string): Promise<number[]> {
  const out: number[] = [];
  for await (const l of readDay(join(dataDir, 'recordings'), kstDate(Date.now()))) if (l.k === 'c') out.push(l.t);
  return out;
}

describe('recording in a cluster', () => {
  let sim: Simulator;
  let cli: { path: string; remove: () => void };
  const prefix = uniquePrefix();
  const members: BridgeProc[] = [];
  const dirs = new Map<BridgeProc, string>();
  const clients: TestClient[] = [];

  beforeAll(async () => {
    const started = await startSim();
    sim = started.sim;
    cli = await bundleCli();
    for (const n of ['a', 'b']) {
      const dir = mkdtempSync(join(tmpdir(), `krx-cluster-rec-${n}-`));
      const m = await spawnBridge(cli.path, n, clusterEnv(started.url, REDIS_URL, prefix, { LEASE_MS: String(LEASE_MS), RECORD: 'on', DATA_DIR: dir }));
      members.push(m);
      dirs.set(m, dir);
    }
  }, 60_000);
  afterAll(async () => {
    for (const c of clients) c.close();
    await Promise.all(members.map((m) => stopBridge(m)));
    await sim?.stop();
    await dropPrefix(REDIS_URL, prefix);
    cli?.remove();
  }, 30_000);

  it('only the lease holder records; the next one records once it holds the lease', async () => {
    const leader = await leaderOf(members);
    const follower = members.find((m) => m !== leader)!;
    // Subscribed on both, so both processes' gateways get every change.
    for (const m of members) {
      const c = await new TestClient(m.wsUrl).ready();
      clients.push(c);
      await c.request({ op: 'subscribe', channel: 'quote', market: 'kospi', codes: ['005930', '000660'] });
    }
    await until(() => clients.every((c) => (c.seqs.get('quote.kospi.005930') ?? 0) >= 4), 20_000, 'changes on both processes');
    await expect.poll(async () => (await recorded(dirs.get(leader)!)).length, { timeout: 10_000 }).toBeGreaterThan(0);
    expect(await recorded(dirs.get(follower)!)).toEqual([]);
    const handover = Date.now();
    await stopBridge(leader);
    await until(() => clients[members.indexOf(follower)]!.ofType('patch').some((m) => m.ts > handover + 1000), 20_000, 'changes after the handover');
    await expect.poll(async () => (await recorded(dirs.get(follower)!)).length, { timeout: 10_000 }).toBeGreaterThan(0);
    // What the new lease holder recorded is what it polled after the handover.
    expect(Math.min(...(await recorded(dirs.get(follower)!)))).toBeGreaterThan(handover);
  }, 60_000);
});
