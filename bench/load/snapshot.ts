import WebSocket from 'ws';
import { FEED } from '../lib/market.js';

/**
 * The snapshot probe: a fresh client asks the bridge for a whole market
 * (`codes: ["*"]`) and times how long every snapshot takes to arrive.
 */

/** One probe's timings, ms from sending the subscribe request. */
export interface SnapshotProbe {
  /** Until the `subscribed` reply. */
  readonly subscribedMs: number;
  /** Until the last of `expected` snapshots. */
  readonly ms: number;
  readonly snapshots: number;
  readonly frames: number;
  readonly bytes: number;
}

/**
 * Connects to the bridge at `port`, waits for `welcome`, subscribes to the
 * wildcard of the benchmark feed and resolves once `expected` distinct
 * topics have had a snapshot (rejects after `timeoutMs`).
 */
export function probeSnapshot(port: number, expected: number, timeoutMs = 30_000): Promise<SnapshotProbe> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`, { perMessageDeflate: false, skipUTF8Validation: true });
  const seen = new Set<string>();
  let t0 = 0;
  let subscribedMs = NaN;
  let frames = 0;
  let bytes = 0;
  return new Promise<SnapshotProbe>((resolve, reject) => {
    const timer = setTimeout(() => {
      ws.terminate();
      reject(new Error(`snapshot probe: ${seen.size} of ${expected} snapshots after ${timeoutMs} ms`));
    }, timeoutMs);
    ws.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    ws.on('message', (data: Buffer) => {
      const v = JSON.parse(data.toString()) as { type?: string; topic?: string } | { type?: string; topic?: string }[];
      const list = Array.isArray(v) ? v : [v];
      if (t0 === 0) {
        if (list.some((m) => m.type === 'welcome')) {
          t0 = performance.now();
          ws.send(JSON.stringify({ op: 'subscribe', id: 1, channel: FEED.channel, market: FEED.market, codes: ['*'] }));
        }
        return;
      }
      frames++;
      bytes += data.length;
      for (const m of list) {
        if (m.type === 'subscribed') subscribedMs = performance.now() - t0;
        else if (m.type === 'snapshot' && m.topic !== undefined) seen.add(m.topic);
      }
      if (seen.size >= expected) {
        const ms = performance.now() - t0;
        clearTimeout(timer);
        ws.terminate();
        resolve({ subscribedMs, ms, snapshots: seen.size, frames, bytes });
      }
    });
  });
}
