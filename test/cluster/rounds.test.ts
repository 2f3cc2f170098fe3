import { describe, expect, it } from 'vitest';
import { sleep, type TestClient } from '../bridge/helpers.js';
import { clusterBed, leaderOf, truthAt } from './harness.js';

/**
 * Two bridge processes joined by Redis: a client of both markets gets each
 * poll round's changes of both in one WebSocket frame, on the process that
 * polls as on the one that only mirrors Redis (the leader writes a round
 * in one script that publishes its feeds together; every process delivers
 * the batches it reads together).
 */

const CODES = 30;

describe('cluster poll rounds', () => {
  const bed = clusterBed();
  const clients: TestClient[] = [];

  /** The markets whose patches each frame of `c` from `from` on carries (frames without a patch left out). */
  function patchFrames(c: TestClient, from: number): string[][] {
    return c.frames.slice(from).flatMap((f) => {
      const v = JSON.parse(f) as { type?: string; topic?: string } | { type?: string; topic?: string }[];
      const markets = new Set((Array.isArray(v) ? v : [v]).filter((m) => m.type === 'patch').map((m) => m.topic!.split('.')[1]!));
      return markets.size ? [[...markets].sort()] : [];
    });
  }

  it('writes a client of both markets once a round, on the leader and on a follower', async () => {
    const kospi = [...(await truthAt(bed.simUrl, 'v2.multiquote.lists', { marketcode: 'kospi' })).keys()].slice(0, CODES);
    const kosdaq = [...(await truthAt(bed.simUrl, 'v3.realtime.multiquote.lists', { marketcode: 'kosdaq' })).keys()].slice(0, CODES);
    const procs = [await bed.spawn('a'), await bed.spawn('b')];
    for (const p of procs) {
      const c = await bed.client(p);
      await c.request({ op: 'subscribe', channel: 'quote', market: 'kospi', codes: kospi });
      await c.request({ op: 'subscribe', channel: 'quote', market: 'kosdaq', codes: kosdaq });
      clients.push(c);
    }
    const leader = await leaderOf(procs);
    // Both feeds polling on the grid: a few rounds to settle, then a window of rounds.
    await sleep(4000);
    const from = clients.map((c) => c.frames.length);
    const start = Date.now();
    await sleep(6000);
    // The rounds polled in the window: KOSPI's whole-list calls (its feed polls one call a cycle).
    const rounds = bed.sim.stats.callTimes('v2.multiquote.lists').filter((t) => t >= start).length;
    for (const [i, c] of clients.entries()) {
      const frames = patchFrames(c, from[i]!);
      const both = frames.filter((m) => m.length === 2).length;
      const who = procs[i] === leader ? 'leader' : 'follower';
      // One frame a round with both markets' patches. The window's edges may cut a round off, and a round whose
      // cycles the poller did not hold together (one timed out, or started off the grid) goes out as two.
      const seen = `${who}: ${rounds} rounds, ${JSON.stringify(frames)}`;
      expect(rounds).toBeGreaterThanOrEqual(4);
      expect(frames.length, seen).toBeGreaterThanOrEqual(rounds - 2);
      expect(frames.length, seen).toBeLessThanOrEqual(rounds + 3);
      expect(both, seen).toBeGreaterThanOrEqual(rounds - 3);
      expect(both, seen).toBeGreaterThanOrEqual(frames.length - 3);
    }
  }, 60_000);
});
