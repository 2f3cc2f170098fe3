import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestClient, connect, sleep, startBridge, until, type TestBridge } from './helpers.js';

/**
 * A poll round on one process: KOSPI's answer waits for KOSDAQ's (slowed by
 * the simulator) before either goes out. A client that subscribes, or
 * resumes with the seqs it was last sent, during that wait gets the state
 * the round's patches follow: no patch twice, none missing.
 */

const KOSPI_LIST = 'v2.multiquote.lists';
const SLOW_MS = 300;

describe('a poll round that waits for its slower feed', () => {
  let tb: TestBridge;
  let keeper: TestClient;
  let codes: string[];
  const clients: TestClient[] = [];

  beforeAll(async () => {
    tb = await startBridge({ ROUND_HOLD_MS: 450 });
    const sim = tb.bridge.sim!;
    sim.faults.set({ latency: { ms: SLOW_MS, match: '/kosdaq/' } });
    keeper = await connect(tb);
    await keeper.request({ op: 'subscribe', channel: 'quote', market: 'kosdaq', codes: ['091990'] });
    await keeper.request({ op: 'subscribe', channel: 'quote', market: 'kospi', codes: ['*'] });
    await until(() => keeper.ofType('snapshot').length > 100, 10_000, 'the KOSPI list');
    // Twenty KOSPI codes: some of them change in every round.
    codes = [...keeper.seqs.keys()]
      .filter((t) => t.startsWith('quote.kospi.'))
      .slice(0, 20)
      .map((t) => t.split('.')[2]!);
  }, 20_000);
  afterAll(async () => {
    for (const c of [keeper, ...clients]) c?.close();
    await tb?.bridge.stop();
  });

  it('gives a client that subscribes or resumes during the wait every patch once', async () => {
    const sim = tb.bridge.sim!;
    const topics = codes.map((c) => `quote.kospi.${c}`);
    for (let i = 0; i < 5; i++) {
      // Just after a KOSPI call: its answer is in, KOSDAQ's is still on its way (SLOW_MS).
      const calls = sim.stats.callTimes(KOSPI_LIST).length;
      await until(() => sim.stats.callTimes(KOSPI_LIST).length > calls, 3000, 'a KOSPI poll');
      await sleep(60);
      const fresh = new TestClient(tb.wsUrl);
      const back = new TestClient(tb.wsUrl);
      clients.push(fresh, back);
      await Promise.all([fresh.ready(), back.ready()]);
      const since: Record<string, number> = {};
      for (const t of topics) {
        since[t] = keeper.seqs.get(t)!;
        back.seqs.set(t, keeper.seqs.get(t)!);
        back.rows.set(t, { ...keeper.rows.get(t)! });
      }
      await Promise.all([
        fresh.request({ op: 'subscribe', channel: 'quote', market: 'kospi', codes }),
        back.request({ op: 'subscribe', channel: 'quote', market: 'kospi', codes, since, epoch: keeper.epoch }),
      ]);
      const wanted = Object.fromEntries(topics.map((t) => [t, keeper.seqs.get(t)!]));
      // The round goes out, and the one after it.
      await sleep(1500);
      for (const [who, c] of [
        ['fresh', fresh],
        ['resumed', back],
      ] as const) {
        expect(c.problems, `${who} client, attempt ${i}`).toEqual([]);
        for (const t of topics) expect(c.seqs.get(t), `${who} ${t}`).toBeGreaterThanOrEqual(wanted[t]!);
      }
      expect(back.ofType('snapshot')).toEqual([]);
      fresh.close();
      back.close();
    }
  }, 40_000);
});
