import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowChecksum } from '../../src/protocol/crc32.js';
import { TestClient, connect, freeze, startBridge, truth, until, type TestBridge } from '../bridge/helpers.js';

/**
 * No silent loss: a resync brings a client exactly to the truth; a client
 * whose local row went wrong notices it from the next patch's checksum and
 * repairs it with a resync; and across a restart the new epoch makes a
 * resubscribing client take fresh snapshots instead of patches it cannot
 * apply.
 */

const TOPIC = 'quote.kospi.005930';
const LISTS = 'v2.multiquote.lists';

describe('resync and checksums', () => {
  let tb: TestBridge;
  let c: TestClient;
  beforeAll(async () => {
    tb = await startBridge();
    c = await connect(tb);
    await c.request({ op: 'subscribe', channel: 'quote', market: 'kospi', codes: ['005930', '000660'] });
    await until(() => (c.seqs.get(TOPIC) ?? 0) >= 2, 8000, 'a patch');
  });
  afterAll(async () => {
    c?.close();
    await tb?.bridge.stop();
  });

  it('a resync answers with a fresh snapshot equal to the upstream truth', async () => {
    await freeze(tb);
    try {
      const row = (await truth(tb, LISTS, { marketcode: 'kospi' })).get('005930')!;
      const n = c.ofType('snapshot').length;
      c.send({ op: 'resync', topic: TOPIC });
      await until(() => c.ofType('snapshot').length === n + 1, 5000, 'resync snapshot');
      const snap = c.ofType('snapshot').at(-1)!;
      const e = tb.bridge.store.entry('quote', 'kospi', '005930')!;
      expect(snap).toMatchObject({ topic: TOPIC, seq: e.seq, ts: e.seenTs, crc: rowChecksum(row) });
      expect(snap.data).toEqual(row);
      expect(c.rows.get(TOPIC)).toEqual(row);
      expect(c.problems).toEqual([]);
    } finally {
      tb.bridge.sim!.resume();
    }
  }, 20_000);

  it('a corrupted local row fails the next patch checksum; a resync repairs it', async () => {
    const row = c.rows.get(TOPIC)!;
    // A local bug: the row drifts from the server's (a field left over) without any gap in seqs.
    c.rows.set(TOPIC, { ...row, leftover: 1 });
    const seq = c.seqs.get(TOPIC)!;
    await until(() => c.problems.length > 0, 10_000, 'the mismatch to show');
    expect(c.problems[0]).toBe(`${TOPIC}: crc mismatch at ${seq + 1}`);
    c.send({ op: 'resync', topic: TOPIC });
    const n = c.messages.length;
    await until(() => c.messages.slice(n).some((m) => m.type === 'snapshot' && m.topic === TOPIC), 5000, 'resync snapshot');
    // Until the snapshot, patches kept failing the check (nothing else went wrong); after it, none does.
    const repairedAt = c.problems.length;
    expect(c.problems.every((p) => p.startsWith(`${TOPIC}: crc mismatch`))).toBe(true);
    const after = c.seqs.get(TOPIC)!;
    await until(() => (c.seqs.get(TOPIC) ?? 0) >= after + 2, 10_000, 'patches after the repair');
    expect(c.problems.slice(repairedAt)).toEqual([]);
    await freeze(tb);
    try {
      expect(c.rows.get(TOPIC)).toEqual((await truth(tb, LISTS, { marketcode: 'kospi' })).get('005930'));
    } finally {
      tb.bridge.sim!.resume();
    }
  }, 30_000);
});

describe('restart', () => {
  it('drains with 1001, comes back with a new epoch, and a resubscribe with the old epoch gets snapshots', async () => {
    const first = await startBridge();
    const a = await connect(first);
    await a.request({ op: 'subscribe', channel: 'quote', market: 'kospi', codes: ['005930', '000660'] });
    await until(() => (a.seqs.get(TOPIC) ?? 0) >= 3, 8000, 'patches');
    const oldEpoch = a.epoch;
    const since = Object.fromEntries(a.seqs);
    const port = new URL(first.url).port;
    await first.bridge.stop();
    expect(a.closed).toEqual({ code: 1001, reason: 'server shutting down' });

    // The same address, a new process.
    const second = await startBridge({ PORT: Number(port) });
    try {
      const b = new TestClient(second.wsUrl);
      await b.ready();
      expect(b.epoch).not.toBe(oldEpoch);
      // Carry the old local state over, as an SDK does.
      for (const [t, row] of a.rows) b.rows.set(t, row);
      for (const [t, s] of a.seqs) b.seqs.set(t, s);
      await b.request({ op: 'subscribe', channel: 'quote', market: 'kospi', codes: ['005930', '000660'], epoch: oldEpoch, since });
      await until(() => b.ofType('snapshot').length === 2, 8000, 'snapshots');
      // Snapshots of both topics before any patch, and every patch after applies.
      const firstPatch = b.messages.findIndex((m) => m.type === 'patch');
      const lastSnap = b.messages.findLastIndex((m) => m.type === 'snapshot');
      expect(firstPatch === -1 || firstPatch > lastSnap).toBe(true);
      await until(() => b.ofType('patch').length >= 2, 8000, 'patches');
      expect(b.problems).toEqual([]);
      b.close();
    } finally {
      await second.bridge.stop();
    }
  }, 30_000);
});
