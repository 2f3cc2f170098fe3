import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Authenticator } from '../../src/access/auth.js';
import { applyOps } from '../../src/protocol/patch.js';
import type { Row } from '../../src/protocol/row.js';
import { kstDate, kstSecondOfDay } from '../../src/market/calendar.js';
import { hhmmss } from '../../src/recorder/format.js';
import { readDay } from '../../src/recorder/reader.js';
import { NOT_RECORDED } from '../../src/replay/connection.js';
import { Client, type Msg } from '../gateway/harness.js';
import { rawClient } from '../reliability/helpers.js';
import { DAY, T0, openReplay, record, replayHarness } from './helpers.js';

/**
 * Replays of recordings made in the test process, through a gateway: speed
 * max, windows past the end of the recording, recorded statuses, a
 * subscribe in the middle of a replay, and the limits of live connections
 * (topics, message rate, slow consumers).
 */

type H = Awaited<ReturnType<typeof replayHarness>>;
let h: H | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const tmp = () => mkdtempSync(join(tmpdir(), 'krx-p-'));
const url = (hh: H, q: string) => `${hh.url}/replay?date=${DAY}&${q}`;

/** Each topic's row after a client's messages, applied in order (snapshots replace, patches apply). */
function rowsOf(msgs: readonly Msg[]): Map<string, Row> {
  const out = new Map<string, Row>();
  for (const m of msgs) {
    if (m.type === 'snapshot') out.set(m.topic, m.data);
    if (m.type === 'patch' && out.has(m.topic)) out.set(m.topic, applyOps(out.get(m.topic)!, m.ops)!);
  }
  return out;
}

describe('replay windows', () => {
  it('at speed max: all of it at once, then replay ended and close 1000', async () => {
    const dir = tmp();
    await record(dir, 20);
    h = await replayHarness(dir);
    const c = await Client.connect(url(h, 'from=100005&to=100015&speed=max'));
    const t0 = performance.now();
    c.send({ op: 'subscribe', id: 1, channel: 'quote', market: 'kospi', codes: ['100000', '100001'] });
    expect(await c.closedWith(5000)).toEqual({ code: 1000, reason: 'replay ended' });
    expect(performance.now() - t0).toBeLessThan(2000);
    expect(c.of('snapshot').map((m) => m.seq)).toEqual([5, 5]); // the changes of 10:00:00–10:00:04
    expect(c.of('patch').map((m) => m.seq)).toEqual([6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15]);
    expect(c.msgs.at(-1)).toMatchObject({ type: 'status', state: 'closed', reason: 'replay ended', ts: T0 + 15_000 });
  });

  it('a window that starts inside the recording and runs past its end plays to the end, then ends (closed, 1000)', async () => {
    const dir = tmp();
    await record(dir, 20);
    h = await replayHarness(dir);
    const c = await Client.connect(url(h, 'from=100015&to=110000&speed=10'));
    c.send({ op: 'subscribe', id: 1, channel: 'quote', market: 'kospi', codes: ['100000'] });
    expect(await c.closedWith(5000)).toEqual({ code: 1000, reason: 'replay ended' });
    expect(c.of('snapshot').map((m) => m.seq)).toEqual([15]);
    // The last recorded change is 10:00:19 (seq 20).
    expect(c.of('patch').map((m) => [m.seq, m.ts])).toEqual([16, 17, 18, 19, 20].map((seq) => [seq, T0 + (seq - 1) * 1000]));
    const last = c.msgs.at(-1)!;
    expect(last).toMatchObject({ type: 'status', channel: 'quote', market: 'kospi', state: 'closed', reason: 'replay ended' });
    expect(last.ts).toBeGreaterThanOrEqual(T0 + 19_000);
  });

  it('a window that starts before the recording starts its clock at the first recorded moment: no wait through what was not recorded', async () => {
    const dir = tmp();
    await record(dir, 20); // 10:00:00–10:00:19
    h = await replayHarness(dir);
    // 09:59:40 at speed 1: twenty seconds of nothing recorded before the first change.
    const c = await Client.connect(url(h, 'from=095940&to=100004&speed=1'));
    const t0 = performance.now();
    c.send({ op: 'subscribe', id: 1, channel: 'quote', market: 'kospi', codes: ['100000'] });
    expect(await c.closedWith(15_000)).toEqual({ code: 1000, reason: 'replay ended' });
    // The changes of 10:00:01–10:00:03 at speed 1: about three seconds, not twenty-three.
    expect(performance.now() - t0).toBeLessThan(8000);
    expect(c.of('snapshot').map((m) => m.seq)).toEqual([1]);
    expect(c.of('patch').map((m) => [m.seq, m.ts])).toEqual([2, 3, 4].map((seq) => [seq, T0 + (seq - 1) * 1000]));
    expect(c.msgs.at(-1)).toMatchObject({ type: 'status', state: 'closed', reason: 'replay ended', ts: T0 + 4000 });
  });

  it('a window that runs into the present ends where the replay was opened, having played every change recorded before then', async () => {
    // Clear of a KST midnight, so that the seconds recorded below are of one day.
    const kstSecs = kstSecondOfDay(Date.now());
    if (kstSecs < 30 || kstSecs > 86_400 - 30) await new Promise((r) => setTimeout(r, ((86_400 - kstSecs + 31) % 86_400) * 1000));
    const dir = tmp();
    // Today's recording from 10 s ago to 10 s ahead: what lies past the moment the replay is opened stands for what the
    // recorder writes while the replay plays (the reader takes a segment as it stands when it gets to it).
    const first = Math.floor((Date.now() - T0) / 1000) - 10;
    await record(dir, 20, { first });
    const start = T0 + first * 1000;
    h = await replayHarness(dir);
    const opened = Date.now();
    const c = await Client.connect(
      `${h.url}/replay?date=${kstDate(start)}&from=${hhmmss(kstSecondOfDay(start))}&to=${hhmmss(kstSecondOfDay(start) + 90)}&speed=max`,
    );
    c.send({ op: 'subscribe', id: 1, channel: 'quote', market: 'kospi', codes: ['100000'] });
    expect(await c.closedWith(5000)).toEqual({ code: 1000, reason: 'replay ended' });
    const end = c.msgs.at(-1)!;
    expect(end).toMatchObject({ type: 'status', state: 'closed', reason: 'replay ended' });
    expect(end.ts).toBeGreaterThanOrEqual(opened);
    expect(end.ts).toBeLessThanOrEqual(Date.now());
    // Nothing played is later than the end it reports, and nothing recorded before that end is left out.
    const played = c.of('patch').map((m) => m.seq);
    const recorded: number[] = [];
    for await (const line of readDay(dir, kstDate(start), hhmmss(kstSecondOfDay(start)))) {
      if (line.k === 'c' && line.topic === 'quote.kospi.100000' && line.t > start && line.t < end.ts!) recorded.push(line.seq);
    }
    expect(played).toEqual(recorded);
    expect(played.length).toBeGreaterThan(5);
  });

  it('refuses with not_recorded a day with no recording, and a window entirely before or after the recording', async () => {
    const dir = tmp();
    await record(dir, 20);
    const hh = (h = await replayHarness(dir));
    // A refusal is an error frame and close 4004 after the handshake (a browser cannot read an HTTP refusal); a replay starts with welcome.
    const cases: [string, string][] = [
      [`${h.url}/replay?date=20261123&from=090000&to=180000`, 'not_recorded'],
      [url(h, 'from=100020&to=110000'), 'not_recorded'], // the last change is at 10:00:19
      [url(h, 'from=090000&to=100000'), 'not_recorded'], // `to` is exclusive; the first change is at 10:00:00
      [url(h, 'from=100019&to=110000'), 'welcome'],
      [url(h, 'from=090000&to=100001'), 'welcome'],
      [url(h, 'from=100019&to=100000'), 'invalid_params'],
      [`${h.url}/replay?from=090000`, 'invalid_params'], // no date
      [`${h.url}/replay?date=20261301`, 'invalid_params'], // not a day
      // A speed is decimal digits, 1 to 1000, or max: nothing else `Number` would read.
      ...['1e3', '0x10', '%2B5', '1.0', '%2010', '010', '0', '1001', 'Max', ''].map((v): [string, string] => [
        url(hh, `from=100000&to=100010&speed=${v}`),
        'invalid_params',
      ]),
      [url(h, 'from=100000&to=100010&speed=1000'), 'welcome'],
      [url(h, 'from=100000&to=100010&speed=max'), 'welcome'],
    ];
    for (const [target, first] of cases) {
      const r = await openReplay(target);
      expect(r.status, target).toBe(101);
      if (first === 'welcome') expect(r.frames[0]!.type, target).toBe('welcome');
      else {
        expect(r.frames, target).toEqual([expect.objectContaining({ type: 'error', code: first, retryable: false })]);
        expect(r.close, target).toBe(4004);
      }
    }
    // The recording's end as a query's `to` (and /recordings) says it: exclusive, so it can be copied into the next query.
    const late = await openReplay(url(h, 'from=100020&to=110000'));
    expect(late.frames[0]!.message).toBe('the recording of 20261124 runs from 100000 to 100020 (KST), before 100020');
  });
});

describe('what a replay plays', () => {
  it('plays the recorded statuses, as sent, where they happened', async () => {
    const dir = tmp();
    await record(dir, 20, { statuses: { 8: { state: 'stale', reason: 'upstream_unavailable' }, 12: { state: 'live' } } });
    const recorded: string[] = [];
    for await (const l of readDay(dir, DAY)) if (l.k === 's') recorded.push(l.f);
    expect(recorded).toHaveLength(3);
    h = await replayHarness(dir);
    const c = await Client.connect(url(h, 'from=100005&to=100015&speed=max'));
    c.send({ op: 'subscribe', id: 1, channel: 'quote', market: 'kospi', codes: ['100000'] });
    await c.closedWith(5000);
    const seen = c.msgs.filter((m) => m.type === 'status' || m.type === 'patch').map((m) => (m.type === 'patch' ? m.seq : `${m.state}:${m.ts}`));
    // The status current at `from` comes with the subscribe; the later ones between the patches they fell between.
    expect(c.msgs.find((m) => m.type === 'status')).toEqual(JSON.parse(recorded[0]!));
    expect(seen).toEqual([`live:${T0}`, 6, 7, 8, `stale:${T0 + 8000}`, 9, 10, 11, 12, `live:${T0 + 12_000}`, 13, 14, 15, `closed:${T0 + 15_000}`]);
    expect(c.of('status').slice(1, 3)).toEqual([JSON.parse(recorded[1]!), JSON.parse(recorded[2]!)]);
  });

  it('where the bridge stopped and started again: its feeds stale from the stop, live again with its first status, its topics from its snapshots', async () => {
    const dir = tmp();
    await record(dir, 5); // 10:00:00–10:00:04, then a clean stop
    await record(dir, 5, { first: 10 }); // another process, without the first one's state: seqs anew, 10:00:10–10:00:14
    h = await replayHarness(dir);
    const c = await Client.connect(url(h, 'from=100000&to=100020&speed=max'));
    c.send({ op: 'subscribe', id: 1, channel: 'quote', market: 'kospi', codes: ['100000'] });
    await c.closedWith(5000);
    const seen = c.msgs
      .filter((m) => m.type === 'status' || m.type === 'patch' || m.type === 'snapshot')
      .map((m) => (m.type === 'status' ? `${m.state}:${(m.ts - T0) / 1000}` : `${m.type === 'patch' ? 'p' : 's'}${m.seq}`));
    // The second process stops cleanly at 10:00:14.
    expect(seen).toEqual(['live:0', 's1', 'p2', 'p3', 'p4', 'p5', 'stale:4', 'live:10', 's1', 'p2', 'p3', 'p4', 'p5', 'stale:14', 'closed:20']);
    expect(c.of('status')[1]).toMatchObject({ state: 'stale', reason: NOT_RECORDED, intervalMs: 0 });
    // The rows played are the second process's: what a client holds at the end is what it recorded last.
    expect(c.of('snapshot')[1]).toMatchObject({ ts: T0 + 10_000, data: { isuSrtCd: '100000', trdPrc: 1000 + (10 % 7) * 10 } });
  });

  it('a window in which nothing was recorded (inside a stop) plays the state at its start, its status, and its time, then ends', async () => {
    const dir = tmp();
    await record(dir, 5); // 10:00:00–10:00:04, then a clean stop
    await record(dir, 5, { first: 10 });
    h = await replayHarness(dir);
    const c = await Client.connect(url(h, 'from=100006&to=100009&speed=10'));
    // Nothing is recorded in the window: the replay waits for the subscribe all the same.
    await new Promise((r) => setTimeout(r, 300));
    expect(c.closed).toBeUndefined();
    const t0 = performance.now();
    c.send({ op: 'subscribe', id: 1, channel: 'quote', market: 'kospi', codes: ['100000'] });
    expect(await c.closedWith(5000)).toEqual({ code: 1000, reason: 'replay ended' });
    // Three recorded seconds at speed 10.
    expect(performance.now() - t0).toBeGreaterThanOrEqual(250);
    const seen = c.msgs
      .filter((m) => m.type !== 'welcome')
      .map((m) => (m.type === 'status' ? `${m.state}:${(m.ts - T0) / 1000}` : m.type === 'snapshot' ? `s${m.seq}:${(m.ts - T0) / 1000}` : m.type));
    expect(seen).toEqual(['subscribed', 's5:4', 'stale:4', 'closed:9']);
  });

  it('sends a moment’s changes, and a subscribe’s snapshots, in frames of about 16 KiB as live connections do', async () => {
    const dir = tmp();
    // 300 codes changing every second, each patch some 200 characters: about 60 KB a moment.
    await record(dir, 4, { rows: 300, pad: 60 });
    h = await replayHarness(dir);
    const c = await Client.connect(url(h, 'from=100000&to=100004&speed=max'));
    const sizes: number[] = [];
    c.ws.on('message', (d) => sizes.push(String(d).length));
    c.send({ op: 'subscribe', id: 1, channel: 'quote', market: 'kospi', codes: ['*'] });
    await c.closedWith(5000);
    expect(c.of('snapshot')).toHaveLength(300);
    expect(c.of('patch')).toHaveLength(3 * 300);
    const largest = Math.max(...c.msgs.map((m) => JSON.stringify(m).length));
    for (const n of sizes) expect(n).toBeLessThanOrEqual((16 << 10) + largest);
    // Snapshots and three moments of changes, some 240 KB, in many frames.
    expect(sizes.length).toBeGreaterThan(12);
  });

  it('where the bridge was killed (no stop line): its feeds stale from the last moment recorded, told when the next process starts', async () => {
    const dir = tmp();
    await record(dir, 5);
    // A SIGKILL leaves no stop line.
    const file = join(dir, DAY, 'seg-100000.ndjson');
    writeFileSync(file, readFileSync(file, 'utf8').replace(/^\{"k":"X".*\n/m, ''));
    await record(dir, 5, { first: 10 });
    h = await replayHarness(dir);
    const c = await Client.connect(url(h, 'from=100000&to=100020&speed=5'));
    const t0 = performance.now();
    c.send({ op: 'subscribe', id: 1, channel: 'quote', market: 'kospi', codes: ['100000'] });
    await c.until((m) => m.type === 'status' && m.state === 'stale', 5000);
    // Sent as the recording stops (10:00:04, 0.8 s in at speed 5), not when the next process starts (10:00:10, 2 s in).
    expect(performance.now() - t0).toBeLessThan(1500);
    await c.closedWith(8000);
    const statuses = c.of('status').map((m) => `${m.state}:${(m.ts - T0) / 1000}`);
    expect(statuses).toEqual(['live:0', 'stale:4', 'live:10', 'stale:14', 'closed:20']);
    expect(c.of('patch').at(-1)).toMatchObject({ seq: 5, ts: T0 + 14_000 });
  });

  it('where the bridge was killed just after a status: the stale status is not dated before it', async () => {
    const dir = tmp();
    // The status's ts (when its state began) is 250 ms past the last moment recorded, 10:00:04.
    await record(dir, 5, { statuses: { 4: { state: 'live', ts: T0 + 4_250 } } });
    const file = join(dir, DAY, 'seg-100000.ndjson');
    writeFileSync(file, readFileSync(file, 'utf8').replace(/^\{"k":"X".*\n/m, ''));
    await record(dir, 5, { first: 10 });
    h = await replayHarness(dir);
    const c = await Client.connect(url(h, 'from=100000&to=100020&speed=max'));
    c.send({ op: 'subscribe', id: 1, channel: 'quote', market: 'kospi', codes: ['100000'] });
    await c.closedWith(8000);
    const statuses = c.of('status').map((m) => `${m.state}:${(m.ts - T0) / 1000}`);
    expect(statuses).toEqual(['live:0', 'live:4.25', 'stale:4.25', 'live:10', 'stale:14', 'closed:20']);
  });

  it('a subscribe where nothing was recorded gets the feed stale', async () => {
    const dir = tmp();
    await record(dir, 5);
    await record(dir, 5, { first: 10 });
    h = await replayHarness(dir);
    const c = await Client.connect(url(h, 'from=100007&to=100012&speed=max'));
    const got = await c.request({ op: 'subscribe', id: 1, channel: 'quote', market: 'kospi', codes: ['100000'] });
    expect(got).toBeDefined();
    await c.closedWith(5000);
    expect(c.of('status').map((m) => `${m.state}:${(m.ts - T0) / 1000}`)).toEqual(['stale:4', 'live:10', 'closed:12']);
    expect(c.of('snapshot').map((m) => [m.seq, m.ts - T0])).toEqual([
      [5, 4000],
      [1, 10_000],
    ]);
  });

  it('a subscribe later in the replay starts that topic at the replay clock', async () => {
    const dir = tmp();
    await record(dir, 30);
    h = await replayHarness(dir);
    const c = await Client.connect(url(h, 'from=100000&to=100030&speed=10'));
    c.send({ op: 'subscribe', id: 1, channel: 'quote', market: 'kospi', codes: ['100000'] });
    await c.until((m) => m.type === 'patch' && m.ts >= T0 + 10_000, 5000);
    const seenBefore = c.of('patch').at(-1)!;
    await c.request({ op: 'subscribe', id: 2, channel: 'quote', market: 'kospi', codes: ['100001'] });
    await c.closedWith(5000);
    const later = c.msgs.filter((m) => m.topic === 'quote.kospi.100001');
    const snap = later[0]!;
    expect(snap.type).toBe('snapshot');
    // At the replay clock: no earlier than what the first topic had played, and the recorded row of that moment.
    expect(snap.ts).toBeGreaterThanOrEqual(seenBefore.ts);
    expect(snap.ts).toBeLessThan(T0 + 25_000);
    const second = (snap.ts - T0) / 1000;
    expect(snap.seq).toBe(second + 1);
    expect(snap.data).toMatchObject({ isuSrtCd: '100001', trdPrc: 1000 + ((second + 1) % 7) * 10 });
    // Then its patches, none missing, to the end of the window.
    expect(later.slice(1).map((m) => m.seq)).toEqual(Array.from({ length: 30 - snap.seq }, (_, i) => snap.seq + 1 + i));
  });
});

describe('the limits of live connections, on replays', () => {
  it('topics and wildcards per connection, as the token sets them', async () => {
    const dir = tmp();
    await record(dir, 5);
    const auth = new Authenticator({ tokens: ['plain', { token: 'small', limits: { maxTopics: 2 } }] });
    h = await replayHarness(dir, {}, { maxTopics: 3, maxWildcards: 1 }, auth);
    const small = await Client.connect(`${url(h, 'from=100000&to=100005&speed=1')}&token=small`);
    expect(small.of('welcome')[0]!.limits).toMatchObject({ maxTopics: 2, maxWildcards: 1 });
    expect(await small.request({ op: 'subscribe', id: 1, channel: 'quote', market: 'kospi', codes: ['100000', '100001', '100002'] })).toMatchObject({
      type: 'error',
      code: 'too_many_topics',
    });
    expect(await small.request({ op: 'subscribe', id: 2, channel: 'quote', market: 'kospi', codes: ['100000', '100001'] })).toMatchObject({
      type: 'subscribed',
    });
    expect(await small.request({ op: 'subscribe', id: 3, channel: 'quote', market: 'kospi', codes: ['100002'] })).toMatchObject({
      type: 'error',
      code: 'too_many_topics',
    });
    expect(await small.request({ op: 'subscribe', id: 4, channel: 'quote', market: 'kospi', codes: ['*'] })).toMatchObject({ type: 'subscribed' });
    expect(await small.request({ op: 'subscribe', id: 5, channel: 'quote', market: 'kosdaq', codes: ['*'] })).toMatchObject({
      type: 'error',
      code: 'too_many_topics',
    });
    const plain = await Client.connect(`${url(h, 'from=100000&to=100005&speed=1')}&token=plain`);
    expect(await plain.request({ op: 'subscribe', id: 1, channel: 'quote', market: 'kospi', codes: ['100000', '100001', '100002'] })).toMatchObject({
      type: 'subscribed',
    });
    small.close();
    plain.close();
  });

  it('the message rate: past it a message is refused (rate_limited); a flood closes the connection (1008)', async () => {
    const dir = tmp();
    await record(dir, 5);
    h = await replayHarness(dir, {}, { maxMessagesPerSecond: 5 });
    const c = await Client.connect(url(h, 'from=100000&to=100005&speed=1'));
    for (let i = 0; i < 14; i++) c.send({ op: 'ping', id: i });
    await c.wait(() => c.msgs.filter((m) => m.type === 'pong' || m.type === 'error').length >= 14, 3000, 'answers');
    // A burst of twice the rate passes, the rest is refused.
    expect(c.of('pong').length).toBeGreaterThanOrEqual(10);
    expect(c.of('error').length).toBeGreaterThan(0);
    expect(c.of('error').every((e) => e.code === 'rate_limited')).toBe(true);
    for (let i = 0; i < 40; i++) c.send({ op: 'ping', id: 100 + i });
    expect(await c.closedWith(3000)).toEqual({ code: 1008, reason: 'message rate limit exceeded' });
    expect(h.closes).toEqual([1008]);
  });
});

describe('slow replay clients', () => {
  it.each(['max', '1000'])(
    'one that does not read is closed with 4008, as a live one would be (speed %s)',
    async (speed) => {
      const dir = tmp();
      await record(dir, 120, { rows: 200, pad: 600 });
      const hh = (h = await replayHarness(dir));
      const slow = await rawClient(url(hh, `from=100000&to=235900&speed=${speed}`));
      slow.send({ op: 'subscribe', id: 1, channel: 'quote', market: 'kospi', codes: ['*'] });
      // The server gives up on it (its socket then holds the rest unread): 4008, and the connection is gone.
      await expect.poll(() => hh.closes, { timeout: 20_000 }).toEqual([4008]);
      await expect.poll(() => hh.replay.size, { timeout: 10_000 }).toBe(0);
      expect(hh.steps).toContain('close');
      if (speed !== 'max') expect(hh.steps[0]).toBe('conflate');
      slow.socket.destroy();
    },
    30_000,
  );

  it.each(['max', '1000'])(
    'one that does not read is not cut by the heartbeat while its pings wait behind what it has not read: 4008, as on /ws (speed %s)',
    async (speed) => {
      const dir = tmp();
      await record(dir, 120, { rows: 200, pad: 600 });
      // Pinged every 500 ms and never answering: cut after a second or so if the heartbeat timed it; closed after 2 s behind (the bytes it is owed never reach closeBytes).
      const hh = (h = await replayHarness(dir, { closeBytes: 1024 << 20 }, {}, undefined, 500));
      const t0 = Date.now();
      const slow = await rawClient(url(hh, `from=100000&to=235900&speed=${speed}`));
      slow.send({ op: 'subscribe', id: 1, channel: 'quote', market: 'kospi', codes: ['*'] });
      await expect.poll(() => hh.closes, { timeout: 20_000 }).not.toEqual([]);
      expect(hh.closes).toEqual([4008]);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(1900);
      slow.socket.destroy();
    },
    30_000,
  );

  it('one that never answers pings but reads is cut by the heartbeat (4002)', async () => {
    const dir = tmp();
    await record(dir, 5);
    const hh = (h = await replayHarness(dir, {}, {}, undefined, 100));
    const c = await Client.connect(url(hh, 'from=100000&to=235900&speed=1'), { autoPong: false });
    expect((await c.closedWith(3000)).code).toBe(1006);
    expect(hh.closes).toEqual([4002]);
  });

  it('one that pauses is conflated, then catches up with fresh snapshots at the replay clock, and ends with the recorded state', async () => {
    const dir = tmp();
    const { store, drops } = await record(dir, 60, { rows: 200, pad: 600 });
    expect(drops).toEqual([]);
    const hh = (h = await replayHarness(dir, { conflateBytes: 64 << 10, closeBytes: 1024 << 20, maxBehindMs: 20_000 }));
    const c = await Client.connect(url(hh, 'from=100000&to=235900&speed=1000'));
    const socket = (c.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
    c.send({ op: 'subscribe', id: 1, channel: 'quote', market: 'kospi', codes: ['*'] });
    await c.until((m) => m.type === 'subscribed');
    socket.pause();
    await expect.poll(() => hh.steps, { timeout: 10_000 }).toContain('conflate');
    socket.resume();
    expect(await c.closedWith(20_000)).toEqual({ code: 1000, reason: 'replay ended' });
    expect(hh.steps).not.toContain('close');
    // Patches were skipped while it was behind; fresh snapshots replaced them.
    const initial = 200;
    expect(c.of('snapshot').length).toBeGreaterThan(initial);
    expect(c.of('patch').length).toBeLessThan(59 * 200);
    const final = rowsOf(c.msgs);
    expect(final.size).toBe(200);
    for (const e of store.entries('quote', 'kospi')) expect(final.get(e.topic), e.topic).toEqual(e.row);
    expect(c.msgs.at(-1)).toMatchObject({ type: 'status', state: 'closed', reason: 'replay ended' });
  }, 40_000);
});
