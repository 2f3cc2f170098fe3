import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadState } from '../../src/persist/load.js';
import { until } from '../bridge/helpers.js';
import { clusterBed, leaderOf, type BridgeProc } from './harness.js';

/**
 * The state files in cluster mode: Redis holds the shared state, and the
 * process that holds the poller lease also writes its local state files
 * (DATA_DIR/state), so a leader restarted without Redis still has the last
 * rows; a follower writes none.
 */

const CODES = ['005930', '000660'];

describe('cluster state files', () => {
  const bed = clusterBed();
  const dirs = new Map<string, string>();

  it('the leader writes the local store to its state files; a follower does not', async () => {
    for (const name of ['a', 'b']) {
      const dir = mkdtempSync(join(tmpdir(), `krx-cluster-state-${name}-`));
      dirs.set(name, dir);
      await bed.spawn(name, { STATE: 'on', DATA_DIR: dir });
    }
    const leader = await leaderOf(bed.members);
    const follower = bed.members.find((p) => p !== leader)!;
    // The subscriber is on the follower: the leader polls for it, and its local store mirrors what it polls.
    const c = await bed.client(follower);
    await c.request({ op: 'subscribe', channel: 'quote', market: 'kospi', codes: CODES });
    await until(() => c.ofType('snapshot').length >= CODES.length, 15_000, 'snapshots on the follower');
    const stateOf = (p: BridgeProc) => loadState(join(dirs.get(p.name)!, 'state'));
    await until(() => CODES.every((code) => stateOf(leader).topics.has(`quote.kospi.${code}`)), 15_000, 'the leader’s state files to hold the rows');
    const written = stateOf(leader).topics.get('quote.kospi.005930')!;
    expect(written.r).toMatchObject({ isuSrtCd: '005930', trdPrc: expect.any(Number) });
    expect(stateOf(follower).topics.size).toBe(0);
    const status = async (p: BridgeProc) => ((await (await fetch(`${p.url}/status`)).json()) as { state: { written: number } }).state;
    // Changes the leader appended to its journal (the rows above may have come in a snapshot of the whole state, which is not counted as changes).
    await until(async () => (await status(leader)).written > 0, 15_000, 'the leader’s journal to count changes');
    expect((await status(follower)).written).toBe(0);
    c.close();
  }, 60_000);
});
