import { readdirSync } from 'node:fs';
import { defineConfig } from 'vitest/config';

/**
 * The test tiers (vitest projects), from fastest to slowest:
 * - `unit` (what `npm test` runs): pure functions, and components on real
 *   sockets at port 0 against the in-process simulator; no Redis, no
 *   browser, no child processes; under a minute;
 * - `integration`: the bridge as a user runs it (built and started as a
 *   process, under a set wall clock, behind nginx, packed and installed),
 *   and the long reliability and chaos runs; two files at a time;
 * - `timing`: tests that hold a latency bound or count calls per second of
 *   wall clock; one file at a time, after integration, so that no other
 *   test's load is in their figures;
 * - `cluster`: several bridges joined by the Redis at 127.0.0.1:6379;
 * - `browser`: the demo page in Debian's Chromium.
 * `npm run test:all` (and `.ci/run`) runs every tier.
 */

type Tier = 'unit' | 'integration' | 'timing' | 'cluster' | 'browser';

/** Files that assert a wall-clock bound (a latency ceiling, calls per cycle). */
const timing = ['test/reliability/slow.test.ts', 'test/reliability/slow-gets.test.ts', 'test/bridge/economy.test.ts', 'test/gateway/stalled.test.ts'];

/** The tier of a test file, by what it needs. */
function tierOf(file: string): Tier {
  if (timing.includes(file)) return 'timing';
  if (/^test\/demo\/(browser|close|closed|premarket|replay)\.test\.ts$/.test(file) || file === 'test/examples/minimal.test.ts') return 'browser';
  if (file.startsWith('test/cluster/')) return /\/(units|term)\.test\.ts$/.test(file) ? 'unit' : 'cluster';
  if (file === 'test/reliability/operations-doc.test.ts') return 'unit';
  if (/^test\/(bridge|cli|deploy|package|examples|reliability)\//.test(file)) return 'integration';
  // Child processes, or seconds of real time (replays played at speed, reconnect loops, a day's lookup share spent).
  const slow = [
    'test/hostile/targets.test.ts',
    'test/hostile/lookups.test.ts',
    'test/recorder/replay.test.ts',
    'test/recorder/playback.test.ts',
    'test/sim/cli.test.ts',
    'test/demo/build.test.ts',
    'test/client/bridge.test.ts',
    'test/client/lifecycle.test.ts',
    'test/client/history-rate.test.ts',
    'test/http/symbols.test.ts',
  ];
  return slow.includes(file) ? 'integration' : 'unit';
}

const files = readdirSync('test', { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.test.ts'))
  .map((f) => `test/${f}`)
  .sort();
/** Files run at once per tier: the machine has two cores; cluster and browser tests start several processes each. */
const workers: Record<Tier, number> = { unit: 4, integration: 2, timing: 1, cluster: 1, browser: 1 };
/**
 * Unit files share their worker's module graph instead of each loading the
 * sources anew (zod schemas, the simulator's universe, ws, undici, redis): a
 * fresh graph per file was half the tier's CPU time. They hold no state
 * between files (each starts its own servers and restores what it stubs);
 * the slower tiers keep a fresh process per file.
 */
const isolated: Record<Tier, boolean> = { unit: false, integration: true, timing: true, cluster: true, browser: true };
/** Tiers run one after another in this order, so a slow tier's load never overlaps a timed one. */
const order: Tier[] = ['unit', 'integration', 'timing', 'cluster', 'browser'];
const tier = (t: Tier) => ({
  extends: true as const,
  test: { name: t, include: files.filter((f) => tierOf(f) === t), maxWorkers: workers[t], isolate: isolated[t], sequence: { groupOrder: order.indexOf(t) } },
});

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    projects: order.map(tier),
  },
});
