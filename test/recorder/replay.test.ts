import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { applyOps } from '../../src/protocol/patch.js';
import type { PatchMsg, ServerMsg, SnapshotMsg } from '../../src/protocol/messages.js';
import type { Row } from '../../src/protocol/row.js';
import { startCli, type CliBridge } from '../bridge/cli.js';
import { TestClient, until } from '../bridge/helpers.js';
import { openReplay } from './helpers.js';
import { readDay } from '../../src/recorder/reader.js';

/**
 * Record a live session against the simulator, kill the bridge (SIGKILL),
 * start another process on the same DATA_DIR, and replay a 10-second window
 * at speed 10 from it: the replay's snapshots are the live client's state at
 * `from`, and its patches (topic, seq, ops, ts) exactly the live ones
 * between `from` and `to`.
 */

const CODES = ['005930', '000660', '035420', '005380', '068270'];
const TOPICS = CODES.map((c) => `quote.kospi.${c}`);

/** `YYYYMMDD` and `HHMMSS` (KST) of a moment. */
function kst(ms: number): { date: string; time: string } {
  const iso = new Date(ms + 9 * 3600_000).toISOString();
  return { date: iso.slice(0, 10).replace(/-/g, ''), time: iso.slice(11, 19).replace(/:/g, '') };
}

/** A client's state of each topic from its messages with ts < `before`. */
function stateBefore(msgs: readonly ServerMsg[], before: number): Map<string, { row: Row; seq: number }> {
  const out = new Map<string, { row: Row; seq: number }>();
  for (const m of msgs) {
    if (m.type === 'snapshot' && m.ts < before) out.set(m.topic, { row: m.data as Row, seq: m.seq });
    if (m.type === 'patch' && m.ts < before) {
      const held = out.get(m.topic);
      if (held) out.set(m.topic, { row: applyOps(held.row, m.ops)!, seq: m.seq });
    }
  }
  return out;
}

describe('record, crash, replay', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'krx-rec-'));
  const procs: CliBridge[] = [];
  afterAll(() => {
    for (const p of procs) p.kill();
  });

  it('replays a window of the recorded session, snapshots and patches as live clients got them, from another process after a SIGKILL', async () => {
    const env = { DATA_DIR: dataDir, RECORD: 'on', MARKET_CLOCK: 'always' };
    const a = await startCli(env);
    procs.push(a);
    const live = await new TestClient(`${a.url.replace('http', 'ws')}/ws`).ready();
    live.send({ op: 'subscribe', channel: 'quote', market: 'kospi', codes: CODES });
    await until(() => live.ofType('snapshot').length >= CODES.length, 10_000, 'snapshots');
    const t0 = Math.max(...live.ofType('snapshot').map((m) => m.ts));
    const from = Math.ceil((t0 + 1000) / 1000) * 1000;
    const to = from + 10_000;
    await until(() => live.ofType('patch').some((m) => m.ts >= to + 1000), 30_000, 'a recorded window');
    a.child.kill('SIGKILL');
    await until(() => a.exited() !== undefined, 10_000, 'the kill');
    live.close();

    const b = await startCli(env);
    procs.push(b);
    const d = kst(from);
    const window = `date=${d.date}&from=${d.time}&to=${kst(to).time}&speed=10`;
    const replay = new TestClient(`${b.url.replace('http', 'ws')}/ws/replay?${window}`);
    await replay.ready();
    const welcome = replay.ofType('welcome')[0]!;
    expect(welcome.replay).toEqual({ date: d.date, from: d.time, to: kst(to).time, speed: 10 });
    const started = performance.now();
    replay.send({ op: 'subscribe', id: 1, channel: 'quote', market: 'kospi', codes: CODES });
    await until(() => replay.closed !== undefined, 20_000, 'the end of the replay');
    const took = performance.now() - started;
    expect(replay.closed).toEqual({ code: 1000, reason: 'replay ended' });
    // Ten recorded seconds at speed 10: about a second.
    expect(took).toBeGreaterThan(700);
    expect(took).toBeLessThan(5000);

    const atFrom = stateBefore(live.messages, from);
    const snaps = replay.ofType('snapshot') as SnapshotMsg[];
    expect(snaps.map((s) => s.topic).sort()).toEqual([...TOPICS].sort());
    for (const s of snaps)
      expect({ topic: s.topic, seq: s.seq, data: s.data }).toEqual({ topic: s.topic, seq: atFrom.get(s.topic)!.seq, data: atFrom.get(s.topic)!.row });
    const key = (m: PatchMsg) => ({ topic: m.topic, seq: m.seq, ops: m.ops, ts: m.ts });
    const livePatches = (live.ofType('patch') as PatchMsg[]).filter((m) => m.ts >= from && m.ts < to).map(key);
    const replayed = (replay.ofType('patch') as PatchMsg[]).map(key);
    expect(livePatches.length).toBeGreaterThan(5);
    expect(replayed).toEqual(livePatches);
    expect(replay.problems).toEqual([]);
    const ended = replay.ofType('status').at(-1)!;
    expect(ended).toMatchObject({ channel: 'quote', market: 'kospi', state: 'closed', reason: 'replay ended' });

    // A day that is not recorded, and a window after the recording: coded refusals.
    for (const q of ['date=20200101&from=090000&to=100000', `date=${d.date}&from=000000&to=000100`, `date=${d.date}&from=120000&to=110000&speed=5000`]) {
      const refused = await openReplay(`${b.url.replace('http', 'ws')}/ws/replay?${q}`);
      const code = q.includes('speed=5000') ? 'invalid_params' : 'not_recorded';
      expect(refused.frames, q).toEqual([expect.objectContaining({ type: 'error', code })]);
      expect(refused.close, q).toBe(4004);
    }

    // Browse and export.
    const list = (await (await request(`${b.url}/recordings`)).body.json()) as { days: { date: string; feeds: { feed: string }[]; bytes: number }[] };
    const day = list.days.find((x) => x.date === d.date)!;
    expect(day.feeds).toEqual(expect.arrayContaining([expect.objectContaining({ feed: 'quote.kospi' })]));
    // The recording covers the window, as the listing says.
    const quote = day.feeds.find((f) => f.feed === 'quote.kospi') as unknown as { from: string; to: string; changes: number };
    expect(quote.from <= d.time && quote.to >= kst(to).time).toBe(true);
    expect(quote.changes).toBeGreaterThan(livePatches.length);
    const nd = await (await request(`${b.url}/recordings/${d.date}/quote.kospi?codes=005930&from=${d.time}&to=${kst(to).time}`)).body.text();
    const [opening, ...lines] = nd
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as PatchMsg);
    // The window opens with the topic as it stood at `from`, then its changes as live clients got them.
    expect(opening).toMatchObject({
      type: 'snapshot',
      topic: 'quote.kospi.005930',
      seq: atFrom.get('quote.kospi.005930')!.seq,
      data: atFrom.get('quote.kospi.005930')!.row,
    });
    expect(lines.map(key)).toEqual(livePatches.filter((p) => p.topic === 'quote.kospi.005930'));
    const csv = await (await request(`${b.url}/recordings/${d.date}/quote.kospi?codes=005930&from=${d.time}&to=${kst(to).time}&format=csv`)).body.text();
    const rows = csv.trim().split('\n');
    expect(rows[0]).toMatch(/^ts,topic,seq,isuSrtCd,/);
    expect(rows.length - 1).toBe(lines.length);
    const status = (await (await request(`${b.url}/status`)).body.json()) as { recorder: { diskBytes: number; dropped: number } };
    expect(status.recorder.diskBytes).toBeGreaterThan(1000);
    expect(status.recorder.dropped).toBe(0);

    // The second process records once somebody subscribes: the kill is a gap, in the listing and in a replay across it.
    const killedAt = Math.max(...live.messages.filter((m) => m.type === 'patch').map((m) => (m as PatchMsg).ts));
    const later = await new TestClient(`${b.url.replace('http', 'ws')}/ws`).ready();
    later.send({ op: 'subscribe', channel: 'quote', market: 'kospi', codes: CODES });
    await until(() => later.ofType('patch').length > 0, 20_000, 'the second process polling');
    const resumedAt = Math.min(...later.ofType('patch').map((m) => (m as PatchMsg).ts));
    later.close();
    // The last moment the killed process recorded: the last line before the next process's first keyframe.
    let lastBefore: number | undefined;
    let prev: number | undefined;
    for await (const l of readDay(join(dataDir, 'recordings'), d.date)) {
      if (l.k === 'K' && l.start === true && prev !== undefined) lastBefore ??= prev;
      if (l.k === 'c' || l.k === 's' || l.k === 'X') prev = l.t;
    }
    expect(Math.abs(lastBefore! - killedAt)).toBeLessThan(5000);
    const listed = (await (await request(`${b.url}/recordings`)).body.json()) as { days: { date: string; gaps: { from: string; to: string }[] }[] };
    const gaps = listed.days.find((x) => x.date === d.date)!.gaps;
    // From the second after the last one recorded to the second recording began again.
    expect(gaps).toEqual([{ from: kst(Math.floor(lastBefore! / 1000) * 1000 + 1000).time, to: expect.any(String) }]);
    expect(gaps[0]!.to <= kst(resumedAt).time).toBe(true);
    const across = new TestClient(
      `${b.url.replace('http', 'ws')}/ws/replay?date=${d.date}&from=${kst(killedAt - 2000).time}&to=${kst(resumedAt + 2000).time}&speed=max`,
    );
    await across.ready();
    across.send({ op: 'subscribe', id: 1, channel: 'quote', market: 'kospi', codes: CODES });
    await until(() => across.closed !== undefined, 20_000, 'the end of the replay across the kill');
    const states = (across.ofType('status') as { state: string; reason?: string; ts: number }[]).map((m) => m.state);
    expect(states).toEqual(['live', 'stale', 'live', 'closed']);
    const [wasLive, stale] = across.ofType('status') as { reason: string; ts: number }[];
    // From the last moment recorded, or from when the status before it began if that is later (by a few ms).
    expect(stale).toMatchObject({ reason: 'not recorded: the bridge was not recording', ts: Math.max(lastBefore!, wasLive!.ts) });
  }, 120_000);
});
