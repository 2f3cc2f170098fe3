import { describe, expect, it } from 'vitest';
import type { Backplane } from '../../src/cluster/backplane.js';
import type { BudgetShare } from '../../src/cluster/budget.js';
import type { ClusterBus } from '../../src/cluster/bus.js';
import type { ClusterDemand } from '../../src/cluster/demand.js';
import { clusterKeys } from '../../src/cluster/keys.js';
import type { Leadership } from '../../src/cluster/leadership.js';
import { LeaseState } from '../../src/cluster/lease.js';
import type { Mirror } from '../../src/cluster/mirror.js';
import { LeaderTerm } from '../../src/cluster/term.js';
import { createLogger } from '../../src/log.js';
import { StateStore } from '../../src/state/store.js';
import { until } from '../bridge/helpers.js';

/** The leader's term on stand-ins for Redis: when the poller may start, and how a term recovers from a failed load. */

function setup(opts: { demandRead: () => boolean; epochReady?: () => Promise<boolean> }) {
  const lease = new LeaseState({ leaseMs: 3000, baseMs: 1000 });
  const lines: string[] = [];
  const logger = createLogger({ level: 'debug', destination: { write: (l: string) => void lines.push(l) } });
  let woken = 0;
  let demandReads = 0;
  const term = new LeaderTerm({
    backplane: { up: true, sendCommand: async () => [] } as unknown as Backplane,
    keys: clusterKeys('t:'),
    leadership: { lease } as unknown as Leadership,
    mirror: { ensureEpoch: opts.epochReady ?? (async () => true) } as unknown as Mirror,
    store: new StateStore({ epoch: 'e1' }),
    pollStore: new StateStore(),
    budgetShare: { pull: async () => undefined } as unknown as BudgetShare,
    union: {
      refresh: async () => {
        demandReads++;
        return opts.demandRead();
      },
    } as unknown as ClusterDemand,
    bus: { publishStatus: () => undefined } as unknown as ClusterBus,
    poller: () => ({ wakeAll: () => void woken++, statuses: () => [] }),
    logger,
    now: () => Date.now(),
    timeoutMs: 1000,
  });
  /** Wins the lease under `gen`, allowed to poll at once. */
  const acquire = (gen: number) => lease.acquired(gen, Date.now(), Date.now() - 5000, false);
  return { term, lease, lines, acquire, woken: () => woken, demandReads: () => demandReads };
}

describe('leader term', () => {
  it('does not let the poller run before the cluster’s demand is read, and loads again when asked', async () => {
    let readable = false;
    const t = setup({ demandRead: () => readable });
    t.acquire(1);
    t.term.begin(1);
    await until(() => t.lines.some((l) => l.includes('leader state not loaded')), 2000, 'the failed load');
    expect(t.term.prepared).toBe(false);
    expect(t.woken()).toBe(0);
    expect(t.lines.join('\n')).toContain('cluster demand not read');
    readable = true;
    t.term.ensure();
    await until(() => t.term.prepared, 2000, 'the second load');
    expect(t.term.epoch).toBe('e1');
    expect(t.woken()).toBe(1);
  });

  it('starts a newer term’s load as soon as an older one ends, without waiting for a periodic check', async () => {
    let release: (ok: boolean) => void = () => undefined;
    let first = true;
    const t = setup({
      demandRead: () => true,
      // The first load hangs on Redis until released; later ones answer at once.
      epochReady: () => (first ? ((first = false), new Promise<boolean>((r) => (release = r))) : Promise.resolve(true)),
    });
    t.acquire(1);
    t.term.begin(1);
    // The lease moved on (lost and won again) while the first load waits.
    t.lease.lost();
    t.acquire(2);
    t.term.begin(2);
    expect(t.term.prepared).toBe(false);
    release(true);
    await until(() => t.term.prepared, 2000, 'the newer term loaded');
    expect(t.woken()).toBe(1);
    // Both loads read the demand; only the newer one let the poller run.
    expect(t.demandReads()).toBe(2);
  });
});
