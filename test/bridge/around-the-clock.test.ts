import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import type { StatusMsg } from '../../src/protocol/messages.js';
import { ROOT, startCli, type CliBridge } from './cli.js';
import { TestClient, sleep, until } from './helpers.js';

/**
 * The bridge as its CLI runs it, against a simulator of its own process,
 * across a crash: killed (SIGKILL) while the market is open, restarted under
 * a wall clock set to a Saturday (Debian's `faketime`) with the upstream
 * answering 500. A new client gets the rows last seen before the kill, with
 * their original `ts`, marked closed with when the market opens.
 */

const KEY = 'around-the-clock-key-7c1e';
const CODES = ['005930', '000660', '035420'];

async function startSim(): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/sim/cli.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', SIM_PORT: '0', SIM_API_KEY: KEY, SIM_CLOCK: 'open', SIM_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  await until(() => /"url":"http/.test(out), 60_000, 'the simulator to listen');
  return { child, url: /"url":"(http:\/\/[^"]+)"/.exec(out)![1]! };
}

const control = async (sim: string, method: 'POST' | 'PUT', path: string, body?: unknown) => {
  const r = await request(`${sim}/_sim/${path}`, { method, ...(body ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } } : {}) });
  await r.body.dump();
  expect(r.statusCode).toBeLessThan(300);
};
/** Calls the simulator answered for the KOSPI quote list (the feed of `quote.kospi`). */
const quoteCalls = async (sim: string): Promise<number> =>
  ((await (await request(`${sim}/_sim/stats`)).body.json()) as { byEndpoint: Record<string, number> }).byEndpoint['v2.multiquote.lists'] ?? 0;

describe('state across a crash, and the closed market', () => {
  let sim: { child: ChildProcess; url: string };
  let bridge: CliBridge | undefined;
  const dataDir = mkdtempSync(join(tmpdir(), 'krx-clock-'));
  beforeAll(async () => {
    sim = await startSim();
  }, 90_000);
  afterAll(() => {
    bridge?.kill();
    sim?.child.kill('SIGKILL');
  });

  it('a new client after SIGKILL and a restart on a closed day gets the rows last seen, with their original ts', async () => {
    const env = { UPSTREAM_URL: sim.url, UPSTREAM_API_KEY: KEY, DATA_DIR: dataDir, STATE: 'on' };
    bridge = await startCli({ ...env, MARKET_CLOCK: 'always' });
    const live = await new TestClient(`${bridge.url.replace('http', 'ws')}/ws`).ready();
    live.send({ op: 'subscribe', channel: 'quote', market: 'kospi', codes: CODES });
    await until(() => live.ofType('patch').length >= 3, 20_000, 'patches');
    // The market stops moving; after a flush period the last rows are on disk. Then the crash.
    await control(sim.url, 'POST', 'pause');
    await sleep(2500);
    const seen = new Map(CODES.map((c) => [`quote.kospi.${c}`, { row: live.rows.get(`quote.kospi.${c}`), ts: lastTs(live, `quote.kospi.${c}`) }]));
    expect(live.problems).toEqual([]);
    bridge.child.kill('SIGKILL');
    await until(() => bridge!.exited() !== undefined, 10_000, 'the kill');
    live.close();

    // A Saturday (2026-11-28 12:00 KST); the upstream now fails every call.
    await control(sim.url, 'PUT', 'faults', { error: { rate: 1, status: [500] } });
    bridge = await startCli({ ...env, LOG_LEVEL: 'info' }, { faketime: '2026-11-28 03:00:00' });
    expect(bridge.output()).toMatch(/"msg":"state loaded"/);
    const calls0 = await quoteCalls(sim.url);
    expect(calls0).toBeGreaterThan(0); // from the first run
    const fresh = await new TestClient(`${bridge.url.replace('http', 'ws')}/ws`).ready();
    expect(fresh.epoch).not.toBe(live.epoch); // a crash: no resume under the old epoch
    fresh.send({ op: 'subscribe', channel: 'quote', market: 'kospi', codes: CODES });
    await until(() => fresh.ofType('snapshot').length >= CODES.length && fresh.ofType('status').length > 0, 10_000, 'snapshots and status');
    for (const [topic, want] of seen) {
      const snap = fresh.ofType('snapshot').find((m) => m.topic === topic)!;
      expect(snap.data, topic).toEqual(want.row);
      expect(snap.ts, topic).toBe(want.ts);
    }
    const status = fresh.ofType('status').at(-1) as StatusMsg;
    expect(status).toMatchObject({ state: 'closed', reason: 'market closed', opensAt: Date.parse('2026-11-30T08:30:00+09:00') });
    expect(status.asOf).toBeGreaterThan(0);
    // Nothing to fetch: every row is held.
    await sleep(2000);
    expect(await quoteCalls(sim.url)).toBe(calls0);
    fresh.close();
  }, 120_000);

  it('a closed-market subscribe with nothing saved makes one call per feed, then none', async () => {
    bridge?.kill();
    await control(sim.url, 'PUT', 'faults', { error: null });
    await control(sim.url, 'POST', 'resume');
    const env = { UPSTREAM_URL: sim.url, UPSTREAM_API_KEY: KEY, DATA_DIR: mkdtempSync(join(tmpdir(), 'krx-clock-')), STATE: 'on' };
    // A weekday at 20:00 KST.
    bridge = await startCli(env, { faketime: '2026-11-24 11:00:00' });
    const before = await quoteCalls(sim.url);
    const c = await new TestClient(`${bridge.url.replace('http', 'ws')}/ws`).ready();
    c.send({ op: 'subscribe', channel: 'quote', market: 'kospi', codes: CODES });
    await until(() => c.ofType('snapshot').length >= CODES.length && c.ofType('status').length > 0, 10_000, 'snapshots and status');
    const status = c.ofType('status').at(-1) as StatusMsg;
    expect(status).toMatchObject({ state: 'closed', reason: 'market closed', opensAt: Date.parse('2026-11-25T08:30:00+09:00') });
    expect(status.asOf).toBe(c.ofType('snapshot')[0]!.ts);
    expect(c.ofType('patch')).toEqual([]);
    await sleep(3000);
    expect((await quoteCalls(sim.url)) - before).toBe(1);
    // A clean stop keeps the epoch: a client may resume across the restart.
    bridge.child.kill('SIGTERM');
    await until(() => bridge!.exited() !== undefined, 20_000, 'the stop');
    expect(bridge.exited()!.code).toBe(0);
    bridge = await startCli(env, { faketime: '2026-11-24 11:05:00' });
    const again = await new TestClient(`${bridge.url.replace('http', 'ws')}/ws`).ready();
    expect(again.epoch).toBe(c.epoch);
    const since = Object.fromEntries(CODES.map((code) => [`quote.kospi.${code}`, c.seqs.get(`quote.kospi.${code}`)!]));
    again.send({ op: 'subscribe', channel: 'quote', market: 'kospi', codes: CODES, epoch: c.epoch, since });
    await until(() => again.ofType('subscribed').length > 0 && again.ofType('status').length > 0, 10_000, 'resume');
    expect(again.ofType('snapshot')).toEqual([]); // resumed: nothing missed, nothing resent
    c.close();
    again.close();
  }, 120_000);
});

/** The `ts` of the last snapshot or patch a client got for a topic. */
function lastTs(c: TestClient, topic: string): number | undefined {
  const m = c.messages.filter((x) => (x.type === 'patch' || x.type === 'snapshot') && x.topic === topic).at(-1);
  return m && (m.type === 'patch' || m.type === 'snapshot') ? m.ts : undefined;
}
