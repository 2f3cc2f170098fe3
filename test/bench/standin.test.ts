import { afterEach, describe, expect, it } from 'vitest';
import { endpoint } from '../../src/upstream/catalogue.js';
import { normaliseBody } from '../../src/upstream/normalise.js';
import { wallMs } from '../../bench/lib/market.js';
import { STAMP_FIELD, StandIn } from '../../bench/upstream/standin.js';

const KEY = 'bench-key';
const QUOTES = {
  kospi: endpoint('v2.multiquote.lists').path.replace('{marketcode}', 'kospi'),
  kosdaq: endpoint('v3.realtime.multiquote.lists').path.replace('{marketcode}', 'kosdaq'),
};

let standIn: StandIn | undefined;
afterEach(async () => {
  await standIn?.close();
  standIn = undefined;
});

async function start(): Promise<string> {
  standIn = new StandIn({ symbols: 90, seed: 3, changeRatio: 0.3, periodMs: 30, apiKey: KEY, subs: { seed: 1, clients: 6, topicsPerClient: 10, symbols: 90 } });
  return standIn.listen();
}

async function get(url: string, key: string | null = KEY): Promise<{ status: number; text: string }> {
  const res = await fetch(url, { headers: key === null ? {} : { apikey: key } });
  return { status: res.status, text: await res.text() };
}

async function until(cond: () => boolean, ms = 5_000): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > ms) throw new Error('condition not met');
    await new Promise((r) => setTimeout(r, 5));
  }
}

type Body = { trdDd: string; trdTm: string; isuLists: Record<string, unknown>[] };

describe('upstream stand-in', () => {
  it('serves provider-shaped lists the bridge’s normaliser takes, each row stamped with the answer time', async () => {
    const url = await start();
    const before = Math.floor(wallMs() * 1000);
    const r = await get(url + QUOTES.kospi);
    const after = Math.ceil(wallMs() * 1000);
    expect(r.status).toBe(200);
    const body = JSON.parse(r.text) as Body;
    expect(body.isuLists).toHaveLength(50);
    for (const row of body.isuLists) {
      expect(row[STAMP_FIELD]).toBeGreaterThanOrEqual(before);
      expect(row[STAMP_FIELD]).toBeLessThanOrEqual(after);
    }
    const n = normaliseBody(endpoint('v2.multiquote.lists').response, body);
    if (!n.ok) throw new Error(n.reason);
    expect(n.value.dropped).toBe(0);
    expect(n.value.rows[0]![STAMP_FIELD]).toBe(body.isuLists[0]![STAMP_FIELD]);
    const symbols = JSON.parse((await get(url + endpoint('v3.closed.lists').path.replace('{marketcode}', 'kosdaq'))).text) as Body;
    expect(symbols.isuLists.map((s) => s.isuSrtCd)).toEqual((JSON.parse((await get(url + QUOTES.kosdaq)).text) as Body).isuLists.map((s) => s.isuSrtCd));
  });

  it('answers as the provider does without a key, with a wrong one, and off its routes', async () => {
    const url = await start();
    expect(await get(url + QUOTES.kospi, null)).toEqual({ status: 401, text: '{"message":"No API key found in request"}' });
    expect((await get(url + QUOTES.kospi, 'other')).status).toBe(401);
    expect(await get(url + '/v2/market/multiquote/stocks/konex/lists')).toEqual({ status: 404, text: '{"message":"no Route matched with those values"}' });
  });

  it('keeps an unchanged row’s bytes and gives a changed row the time of the first answer that carries it', async () => {
    const url = await start();
    const first = JSON.parse((await get(url + QUOTES.kospi)).text) as Body;
    expect((JSON.parse((await get(url + QUOTES.kospi)).text) as Body).isuLists).toEqual(first.isuLists);
    standIn!.go();
    await until(() => standIn!.counters().steps >= 1);
    standIn!.pause();
    const before = Math.floor(wallMs() * 1000);
    const next = JSON.parse((await get(url + QUOTES.kospi)).text) as Body;
    let changed = 0;
    next.isuLists.forEach((row, k) => {
      const old = first.isuLists[k]!;
      const { [STAMP_FIELD]: s0, ...v0 } = old;
      const { [STAMP_FIELD]: s1, ...v1 } = row;
      if (JSON.stringify(v0) === JSON.stringify(v1)) expect(s1).toBe(s0);
      else {
        changed++;
        expect(s1).toBeGreaterThanOrEqual(before);
      }
    });
    expect(changed).toBeGreaterThan(0);
    expect(standIn!.counters().served).toBe(changed);
    expect((JSON.parse((await get(url + QUOTES.kospi)).text) as Body).isuLists).toEqual(next.isuLists);
  });

  it('counts every change as served or overwritten before any answer carried it', async () => {
    const url = await start();
    await get(url + QUOTES.kospi);
    await get(url + QUOTES.kosdaq);
    standIn!.go();
    await until(() => standIn!.counters().steps >= 3);
    standIn!.pause();
    await get(url + QUOTES.kospi);
    await get(url + QUOTES.kosdaq);
    const c = standIn!.counters();
    expect(c.changes).toBe(c.steps * 27);
    expect(c.superseded).toBeGreaterThan(0);
    expect(c.served + c.superseded).toBe(c.changes);
    expect(c.offered).toBeGreaterThan(0);
    expect(c.quoteResponses).toBe(4);
  });
});
