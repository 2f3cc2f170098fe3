import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demandMember } from '../../src/cluster/codec.js';
import { ClusterDemand } from '../../src/cluster/demand.js';
import { REGISTER_DEMAND } from '../../src/cluster/scripts.js';
import { silentLogger } from '../../src/log.js';
import { Demand } from '../../src/poller/demand.js';
import { until } from '../bridge/helpers.js';
import { redisSuite, type RedisClient } from './harness.js';

/**
 * Shared demand on a real Redis: each process sees the union of every
 * process's subscriptions, promptly after a change anywhere, and a dead
 * process's registrations lapse by themselves.
 */

describe('cluster demand', () => {
  const db = redisSuite();
  const keys = db.keys;
  let sub: RedisClient;
  const views: ClusterDemand[] = [];

  function node(id: string): { local: Demand; view: ClusterDemand; changes: string[] } {
    const local = new Demand();
    const view = new ClusterDemand({ redis: db.redis, keys, node: id, local, logger: silentLogger(), refreshMs: 200, ttlMs: 600, isUp: () => true });
    const changes: string[] = [];
    view.onChange((c, m) => changes.push(`${c}.${m}`));
    view.start();
    views.push(view);
    return { local, view, changes };
  }

  beforeAll(async () => {
    sub = db.redis.duplicate();
    sub.on('error', () => undefined);
    await sub.connect();
    // What the cluster node does with demand announcements.
    await sub.subscribe(keys.demandChannel, () => void Promise.all(views.map((v) => v.refresh())));
  });
  afterAll(async () => {
    await Promise.all(views.map((v) => v.stop()));
    await sub?.close();
  });

  it('follows the union of every process’s subscriptions, the local ones at once', async () => {
    const a = node('A');
    const b = node('B');
    a.local.add('quote', 'kospi', '005930');
    // Own demand needs no round trip.
    await Promise.resolve();
    expect([...a.view.codes('quote', 'kospi')]).toEqual(['005930']);
    b.local.add('quote', 'kospi', '000660');
    b.local.add('book', 'kosdaq', '*');
    await until(() => a.view.codes('quote', 'kospi').size === 2 && a.view.wildcard('book', 'kosdaq'), 2000, 'B’s demand on A');
    expect(a.view.active('book', 'kosdaq')).toBe(true);
    expect(a.changes).toContain('book.kosdaq');

    // The last subscriber anywhere leaves: the union shrinks promptly, with a change event.
    const mark = a.changes.length;
    const t0 = Date.now();
    b.local.remove('book', 'kosdaq', '*');
    await until(() => !a.view.active('book', 'kosdaq'), 2000, 'wildcard gone on A');
    expect(Date.now() - t0).toBeLessThan(150);
    expect(a.changes.slice(mark)).toContain('book.kosdaq');
    // A code still wanted elsewhere stays.
    a.local.add('quote', 'kospi', '000660');
    b.local.remove('quote', 'kospi', '000660');
    // A window, not a wait: a removal reaches A within 150 ms (above).
    await new Promise((r) => setTimeout(r, 300));
    expect(a.view.codes('quote', 'kospi').has('000660')).toBe(true);
  });

  it('drops a dead process’s demand once its registration expires', async () => {
    const a = views[0]!;
    await REGISTER_DEMAND.run(db.redis, [keys.demand('price.kospi')], ['400', demandMember('005380', 'dead')]);
    await a.refresh();
    expect(a.active('price', 'kospi')).toBe(true);
    // No refresh from "dead": gone after its ttl, by the periodic re-read.
    await until(() => !a.active('price', 'kospi'), 3000, 'expiry');
  });

  it('withdraws a stopping process’s demand', async () => {
    const c = node('C');
    c.local.add('ohlc', 'kospi', '035420');
    const a = views[0]!;
    await until(() => a.active('ohlc', 'kospi'), 2000, 'C’s demand on A');
    await c.view.stop();
    views.splice(views.indexOf(c.view), 1);
    await until(() => !a.active('ohlc', 'kospi'), 1000, 'withdrawn');
  });
});
