import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, truncateSync, writeFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalBus } from '../../src/bus/bus.js';
import { silentLogger } from '../../src/log.js';
import { DEFAULT_LIMITS } from '../../src/protocol/constants.js';
import { Recorder } from '../../src/recorder/recorder.js';
import { readDay, segments, type Damage } from '../../src/recorder/reader.js';
import { ReplayServer } from '../../src/recorder/replay.js';
import { StateStore } from '../../src/state/store.js';
import { Client, startHarness, type Harness } from '../gateway/harness.js';
import { rawClient } from '../reliability/helpers.js';

/** The recorder's files, retention, damage and a full disk; replays at speed max, past the end and to a client that does not read. */

const DAY = '20261124';
const T0 = Date.parse('2026-11-24T10:00:00+09:00');

/** Records `seconds` of a moving 3-symbol quote feed (one batch a second) into `dir`; returns the recorder. */
async function record(dir: string, seconds: number, opts: { rows?: number; pad?: number; maxPendingBytes?: number } = {}) {
  const store = new StateStore();
  const bus = new LocalBus();
  let now = T0;
  const drops: number[] = [];
  const r = new Recorder({ dir, store, logger: silentLogger(), now: () => now, onDrop: (_why, n) => drops.push(n), ...(opts.maxPendingBytes ? { maxPendingBytes: opts.maxPendingBytes } : {}) }, bus);
  r.start();
  const codes = Array.from({ length: opts.rows ?? 3 }, (_, i) => String(100000 + i));
  bus.publishStatus({ channel: 'quote', market: 'kospi', state: 'live', intervalMs: 1000, ts: now });
  for (let s = 0; s < seconds; s++) {
    now = T0 + s * 1000;
    bus.publish(store.apply('quote', 'kospi', codes.map((c, i) => ({ isuSrtCd: c, trdPrc: 1000 + ((s + i) % 7) * 10, memo: String(s % 10).repeat(opts.pad ?? 0) })), now));
  }
  await r.stop();
  return { r, drops, store };
}

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const closes: number[] = [];
async function replayHarness(dir: string) {
  const replay = new ReplayServer({ dir, logger: silentLogger(), limits: DEFAULT_LIMITS, heartbeatMs: 15_000, server: 'krx-bridge/test', closeBytes: 4 << 20, maxBehindMs: 2000, onClose: (c) => closes.push(c) });
  h = await startHarness({ replay });
  return Object.assign(h, { replay });
}

describe('the recorder', () => {
  it('writes segments that open with a keyframe, then changes and statuses in order', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'krx-r-'));
    await record(dir, 5);
    const segs = await segments(dir, DAY);
    expect(segs.map((s) => s.start)).toEqual(['100000']);
    const kinds: string[] = [];
    for await (const l of readDay(dir, DAY)) kinds.push(l.k);
    expect(kinds.slice(0, 3)).toEqual(['K', 'S', 'E']); // the feed's status was known when the segment opened
    expect(kinds.filter((k) => k === 'c').length).toBeGreaterThan(5);
    expect(JSON.parse(readFileSync(join(dir, DAY, 'feeds.json'), 'utf8'))).toEqual(['quote.kospi']);
  });

  it('drops and counts what a slow or full disk cannot take, without waiting', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'krx-r-'));
    const { drops, r } = await record(dir, 30, { rows: 50, pad: 2000, maxPendingBytes: 64 << 10 });
    expect(drops.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    expect((await r.info()).dropped).toBeGreaterThan(0);
  });

  it('compresses past days and deletes days past RECORD_DAYS', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'krx-r-'));
    for (const d of ['20261101', '20261120']) {
      mkdirSync(join(dir, d), { recursive: true });
      writeFileSync(join(dir, d, 'seg-100000.ndjson'), '{"k":"K","t":1}\n{"k":"E"}\n');
    }
    await record(dir, 2);
    expect(existsSync(join(dir, '20261101'))).toBe(false); // older than 7 days
    expect(readdirSync(join(dir, '20261120'))).toEqual(['seg-100000.ndjson.gz']);
    const lines = [];
    for await (const l of readDay(dir, '20261120')) lines.push(l.k);
    expect(lines).toEqual(['K', 'E']);
  });

  it('reads the good part of a truncated segment and reports the damage', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'krx-r-'));
    await record(dir, 10);
    const file = join(dir, DAY, 'seg-100000.ndjson');
    truncateSync(file, statSync(file).size - 25);
    const damage: Damage[] = [];
    let changes = 0;
    for await (const l of readDay(dir, DAY, undefined, (d) => damage.push(d))) if (l.k === 'c') changes++;
    expect(changes).toBeGreaterThan(20);
    expect(damage).toEqual([expect.objectContaining({ file: 'seg-100000.ndjson', reason: 'not JSON (torn or damaged)' })]);
  });
});

describe('replay', () => {
  it('at speed max: all of it at once, then replay ended and close 1000; a window past the end ends with the recording', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'krx-r-'));
    await record(dir, 20);
    const hh = await replayHarness(dir);
    const c = await Client.connect(`${hh.url}/replay?date=${DAY}&from=100005&to=235900&speed=max`);
    const t0 = performance.now();
    c.send({ op: 'subscribe', id: 1, channel: 'quote', market: 'kospi', codes: ['100000', '100001'] });
    const closed = await c.closedWith(5000);
    expect(closed).toEqual({ code: 1000, reason: 'replay ended' });
    expect(performance.now() - t0).toBeLessThan(2000);
    expect(c.of('snapshot').map((m) => m.seq)).toEqual([5, 5]); // the changes of 10:00:00–10:00:04
    expect(c.of('patch').length).toBeGreaterThan(10);
    expect(c.of('status').at(-1)).toMatchObject({ state: 'closed', reason: 'replay ended' });
  });

  it('a replay client that does not read is closed with 4008, as a live one would be', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'krx-r-'));
    await record(dir, 120, { rows: 200, pad: 600 });
    const hh = await replayHarness(dir);
    closes.length = 0;
    const slow = await rawClient(`${hh.url}/replay?date=${DAY}&from=100000&to=235900&speed=max`);
    slow.send({ op: 'subscribe', id: 1, channel: 'quote', market: 'kospi', codes: ['*'] });
    // The server gives up on it (its socket then holds the rest unread): 4008, and the connection is gone.
    await expect.poll(() => closes, { timeout: 20_000 }).toEqual([4008]);
    await expect.poll(() => hh.replay.size, { timeout: 10_000 }).toBe(0);
    slow.socket.destroy();
  }, 30_000);
});
