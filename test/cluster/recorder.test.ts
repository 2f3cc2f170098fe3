import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { kstDate } from '../../src/market/calendar.js';
import { readDay } from '../../src/recorder/reader.js';
import { until, type TestClient } from '../bridge/helpers.js';
import { clusterBed, leaderOf, stopBridge, type BridgeProc } from './harness.js';

/**
 * The recorder in a cluster: every process receives every change, but only
 * the one holding the poller lease records; when it stops, the process that
 * takes the lease records from then on.
 */

const LEASE_MS = 2000;

/** When the file started: a run across KST midnight records into two days. */
const started = Date.now();

/** The times of the change lines a process's DATA_DIR holds for the KST days since the file started. */
async function recorded(dataDir: string): Promise<number[]> {
  const out: number[] = [];
  for (const day of new Set([kstDate(started), kstDate(Date.now())])) {
    for await (const l of readDay(join(dataDir, 'recordings'), day)) if (l.k === 'c') out.push(l.t);
  }
  return out;
}

describe('recording in a cluster', () => {
  const bed = clusterBed();
  const members = bed.members;
  const dirs = new Map<BridgeProc, string>();
  const clients: TestClient[] = [];

  beforeAll(async () => {
    for (const n of ['a', 'b']) {
      const dir = mkdtempSync(join(tmpdir(), `krx-cluster-rec-${n}-`));
      dirs.set(await bed.spawn(n, { LEASE_MS: String(LEASE_MS), RECORD: 'on', DATA_DIR: dir }), dir);
    }
  }, 60_000);

  it('only the lease holder records; the next one records once it holds the lease', async () => {
    const leader = await leaderOf(members);
    const follower = members.find((m) => m !== leader)!;
    // Subscribed on both, so both processes' gateways get every change.
    for (const m of members) {
      const c = await bed.client(m);
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
