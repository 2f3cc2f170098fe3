import { readdirSync } from 'node:fs';
import { defineConfig } from 'vitest/config';

/**
 * The test tiers (vitest projects), from fastest to slowest:
 * - `unit` (what `npm test` runs): pure functions, and components on real
 *   sockets at port 0 against the in-process simulator; no Redis, no
 *   browser, no child processes; under a minute;
 * - `integration`: the bridge as a user runs it (built and started as a
 *   process, under a set wall clock, behind nginx, packed and installed),
 *   and the long reliability and chaos runs;
 * - `cluster`: several bridges joined by the Redis at 127.0.0.1:6379;
 * - `browser`: the demo page in Debian's Chromium.
 * `npm run test:all` (and `.ci/run`) runs every tier.
 */

type Tier = 'unit' | 'integration' | 'cluster' | 'browser';

/** The tier of a test file, by what it needs. */
function tierOf(file: string): Tier {
  if (/^test\/demo\/(browser|closed|replay)\.test\.ts$/.test(file) || file === 'test/examples/minimal.test.ts') return 'browser';
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
    'test/http/symbols.test.ts',
  ];
  return slow.includes(file) ? 'integration' : 'unit';
}

const files = readdirSync('test', { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.test.ts'))
  .map((f) => `test/${f}`)
  .sort();
const tier = (t: Tier) => ({ extends: true as const, test: { name: t, include: files.filter((f) => tierOf(f) === t) } });

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    projects: [tier('unit'), tier('integration'), tier('cluster'), tier('browser')],
  },
});
