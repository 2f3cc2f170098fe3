import { describe, expect, it } from 'vitest';
import { Leadership } from '../../src/cluster/leadership.js';
import { ClusterMetrics } from '../../src/cluster/metrics.js';
import { Mirror } from '../../src/cluster/mirror.js';
import { ACQUIRE, RENEW, SCRIPTS, WRITE_BATCH, loadScripts, type Commander } from '../../src/cluster/scripts.js';
import { LeaseState } from '../../src/cluster/lease.js';
import { LeaderWriter } from '../../src/cluster/writer.js';
import { silentLogger } from '../../src/log.js';
import { Metrics } from '../../src/metrics/metrics.js';
import { StateStore, type ChangeBatch } from '../../src/state/store.js';
import { sleep, until } from '../bridge/helpers.js';
import { redisSuite, type RedisClient } from './harness.js';

/**
 * Lease and fencing against a real Redis: the acquire/renew/write scripts
 * refuse an older generation, generations keep rising after Redis loses
 * its data, a cut-off holder stops polling before anyone else may start,
 * and followers drop batches of a fenced-off leader.
 */

/** A connection that can be cut (every command fails) to play a partitioned process. */
class Cuttable implements Commander {
  cut = false;
  /** Commands sent through it while not cut. */
  sent = 0;
  constructor(private readonly c: RedisClient) {}
  sendCommand<T = unknown>(args: readonly string[], options?: { timeout?: number }): Promise<T> {
    if (this.cut) return Promise.reject(new Error('cut off'));
    this.sent++;
    return this.c.sendCommand<T>(args, options);
  }
}

describe('lease and fencing on Redis', () => {
  const db = redisSuite();
  const k = db.keys;

  const acquire = (owner: string, floor = 0) => ACQUIRE.run<number[]>(db.redis, [k.lease, k.gen], [owner, '400', String(floor)]);
  const write = (owner: string, gen: number, code: string) =>
    WRITE_BATCH.run<string>(
      db.redis,
      [k.lease, k.gen, k.epoch, k.state('quote.kospi'), k.log('quote.kospi')],
      [owner, String(gen), 'E', '100', '1', k.events('quote.kospi'), '1', 'frame', '1', code, '1', `1 1 1 {"isuSrtCd":"${code}"}`, 'frame', k.roundChannel],
    );

  it('loads every script under the SHA1 it runs it by', async () => {
    await loadScripts(db.redis);
    expect(await db.redis.sendCommand(['SCRIPT', 'EXISTS', ...SCRIPTS.map((x) => x.sha)])).toEqual(SCRIPTS.map(() => 1));
  });

  it('grants the lease to one owner, refuses the old generation’s renewals and writes after a takeover', async () => {
    await db.redis.set(k.epoch, 'E');
    const a = await acquire('A');
    expect(a[0]).toBe(1);
    expect(a[2]).toBe(1);
    const genA = a[1]!;
    const b = await acquire('B');
    expect(b[0]).toBe(0);
    expect(b[1]).toBeGreaterThan(0);
    expect(await write('A', genA, 'X')).toBe('ok');
    expect(await write('B', genA, 'Y')).toBe('fenced');
    // A's lease (400 ms) runs out in Redis.
    await until(async () => (await db.redis.exists(k.lease)) === 0, 3000, 'the lease to expire');
    const b2 = await acquire('B');
    expect(b2[0]).toBe(1);
    expect(b2[2]).toBe(0);
    expect(b2[1]).toBe(genA + 1);
    // A, late, tries to renew and write under its old generation.
    expect(await RENEW.run(db.redis, [k.lease, k.gen], ['A', '400', String(genA)])).toBe(0);
    expect(await write('A', genA, 'Z')).toBe('fenced');
    expect(await db.redis.hGet(k.state('quote.kospi'), 'Z')).toBeNull();
    expect(await write('B', b2[1]!, 'Z')).toBe('ok');
    // A write under another epoch is refused too.
    await db.redis.set(k.epoch, 'F');
    expect(await write('B', b2[1]!, 'W')).toBe('epoch');
    await db.redis.set(k.epoch, 'E');
    expect(await db.redis.xLen(k.log('quote.kospi'))).toBe(2);
  });

  it('writes a round of two feeds in one script, which announces the round, then publishes each feed’s message in order; fenced, neither', async () => {
    await db.redis.set(k.epoch, 'E');
    await until(async () => (await db.redis.exists(k.lease)) === 0, 3000, 'the lease to expire');
    const [ok, gen] = await acquire('R');
    expect(ok).toBe(1);
    const feeds = ['quote.kospi', 'quote.kosdaq'];
    const round = (owner: string, code: string) =>
      WRITE_BATCH.run<string>(
        db.redis,
        [k.lease, k.gen, k.epoch, ...feeds.flatMap((f) => [k.state(f), k.log(f)])],
        [
          ...[owner, String(gen), 'E', '100', '2'],
          ...feeds.flatMap((f) => [k.events(f), '7', `frame-${f}`, '1', code, '9', `9 7 1 {"f":"${f}"}`, `frame-${f}`]),
          k.roundChannel,
        ],
      );
    const sub = db.redis.duplicate();
    sub.on('error', () => undefined);
    await sub.connect();
    const heard: { ch: string; msg: string }[] = [];
    await sub.subscribe([k.roundChannel, ...feeds.map((f) => k.events(f))], (msg, ch) => void heard.push({ ch, msg }));
    try {
      expect(await round('R', 'Q')).toBe('ok');
      await until(() => heard.length === 3, 2000, 'the announcement and both messages');
      expect(heard.map((h) => h.ch)).toEqual([k.roundChannel, ...feeds.map((f) => k.events(f))]);
      expect(heard[0]!.msg).toBe(`${gen} 2`);
      for (const [i, f] of feeds.entries()) {
        const [head, frame] = heard[i + 1]!.msg.split('\n');
        expect(head).toMatch(new RegExp(`^${gen} E 7 \\S+ \\S+$`));
        expect(frame).toBe(`frame-${f}`);
        expect(await db.redis.hGet(k.state(f), 'Q')).toBe(`9 7 1 {"f":"${f}"}`);
        expect(head!.split(' ')[4]).toBe(await db.redis.hGet(k.state(f), '~id'));
      }
      expect(await round('not-R', 'P')).toBe('fenced');
      for (const f of feeds) expect(await db.redis.hGet(k.state(f), 'P')).toBeNull();
      expect(heard).toHaveLength(3);
    } finally {
      await sub.close();
      await db.redis.del([k.lease]);
    }
  });

  it('keeps generations rising after Redis lost its data', async () => {
    const before = Number(await db.redis.get(k.gen));
    await db.redis.del([k.lease, k.gen]);
    const r = await acquire('C');
    expect(r[0]).toBe(1);
    expect(r[2]).toBe(1);
    expect(r[1]).toBeGreaterThan(before);
    // A floor from a generation seen in messages wins over a low counter.
    await db.redis.del([k.lease]);
    await db.redis.set(k.gen, '5');
    const f = await acquire('D', r[1]! + 10);
    expect(f[1]).toBe(r[1]! + 10);
    await db.redis.del([k.lease]);
  });

  it('a cut-off holder stops polling before another process may start; the other takes over within two periods', async () => {
    const leaseMs = 600;
    const conns = [new Cuttable(db.redis), new Cuttable(db.redis)];
    const nodes = conns.map(
      (c, i) => new Leadership({ redis: c, keys: k, node: `N${i}`, logger: silentLogger(), leaseMs, baseMs: 200, canContend: () => true }),
    );
    const polls: { node: number; t: number }[] = [];
    const timer = setInterval(() => nodes.forEach((n, i) => n.mayPoll() && polls.push({ node: i, t: Date.now() })), 5);
    try {
      nodes.forEach((n) => n.start());
      await until(() => nodes.some((n) => n.mayPoll()), 5000, 'a leader');
      const first = nodes.findIndex((n) => n.mayPoll());
      // The holder renews its lease twice (every third of the period) before the cut.
      const sent = conns[first]!.sent;
      await until(() => conns[first]!.sent >= sent + 2, 5000, 'two renewals');
      const cutAt = Date.now();
      conns[first]!.cut = true;
      await until(() => nodes[1 - first]!.mayPoll(), 5000, 'takeover');
      const took = Date.now() - cutAt;
      expect(took).toBeLessThan(2 * leaseMs);
      // A window, not a wait: half a lease in which the old holder must not poll again.
      await sleep(300);
      const lastOld = Math.max(...polls.filter((p) => p.node === first).map((p) => p.t));
      const firstNew = Math.min(...polls.filter((p) => p.node !== first && p.t > cutAt).map((p) => p.t));
      // Never both: the new holder’s first poll comes at least POLL_BASE_MS after the old one’s last.
      expect(firstNew - lastOld).toBeGreaterThanOrEqual(195);
      expect(nodes[first]!.mayPoll()).toBe(false);
      // Back in touch, the old holder learns it lost the lease.
      conns[first]!.cut = false;
      await until(() => !nodes[first]!.lease.leader, 3000, 'old holder deposed');
      expect(nodes[1 - first]!.mayPoll()).toBe(true);
    } finally {
      clearInterval(timer);
      await Promise.all(nodes.map((n) => n.stop()));
    }
  }, 20_000);

  it('followers drop batches of an older generation; the fenced writer stops and loses the lease', async () => {
    const store = new StateStore({ epoch: 'E' });
    const lease = new LeaseState({ leaseMs: 1000 });
    const metrics = new ClusterMetrics(new Metrics({ defaults: false }).registry);
    const got: ChangeBatch[] = [];
    const mirror = new Mirror({
      redis: db.redis,
      keys: k,
      store,
      lease,
      logger: silentLogger(),
      metrics,
      emit: (b) => got.push(b),
      loadCount: 100,
      timeoutMs: 1000,
    });
    lease.seen(50);
    const frame = '{"type":"snapshot","topic":"quote.kospi.Q","seq":1,"ts":1,"data":{"isuSrtCd":"Q"},"crc":1}';
    mirror.onMessage({ channel: 'quote', market: 'kospi', feed: 'quote.kospi' }, `49 E 1 0-0 1-0\n${frame}`);
    await mirror.idle();
    expect(got).toEqual([]);
    expect(store.size).toBe(0);

    // A writer whose generation is no longer current is refused and reports it.
    const wlease = new LeaseState({ leaseMs: 1000 });
    wlease.acquired(3, Date.now(), Date.now(), false);
    let fenced = '';
    const writer = new LeaderWriter({
      redis: db.redis,
      keys: k,
      node: 'old',
      lease: wlease,
      metrics,
      logger: silentLogger(),
      streamMaxLen: 100,
      canWrite: () => true,
      epoch: () => 'E',
      onFenced: (r) => (fenced = r),
      onDiverged: () => undefined,
    });
    const leader = new StateStore({ epoch: 'E' });
    writer.writeRound([leader.apply('quote', 'kospi', [{ isuSrtCd: 'R', p: 1 }], 1)]);
    await until(() => fenced !== '', 2000, 'fenced');
    expect(await db.redis.hGet(k.state('quote.kospi'), 'R')).toBeNull();
  });
});
