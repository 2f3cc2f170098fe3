import { existsSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FILES } from '../../src/persist/load.js';
import { LOCK_FILE } from '../../src/persist/lock.js';
import { startCli, type CliBridge } from './cli.js';
import { TestClient, until } from './helpers.js';

/**
 * Two bridges on one DATA_DIR, as a user meets it (`npm start` twice): the
 * second refuses to start and names the first, and touches none of its
 * files; once the first is killed, a start takes the directory over and
 * restores what the first wrote.
 */

const CODES = ['005930', '000660'];

describe('one bridge per DATA_DIR', () => {
  const procs: CliBridge[] = [];
  afterAll(() => {
    for (const p of procs) p.kill();
  });

  it('refuses a second bridge on a DATA_DIR in use, leaves the first’s state alone, and takes it over after a SIGKILL', async () => {
    const data = join(mkdtempSync(join(tmpdir(), 'krx-datadir-')), 'data');
    const env = { DATA_DIR: data, STATE: 'on', RECORD: 'on', MARKET_CLOCK: 'always' };
    const a = await startCli(env);
    procs.push(a);
    const c = await new TestClient(`${a.url.replace('http', 'ws')}/ws`).ready();
    await c.request({ op: 'subscribe', channel: 'quote', market: 'kospi', codes: CODES });
    const state = async (url: string) => ((await (await fetch(`${url}/status`)).json()) as { state: { written: number; restored: { topics: number } } }).state;
    await until(async () => (await state(a.url)).written > 0, 15_000, 'the first bridge’s state written');
    const journal = join(data, 'state', FILES.journal);
    const before = statSync(journal).size;

    // The second start: refused, the first named, nothing of the first's touched.
    await expect(startCli(env)).rejects.toThrow(new RegExp(`DATA_DIR \\S+ is in use by process ${a.child.pid}`));
    expect(existsSync(journal)).toBe(true);
    expect(statSync(journal).size).toBeGreaterThanOrEqual(before);
    expect(existsSync(join(data, 'state', FILES.clean))).toBe(false);
    // The first goes on writing its journal.
    await until(() => statSync(journal).size > before, 10_000, 'the first bridge’s journal growing');
    c.close();

    // Killed: its lock is left behind, and the next start takes it over and restores its state.
    a.child.kill('SIGKILL');
    await until(() => a.exited() !== undefined, 10_000, 'the kill');
    expect(existsSync(join(data, LOCK_FILE))).toBe(true);
    const b = await startCli(env);
    procs.push(b);
    expect((await state(b.url)).restored.topics).toBeGreaterThanOrEqual(CODES.length);
  }, 90_000);
});
