import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestClient, connect, freeze, startBridge, truth, until, type TestBridge } from './helpers.js';

/** Resume after a reconnect: the missed patches from the replay ring, or a snapshot when they are gone. */
describe('bridge resume', () => {
  let tb: TestBridge;
  const topic = 'quote.kospi.005930';
  let keeper: TestClient;
  beforeAll(async () => {
    tb = await startBridge({ RING_SIZE: 4 });
    // Another subscriber keeps the feed polled while the resuming client is away.
    keeper = await connect(tb);
    await keeper.request({ op: 'subscribe', channel: 'quote', market: 'kospi', codes: ['005930'] });
  });
  afterAll(async () => {
    keeper?.close();
    await tb?.bridge.stop();
  });

  async function session() {
    const c = await connect(tb);
    await c.request({ op: 'subscribe', channel: 'quote', market: 'kospi', codes: ['005930'] });
    await until(() => (c.seqs.get(topic) ?? 0) >= 2, 8000, 'a patch');
    return c;
  }

  async function resume(from: TestClient, epoch = from.epoch) {
    const c = new TestClient(tb.wsUrl);
    await c.ready();
    // Carry the old local state over, as an SDK does.
    c.rows.set(topic, from.rows.get(topic)!);
    c.seqs.set(topic, from.seqs.get(topic)!);
    await c.request({ op: 'subscribe', channel: 'quote', market: 'kospi', codes: ['005930'], epoch, since: { [topic]: from.seqs.get(topic) } });
    return c;
  }

  it('within the ring: exactly the missed patches, no snapshot, no loss', async () => {
    const a = await session();
    a.close();
    // The feed moves on while the client is away, by less than the ring holds.
    await until(() => (keeper.seqs.get(topic) ?? 0) > a.seqs.get(topic)!, 8000, 'a patch missed');
    const b = await resume(a);
    await until(() => b.ofType('patch').length > 0, 5000, 'resumed patches');
    expect(b.ofType('snapshot')).toEqual([]);
    expect(b.ofType('patch')[0]!.seq).toBe(a.seqs.get(topic)! + 1);
    await freeze(tb);
    try {
      const t = await truth(tb, 'v2.multiquote.lists', { marketcode: 'kospi' });
      expect(b.rows.get(topic)).toEqual(t.get('005930'));
      expect(b.problems).toEqual([]);
    } finally {
      tb.bridge.sim!.resume();
      b.close();
    }
  }, 20_000);

  it('beyond the ring: a fresh snapshot', async () => {
    const a = await session();
    a.close();
    // More patches than the ring holds (RING_SIZE 4) go by while the client is away.
    await until(() => (keeper.seqs.get(topic) ?? 0) > a.seqs.get(topic)! + 5, 15_000, 'the ring to move past the client');
    const b = await resume(a);
    await until(() => b.ofType('snapshot').length > 0, 5000, 'snapshot');
    expect(b.ofType('snapshot')[0]!.seq).toBeGreaterThan(a.seqs.get(topic)! + 4);
    expect(b.problems).toEqual([]);
    b.close();
  }, 20_000);

  it('another epoch: a fresh snapshot', async () => {
    const a = await session();
    a.close();
    const b = await resume(a, 'some-other-epoch');
    await until(() => b.ofType('snapshot').length > 0, 5000, 'snapshot');
    expect(b.problems).toEqual([]);
    b.close();
  }, 20_000);
});
