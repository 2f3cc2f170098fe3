import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { KrxClient } from '../../src/client/index.js';
import { slowPolicy } from '../../src/gateway/slow.js';
import { silentLogger } from '../../src/log.js';
import { DEFAULT_LIMITS } from '../../src/protocol/constants.js';
import { RecordedCodes } from '../../src/replay/codes.js';
import { ReplayServer } from '../../src/replay/server.js';
import { Client, sleep, startHarness, type Harness } from '../gateway/harness.js';
import { DAY, record } from '../recorder/helpers.js';

/**
 * A replay connection is held to what a live one is (docs/REPLAY.md): its
 * subscribe's codes are checked as on `/ws` (a stock code neither listed
 * nor held by the day's recording is `invalid_code`), a frame over its
 * message rate is refused with its id, and its elapsed times (heartbeat
 * liveness, the message rate) run on the monotonic clock.
 */

type H = Harness & { replay: ReplayServer; closes: number[] };
let h: H | undefined;
const sdk: KrxClient[] = [];
afterEach(async () => {
  await Promise.all(sdk.splice(0).map((k) => k.close()));
  await h?.close();
  h = undefined;
});

const tmp = () => mkdtempSync(join(tmpdir(), 'krx-replay-'));

/**
 * A gateway serving replays of `dir`; its listing is the harness's (codes
 * 000001–000050, 005930, 000660 on KOSPI), not the codes `record` records
 * (100000–100002 of quote.kospi).
 */
async function harness(dir: string, opts: { heartbeatMs?: number; monotonic?: () => number; maxMessagesPerSecond?: number; idleMs?: number } = {}): Promise<H> {
  const closes: number[] = [];
  const replay = new ReplayServer({
    dir,
    logger: silentLogger(),
    maxPayloadBytes: DEFAULT_LIMITS.maxPayloadBytes,
    heartbeatMs: opts.heartbeatMs ?? 15_000,
    server: 'krx-bridge/test',
    slow: slowPolicy(),
    onClose: (c) => closes.push(c),
    ...(opts.monotonic ? { monotonic: opts.monotonic } : {}),
    ...(opts.idleMs ? { idleMs: opts.idleMs } : {}),
  });
  const limits = { ...DEFAULT_LIMITS, ...(opts.maxMessagesPerSecond ? { maxMessagesPerSecond: opts.maxMessagesPerSecond } : {}) };
  const base = await startHarness({ replay, limits });
  return Object.assign(base, { replay, closes });
}

const replayUrl = (hh: H, q = 'from=100000&to=100020&speed=1') => `${hh.url}/replay?date=${DAY}&${q}`;

describe('the codes a replay subscribe takes', () => {
  it('are those /ws takes, and those the day recorded: a code neither listed nor recorded, or malformed, is invalid_code', async () => {
    const dir = tmp();
    await record(dir, 20);
    h = await harness(dir);
    const live = await Client.connect(h.url);
    const c = await Client.connect(replayUrl(h));
    const sub = (id: number, channel: string, codes: string[]) => ({ op: 'subscribe', id, channel, market: 'kospi', codes });

    // The tester's case: live refuses it, and so does the replay, with the same error.
    const refusedLive = await live.request(sub(1, 'price', ['999999']));
    expect(refusedLive).toMatchObject({ type: 'error', code: 'invalid_code', id: 1 });
    expect(await c.request(sub(1, 'price', ['999999']))).toEqual(refusedLive);
    for (const [i, bad] of [['12345'], ['abcdef'], ['00000A0'], ['100000', '999999'], ['999999', '100000']].entries()) {
      const got = await c.request(sub(10 + i, 'quote', bad));
      expect(got, bad.join()).toMatchObject({ type: 'error', code: 'invalid_code' });
      expect(got).toEqual({ ...(await live.request(sub(10 + i, 'quote', bad))), ...(bad.includes('100000') ? { message: got.message } : {}) });
    }
    // Not listed here, but recorded that day (as a code since delisted would be): taken, with its snapshot.
    expect(await c.request(sub(20, 'quote', ['100001']))).toMatchObject({ type: 'subscribed', topics: ['quote.kospi.100001'] });
    await c.until((m) => m.type === 'snapshot' && m.topic === 'quote.kospi.100001');
    // Listed, though not recorded: taken, as live takes it (nothing of it will come).
    expect(await c.request(sub(21, 'price', ['000001', '100002']))).toMatchObject({ type: 'subscribed', topics: ['price.kospi.000001', 'price.kospi.100002'] });
    // The refused subscribe that named 100000 subscribed nothing.
    expect(c.of('snapshot').some((m) => m.topic === 'quote.kospi.100000')).toBe(false);
    expect(await c.request(sub(22, 'quote', ['*']))).toMatchObject({ type: 'subscribed', topics: ['quote.kospi.*'] });
    live.close();
    c.close();
  });

  it('through the SDK: subscribe(price, kospi, 999999) on a replay rejects with invalid_code, as on /ws', async () => {
    const dir = tmp();
    await record(dir, 20);
    h = await harness(dir);
    const live = new KrxClient(h.url, { WebSocket });
    const replay = new KrxClient(h.url, { WebSocket, replay: { date: DAY, from: '100000', to: '100020', speed: 1 } });
    sdk.push(live, replay);
    await expect(live.subscribe('price', 'kospi', ['999999'])).rejects.toMatchObject({ code: 'invalid_code' });
    await expect(replay.subscribe('price', 'kospi', ['999999'])).rejects.toMatchObject({ code: 'invalid_code' });
    expect(await replay.subscribe('quote', 'kospi', ['100000'])).toEqual(['quote.kospi.100000']);
  });

  it('reads the recording as it grows: a code recorded after an earlier subscribe asked about the day is taken', async () => {
    const dir = tmp();
    await record(dir, 5);
    const codes = new RecordedCodes(dir);
    expect(await codes.has(DAY, 'kospi', '100000')).toBe(true);
    expect(await codes.has(DAY, 'kosdaq', '100000')).toBe(false);
    expect(await codes.has(DAY, 'kospi', '100007')).toBe(false);
    // Another process records more of the day, with more codes.
    await record(dir, 5, { first: 10, rows: 8 });
    expect(await codes.has(DAY, 'kospi', '100007')).toBe(true);
    expect(await codes.has('20261123', 'kospi', '100000')).toBe(false);
  });
});

describe('a replay frame over the message rate', () => {
  it('is refused with its id, a number or a string', async () => {
    const dir = tmp();
    await record(dir, 20);
    // The replay's monotonic clock stands still: its bucket of 2 × 5 never refills.
    h = await harness(dir, { maxMessagesPerSecond: 5, monotonic: () => 0 });
    const c = await Client.connect(replayUrl(h));
    for (let i = 0; i < 10; i++) c.send({ op: 'ping', id: i });
    await c.wait(() => c.of('pong').length === 10);
    expect(await c.request({ op: 'subscribe', id: 'sub-1', channel: 'quote', market: 'kospi', codes: ['100000'] })).toMatchObject({
      type: 'error',
      code: 'rate_limited',
      id: 'sub-1',
    });
    expect(await c.request({ op: 'ping', id: 77 })).toMatchObject({ type: 'error', code: 'rate_limited', id: 77 });
    c.close();
  });
});

describe('a replay heartbeat', () => {
  it('runs on the monotonic clock: a silent peer is cut (4002) when two heartbeats of it have gone by, not before', async () => {
    const dir = tmp();
    await record(dir, 20);
    let mono = 0;
    h = await harness(dir, { heartbeatMs: 100, monotonic: () => mono });
    const silent = await Client.connect(replayUrl(h), { autoPong: false });
    // Real heartbeats go by, but no monotonic time: nothing elapsed, nobody is cut (measured on Date.now it would be).
    await sleep(450);
    expect(silent.closed).toBeUndefined();
    mono += 250;
    expect((await silent.closedWith(2000)).code).toBe(1006);
    expect(h.closes).toEqual([4002]);
  });
});

describe('an idle replay', () => {
  const sub = { op: 'subscribe', id: 1, channel: 'quote', market: 'kospi', codes: ['100000'] };

  it('that never subscribes is closed (1000 replay idle) once idleMs has gone by, and gives its slot back', async () => {
    const dir = tmp();
    await record(dir, 20);
    h = await harness(dir, { idleMs: 300 });
    const opened = performance.now();
    const c = await Client.connect(replayUrl(h));
    // Pings answered, every 50 ms until it closes, are not a subscription: they keep the socket alive, not the replay.
    let pongs = 0;
    for (let i = 0; c.closed === undefined && i < 40; i++) {
      c.send({ op: 'ping', id: i });
      await sleep(50);
      pongs = c.of('pong').length;
    }
    expect(pongs).toBeGreaterThan(3);
    expect(await c.closedWith(2000)).toEqual({ code: 1000, reason: 'replay idle' });
    expect(performance.now() - opened).toBeLessThan(1000);
    expect(h.closes).toEqual([1000]);
    await c.wait(() => (h!.replay.size === 0 ? true : undefined), 2000, 'slot given back');
  });

  it('that holds a subscription plays on past idleMs; one that unsubscribes everything is closed idleMs later', async () => {
    const dir = tmp();
    await record(dir, 20);
    h = await harness(dir, { idleMs: 300 });
    // At 10×, the 20 s window plays for 2 s.
    const c = await Client.connect(replayUrl(h, 'from=100000&to=100020&speed=10'));
    expect(await c.request(sub)).toMatchObject({ type: 'subscribed', id: 1 });
    await sleep(700);
    expect(c.closed).toBeUndefined();
    expect(c.of('patch').length).toBeGreaterThan(0);
    const at = performance.now();
    expect(await c.request({ op: 'unsubscribe', id: 2, channel: 'quote', market: 'kospi', codes: ['100000'] })).toMatchObject({ type: 'unsubscribed', id: 2 });
    expect(await c.closedWith(2000)).toEqual({ code: 1000, reason: 'replay idle' });
    expect(performance.now() - at).toBeGreaterThanOrEqual(250);
  });

  it('whose subscribe was refused is idle: the error is answered, then the replay closes', async () => {
    const dir = tmp();
    await record(dir, 20);
    h = await harness(dir, { idleMs: 300 });
    const c = await Client.connect(replayUrl(h));
    expect(await c.request({ ...sub, codes: ['999999'] })).toMatchObject({ type: 'error', code: 'invalid_code', id: 1 });
    expect(await c.closedWith(2000)).toEqual({ code: 1000, reason: 'replay idle' });
  });
});
