import { cpuMicros, fileLimit, serve } from '../lib/child.js';
import type { SubsLayout } from '../lib/subs.js';
import { LoadPool, type ClientRange, type Target } from './pool.js';
import { probeSnapshot } from './snapshot.js';

/**
 * The load generator process: a pool of clients against one peer, driven
 * by the orchestrator over IPC. Reports its own CPU time with every mark
 * so a saturated load process is never mistaken for a slow server.
 */

let pool: LoadPool | undefined;

serve(
  {
    async connect(a: { target: Target; layout: SubsLayout; concurrency: number; range?: ClientRange }) {
      pool?.close();
      pool = new LoadPool(a.target);
      const r = await pool.connect(a.layout, a.concurrency, a.range);
      return { ...r, fileLimit: fileLimit(), errors: pool.errors, lastError: pool.lastError };
    },
    mark() {
      if (!pool) throw new Error('not connected');
      return { cpuUs: cpuMicros(), wallMs: performance.now(), rss: process.memoryUsage().rss, ...pool.mark() };
    },
    finish(a: { seqs: number[] }) {
      if (!pool) throw new Error('not connected');
      return {
        tailLost: pool.tailLoss(a.seqs),
        totals: { ...pool.totals },
        errors: pool.errors,
        lastError: pool.lastError,
        disconnects: pool.disconnects,
        lastDisconnect: pool.lastDisconnect,
      };
    },
    async snapshot(a: { port: number; expected: number; repeats: number; pauseMs: number }) {
      const out = [];
      for (let i = 0; i < a.repeats; i++) {
        out.push(await probeSnapshot(a.port, a.expected));
        await new Promise((r) => setTimeout(r, a.pauseMs));
      }
      return out;
    },
    close() {
      pool?.close();
      pool = undefined;
      return true;
    },
  },
  () => pool?.close(),
);
