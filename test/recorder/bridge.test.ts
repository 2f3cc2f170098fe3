import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, utimesSync } from 'node:fs';
import { createServer } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { Client } from '../gateway/harness.js';
import { startBridge, type TestBridge } from '../bridge/helpers.js';
import { DAY, T0, openReplay, record } from './helpers.js';
import { applyOps } from '../../src/protocol/patch.js';
import type { PatchOp } from '../../src/protocol/messages.js';
import type { Row } from '../../src/protocol/row.js';
import { exportFeed } from '../../src/http/recordings.js';

/**
 * The recordings as a bridge serves them: nothing at all with RECORD=off,
 * `/recordings` with each day's and feed's time range and size read from
 * the data (a compressed day too), and a damaged recording replayed
 * through `/ws/replay` up to its damage and on from the next segment, with
 * the damage counted in /metrics.
 */

let tb: TestBridge | undefined;
afterEach(async () => {
  await tb?.bridge.stop();
  tb = undefined;
});

const tmp = () => mkdtempSync(join(tmpdir(), 'krx-rb-'));

/** The status and body of a refused upgrade. */
function refused(target: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    const ws = new WebSocket(target);
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    ws.on('open', () => resolve({ status: 101, body: '' }));
    ws.on('error', () => undefined);
  });
}

describe('RECORD=off', () => {
  it('records nothing and serves no replay and no recordings: recording_off', async () => {
    const data = tmp();
    await record(join(data, 'recordings'), 5); // a recording from before, still on disk
    tb = await startBridge({ RECORD: 'off', DATA_DIR: data });
    expect(tb.bridge.recorder).toBeUndefined();
    // Refused after the handshake, so a browser sees why: an error frame, then close 4004.
    const ws = await openReplay(`${tb.wsUrl}/replay?date=${DAY}&from=100000&to=100005`);
    expect(ws.close).toBe(4004);
    expect(ws.frames).toEqual([expect.objectContaining({ type: 'error', code: 'recording_off', retryable: false })]);
    for (const path of ['/recordings', `/recordings/${DAY}/quote.kospi`]) {
      const res = await fetch(`${tb.url}${path}`);
      expect(res.status, path).toBe(404);
      expect(((await res.json()) as { error: { code: string } }).error.code, path).toBe('recording_off');
    }
    // Another path under /ws is still not an endpoint at all.
    expect(JSON.parse((await refused(`${tb.wsUrl}/replayx`)).body).error.code).toBe('not_found');
  });
});

describe('a replay that is not recorded, to the SDK', () => {
  it('rejects what waits with not_recorded and does not reconnect', async () => {
    tb = await startBridge({ DATA_DIR: tmp(), RECORD: 'on' });
    const { KrxClient } = await import('../../src/client/index.js');
    const k = new KrxClient(tb.wsUrl, { WebSocket: WebSocket as never, replay: { date: '20200102', from: '090000', to: '100000', speed: 10 } });
    const states: string[] = [];
    k.on('state', (_prev, next) => states.push(next));
    const err = (await k.subscribe('quote', 'kospi', ['005930']).catch((e: unknown) => e)) as { code: string; message: string };
    expect(err.code).toBe('not_recorded');
    expect(err.message).toMatch(/20200102/);
    expect(k.state).toBe('closed');
    expect(states).not.toContain('reconnecting');
  });
});

describe('GET /recordings', () => {
  it('lists each day and feed with its time range and size, from the data, also once the day is compressed', async () => {
    const data = tmp();
    const dir = join(data, 'recordings');
    await record(dir, 20); // quote.kospi 10:00:00–10:00:19
    await record(dir, 11, { feed: ['book', 'kospi'], first: 30 }); // book.kospi 10:00:30–10:00:40
    // A bridge of another day: the past day is compressed as it starts.
    tb = await startBridge({ RECORD: 'on', DATA_DIR: data, RECORD_DAYS: 3650 });
    await tb.bridge.recorder!.settled();
    expect(readdirSync(join(dir, DAY)).sort()).toEqual(['seg-100000.ndjson.gz', 'seg-100000.summary.json']);
    // The files' times say nothing of the data.
    for (const f of readdirSync(join(dir, DAY))) utimesSync(join(dir, DAY, f), new Date(), new Date());
    const expected = {
      date: DAY,
      from: '100000',
      to: '100041',
      segments: 1,
      bytes: statSync(join(dir, DAY, 'seg-100000.ndjson.gz')).size,
      compressed: true,
      feeds: [
        { feed: 'book.kospi', from: '100030', to: '100041', changes: 33, bytes: expect.any(Number) },
        { feed: 'quote.kospi', from: '100000', to: '100020', changes: 60, bytes: expect.any(Number) },
      ],
      // The first process stopped after 10:00:19, the second began at 10:00:30.
      gaps: [{ from: '100020', to: '100030' }],
    };
    const list = async () => ((await (await fetch(`${tb!.url}/recordings`)).json()) as { days: { date: string }[] }).days.find((d) => d.date === DAY);
    expect(await list()).toEqual(expected);
    // Without its summary (a process killed before writing it), the day is read from the compressed data: the same.
    rmSync(join(dir, DAY, 'seg-100000.summary.json'));
    expect(await list()).toEqual(expected);
    // A window of the feed outside its recording is not recorded.
    const outside = await fetch(`${tb.url}/recordings/${DAY}/book.kospi?from=100000&to=100030`);
    expect(outside.status).toBe(404);
    expect(((await outside.json()) as { error: { code: string } }).error.code).toBe('not_recorded');
    expect((await fetch(`${tb.url}/recordings/${DAY}/book.kospi?from=100000&to=100031`)).status).toBe(200);
    // A window of NDJSON opens with each topic as it stood at `from`: rebuilt from its lines alone, it is the recorded state at `to`.
    const win = (await (await fetch(`${tb.url}/recordings/${DAY}/quote.kospi?codes=100000,100001&from=100005&to=100010`)).text()).trim().split('\n');
    const msgs = win.map((l) => JSON.parse(l) as { type: string; topic: string; seq: number; ts: number; data?: Row; ops?: PatchOp[] });
    expect(msgs.map((m) => `${m.type === 'snapshot' ? 's' : 'p'}${m.seq}`)).toEqual(['s5', 's5', 'p6', 'p6', 'p7', 'p7', 'p8', 'p8', 'p9', 'p9', 'p10', 'p10']);
    expect(msgs[0]).toMatchObject({ topic: 'quote.kospi.100000', ts: T0 + 4000, data: { isuSrtCd: '100000', trdPrc: 1000 + (4 % 7) * 10 } });
    const rebuilt = new Map<string, Row>();
    for (const m of msgs) rebuilt.set(m.topic, m.type === 'snapshot' ? m.data! : applyOps(rebuilt.get(m.topic)!, m.ops!)!);
    expect(rebuilt.get('quote.kospi.100001')).toEqual({ isuSrtCd: '100001', trdPrc: 1000 + ((9 + 1) % 7) * 10, memo: '' });
    // A window with no change of the codes asked for: a CSV of its header alone, an empty NDJSON.
    const quiet = `${tb.url}/recordings/${DAY}/quote.kospi?codes=999999&from=100005&to=100010`;
    expect(await (await fetch(`${quiet}&format=csv`)).text()).toBe('ts,topic,seq\n');
    expect(await (await fetch(quiet)).text()).toBe('');
    // A date that is no day is a bad request, not a day without a recording.
    const bad = await fetch(`${tb.url}/recordings/20261301/quote.kospi`);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe('invalid_params');
    // A misspelt parameter, or one given twice, is refused: not the whole day in place of the window meant.
    for (const [q, message] of [
      ['codes=100000&form=100005', '1 unknown query parameter; this takes codes, from, to, format'],
      ['from=100005&from=100009', 'from is given more than once'],
      ['codes=100000&token=a&token=b', 'token is given more than once'],
      // A code that cannot be one is refused, not answered with an export that holds nothing.
      ['codes=100000,abc', 'codes: "abc" is not a stock code (6 characters, 0-9 and A-Z)'],
    ]) {
      const r = await fetch(`${tb.url}/recordings/${DAY}/quote.kospi?${q}`);
      expect(r.status, q).toBe(400);
      expect(((await r.json()) as { error: unknown }).error, q).toEqual({ code: 'invalid_params', message });
    }
    // The access token's parameter is taken beside them.
    expect((await fetch(`${tb.url}/recordings/${DAY}/quote.kospi?codes=100000&from=100005&to=100006&token=any`)).status).toBe(200);
    // An index code is one of the market's (K… on KOSPI), as on /ws.
    const index = await fetch(`${tb.url}/recordings/${DAY}/index.kospi?codes=Q001`);
    expect(index.status).toBe(400);
    expect(((await index.json()) as { error: unknown }).error).toEqual({ code: 'invalid_params', message: 'codes: "Q001" is not an index code of kospi' });
    // The listing takes none but the token.
    const listed = await fetch(`${tb.url}/recordings?date=${DAY}`);
    expect(listed.status).toBe(400);
    expect(((await listed.json()) as { error: unknown }).error).toEqual({
      code: 'invalid_params',
      message: '1 unknown query parameter; this takes only token',
    });
    expect((await fetch(`${tb.url}/recordings?token=any`)).status).toBe(200);
  });
});

describe('the last second of a day', () => {
  it('is listed (to 240000), replayed and exported: the default end is the end of the day, and 240000 may be asked for', async () => {
    const data = tmp();
    // quote.kospi 23:59:55–23:59:59 KST (seq 1–5 of each code).
    await record(join(data, 'recordings'), 5, { first: 13 * 3600 + 59 * 60 + 55 });
    tb = await startBridge({ RECORD: 'on', DATA_DIR: data, RECORD_DAYS: 3650 });
    await tb.bridge.recorder!.settled();
    const day = ((await (await fetch(`${tb.url}/recordings`)).json()) as { days: { date: string; to: string; feeds: { to: string }[] }[] }).days.find(
      (d) => d.date === DAY,
    );
    expect(day).toMatchObject({ from: '235955', to: '240000', feeds: [{ to: '240000' }] });
    for (const q of ['from=235957&speed=max', 'from=235957&to=240000&speed=max']) {
      const c = await Client.connect(`${tb.wsUrl}/replay?date=${DAY}&${q}`);
      c.send({ op: 'subscribe', id: 1, channel: 'quote', market: 'kospi', codes: ['100000'] });
      expect(await c.closedWith(10_000), q).toEqual({ code: 1000, reason: 'replay ended' });
      const seqs = c.msgs.filter((m) => m.topic === 'quote.kospi.100000').map((m) => `${m.type === 'snapshot' ? 's' : 'p'}${m.seq}`);
      expect(seqs, q).toEqual(['s2', 'p3', 'p4', 'p5']);
    }
    for (const q of ['from=235958', 'from=235958&to=240000']) {
      const lines = (await (await fetch(`${tb.url}/recordings/${DAY}/quote.kospi?codes=100000&${q}`)).text()).trim().split('\n');
      expect(
        lines.map((l) => `${(JSON.parse(l) as { type: string }).type[0]}${(JSON.parse(l) as { seq: number }).seq}`),
        q,
      ).toEqual(['s3', 'p4', 'p5']);
    }
    // Past the end of the day is not a time.
    expect((await fetch(`${tb.url}/recordings/${DAY}/quote.kospi?to=240001`)).status).toBe(400);
    const late = await openReplay(`${tb.wsUrl}/replay?date=${DAY}&from=235957&to=240001`);
    expect(late.frames).toEqual([expect.objectContaining({ type: 'error', code: 'invalid_params' })]);
    // A misspelt parameter is refused, not ignored for a replay of the whole day at speed 1.
    const typo = await openReplay(`${tb.wsUrl}/replay?date=${DAY}&from=235957&sped=max`);
    expect(typo.frames).toEqual([
      expect.objectContaining({ type: 'error', code: 'invalid_params', message: '1 unknown query parameter; this takes date, from, to, speed' }),
    ]);
    const twice = await openReplay(`${tb.wsUrl}/replay?date=${DAY}&date=${DAY}`);
    expect(twice.frames).toEqual([expect.objectContaining({ type: 'error', code: 'invalid_params', message: 'date is given more than once' })]);
    const tokens = await openReplay(`${tb.wsUrl}/replay?date=${DAY}&token=a&token=b`);
    expect(tokens.frames).toEqual([expect.objectContaining({ type: 'error', code: 'invalid_params', message: 'token is given more than once' })]);
  });
});

describe('a damaged recording', () => {
  it('replays up to the damage, goes on from the next segment, and counts the damage', async () => {
    const data = tmp();
    const dir = join(data, 'recordings');
    await record(dir, 30, { segmentMs: 10_000 }); // segments 10:00:00, 10:00:10, 10:00:20
    const first = join(dir, DAY, 'seg-100000.ndjson');
    // A torn last line, as a crash in the middle of a write leaves it (in the change of 10:00:09, seq 10), and no summary.
    const text = readFileSync(first, 'utf8');
    truncateSync(first, Buffer.byteLength(text.slice(0, text.indexOf('"topic":"quote.kospi.100000","seq":10'))));
    rmSync(join(dir, DAY, 'seg-100000.summary.json'));
    tb = await startBridge({ RECORD: 'on', DATA_DIR: data, RECORD_DAYS: 3650 });
    await tb.bridge.recorder!.settled();
    expect(existsSync(`${first}.gz`)).toBe(true);
    const c = await Client.connect(`${tb.wsUrl}/replay?date=${DAY}&from=100000&to=100030&speed=max`);
    c.send({ op: 'subscribe', id: 1, channel: 'quote', market: 'kospi', codes: ['100000'] });
    expect(await c.closedWith(10_000)).toEqual({ code: 1000, reason: 'replay ended' });
    const seqs = c.msgs.filter((m) => m.topic === 'quote.kospi.100000').map((m) => `${m.type === 'snapshot' ? 's' : 'p'}${m.seq}`);
    // The good part of the first segment, then, for what was lost, the next segment's keyframe (it opened with the change
    // of 10:00:10, seq 11), and on.
    expect(seqs).toEqual(['s1', ...range(2, 9).map((n) => `p${n}`), 's11', ...range(12, 30).map((n) => `p${n}`)]);
    const metrics = await (await fetch(`${tb.url}/metrics`)).text();
    expect(metrics).toMatch(/^krx_recorder_damage_total 1$/m);
    // The listing reads the good part too.
    const day = ((await (await fetch(`${tb.url}/recordings`)).json()) as { days: { date: string; from: string; to: string }[] }).days.find(
      (d) => d.date === DAY,
    );
    expect(day).toMatchObject({ from: '100000', to: '100030' });
  });
});

describe('MAX_REPLAYS', () => {
  it('refuses a replay past it with 503 server_full, while /ws takes connections, and takes one again when a replay ends', async () => {
    const data = tmp();
    await record(join(data, 'recordings'), 5);
    tb = await startBridge({ RECORD: 'on', DATA_DIR: data, RECORD_DAYS: 3650, MAX_REPLAYS: 2 });
    const target = `${tb.wsUrl}/replay?date=${DAY}&from=100000&to=100005&speed=1`;
    const open = [await Client.connect(target), await Client.connect(target)];
    const third = await refused(target);
    expect(third.status).toBe(503);
    expect(JSON.parse(third.body).error).toMatchObject({ code: 'server_full', message: expect.stringMatching(/replays at once.*\(2\)/) });
    // A plain GET of the replay's URL (what the SDK asks after a socket failed to open) says the same.
    const probe = await fetch(target.replace(/^ws/, 'http'));
    expect([probe.status, probe.headers.get('retry-after')]).toEqual([503, '30']);
    // Live connections are not replays.
    const live = await Client.connect(tb.wsUrl);
    const metrics = await (await fetch(`${tb.url}/metrics`)).text();
    expect(metrics).toMatch(/^krx_connections_total\{outcome="replays_full"\} 1$/m);
    // Replays are counted apart from live clients.
    expect(metrics).toMatch(/^krx_replays 2$/m);
    expect(metrics).toMatch(/^krx_clients 1$/m);
    live.close();
    open[0]!.close();
    await new Promise((r) => open[0]!.ws.once('close', r));
    const again = await Client.connect(target);
    again.close();
    open[1]!.close();
  });
});

describe('MAX_REPLAYS_PER_IP', () => {
  it('refuses one address a replay past it with 429, another address not, and frees a refused replay’s slot at once', async () => {
    const data = tmp();
    await record(join(data, 'recordings'), 5);
    tb = await startBridge({ RECORD: 'on', DATA_DIR: data, RECORD_DAYS: 3650, MAX_REPLAYS: 2, MAX_REPLAYS_PER_IP: 1 });
    await tb.bridge.recorder!.settled();
    const target = `${tb.wsUrl}/replay?date=${DAY}&from=100000&to=100005&speed=1`;
    const first = await Client.connect(target);
    const again = await refused(target);
    expect([again.status, JSON.parse(again.body).error]).toEqual([429, { code: 'too_many_connections', message: 'too many replays from this address (1)' }]);
    const other = await Client.connect(target, { localAddress: '127.0.0.2' });
    await Promise.all([first, other].map((c) => new Promise((r) => (c.ws.once('close', r), c.close()))));
    // A replay of a day not recorded, by a peer that never reads nor answers the close: refused (4004), and its slot is free
    // at once, not once the close handshake gives up (5 s).
    const { port } = new URL(tb.url);
    const silent = connect(Number(port), '127.0.0.1');
    silent.write(
      `GET /ws/replay?date=20200102&from=100000&to=100005 HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`,
    );
    const answered = await new Promise<string>((resolve) => silent.once('data', (b: Buffer) => resolve(b.toString('latin1'))));
    expect(answered).toMatch(/^HTTP\/1\.1 101/);
    silent.pause();
    const started = Date.now();
    const next = await Client.connect(target);
    expect(Date.now() - started).toBeLessThan(2000);
    // The gauge counts the slots held: the playing replay, not the refused one still waiting for its close.
    expect(await (await fetch(`${tb.url}/metrics`)).text()).toMatch(/^krx_replays 1$/m);
    next.close();
    silent.destroy();
  });
});

function range(a: number, b: number): number[] {
  return Array.from({ length: b - a + 1 }, (_, i) => a + i);
}

describe('an export to a client that stops reading', () => {
  it('is closed once the client has taken nothing for stallMs, the day’s reader with it; one that reads gets all of it', async () => {
    const dir = tmp();
    // 100 s of ten rows with 20 KB that change every second: about 20 MB of frames, past what loopback buffers take (about 10 MB).
    await record(dir, 100, { rows: 10, pad: 20_000, maxPendingBytes: 64 << 20 });
    const ended: string[] = [];
    const server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      res.on('close', () => ended.push(res.writableFinished ? 'finished' : 'closed unfinished'));
      void exportFeed({ dir, stallMs: 300 }, url.pathname, url.searchParams, res);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    try {
      const stalled = connect(port, '127.0.0.1', () => stalled.write(`GET /recordings/${DAY}/quote.kospi HTTP/1.1\r\nHost: x\r\n\r\n`));
      stalled.pause(); // never reads
      // Closed by the server: the kernel's buffers filled, then 300 ms without a drain.
      for (let i = 0; i < 100 && ended.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
      expect(ended).toEqual(['closed unfinished']);
      stalled.destroy();
      const full = await (await fetch(`http://127.0.0.1:${port}/recordings/${DAY}/quote.kospi`)).text();
      expect(full.trim().split('\n')).toHaveLength(10 * 100);
      expect(ended).toEqual(['closed unfinished', 'finished']);
    } finally {
      server.close();
    }
  });
});
