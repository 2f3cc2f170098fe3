import { Child } from '../lib/child.js';
import type { PeerName } from '../server/peer.js';

/**
 * The connections scenario: many idle subscribed connections to one peer.
 * Memory per connection is the server's growth over a baseline taken with
 * the server idle and no clients (both after a full GC); accept time is
 * how long the load process took to get every connection open.
 */

/** Parameters of the connections scenario. */
export interface ConnectionsConfig {
  readonly count: number;
  readonly topicsPerClient: number;
  readonly symbols: number;
  readonly seed: number;
  readonly concurrency: number;
}

/** Figures of one peer. */
export interface ConnectionsResult {
  readonly count: number;
  readonly topicsPerClient: number;
  readonly rssKbPerConn: number;
  readonly heapKbPerConn: number;
  /** Off-heap memory (`external`, array buffers included) per connection, KB. */
  readonly externalKbPerConn: number;
  readonly acceptMs: number;
  readonly subscribeMs: number;
  readonly failed: number;
  /** Connections the server reported open after the load connected. */
  readonly serverConnections: number;
  readonly baseline: { rssMb: number; heapMb: number };
  readonly loaded: { rssMb: number; heapMb: number };
  /** Open-file limits the two processes got. */
  readonly fileLimit: { server?: number; load?: number };
}

interface Mem {
  rss: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Runs the connections scenario against one peer. */
export async function runConnections(peer: PeerName, cfg: ConnectionsConfig, log: (s: string) => void): Promise<ConnectionsResult> {
  const server = new Child({ name: `server(${peer})`, script: 'bench/server/main.ts', core: 0 });
  const load = new Child({ name: `load(${peer})`, script: 'bench/load/main.ts', core: 1 });
  try {
    const started = await server.request<{ port: number; fileLimit?: number }>('start', {
      peer,
      symbols: cfg.symbols,
      seed: cfg.seed,
      changeRatio: 0,
    });
    await sleep(500);
    await server.request('memory', { gc: true });
    await sleep(200);
    const base = await server.request<Mem>('memory', { gc: true });
    const layout = { seed: cfg.seed, clients: cfg.count, topicsPerClient: cfg.topicsPerClient, symbols: cfg.symbols };
    const target = { peer, port: started.port, symbols: cfg.symbols, seed: cfg.seed };
    const conn = await load.request<{ openMs: number; subscribeMs: number; failed: number; fileLimit?: number }>(
      'connect',
      { target, layout, concurrency: cfg.concurrency },
      600_000,
    );
    if (conn.failed > 0) log(`  ${peer}: ${conn.failed} of ${cfg.count} connections failed`);
    await sleep(1_000);
    await server.request('memory', { gc: true });
    await sleep(200);
    const after = await server.request<Mem>('memory', { gc: true });
    const stats = await server.request<Record<string, number>>('stats');
    const n = stats.connections ?? cfg.count - conn.failed;
    const perConn = (bytes: number): number => bytes / Math.max(1, n) / 1024;
    return {
      count: cfg.count,
      topicsPerClient: cfg.topicsPerClient,
      rssKbPerConn: perConn(after.rss - base.rss),
      heapKbPerConn: perConn(after.heapUsed - base.heapUsed),
      externalKbPerConn: perConn(after.external - base.external),
      acceptMs: conn.openMs,
      subscribeMs: conn.subscribeMs,
      failed: conn.failed,
      serverConnections: n,
      baseline: { rssMb: base.rss / 2 ** 20, heapMb: base.heapUsed / 2 ** 20 },
      loaded: { rssMb: after.rss / 2 ** 20, heapMb: after.heapUsed / 2 ** 20 },
      fileLimit: { server: started.fileLimit, load: conn.fileLimit },
    };
  } finally {
    await Promise.all([load.close(20_000), server.close(20_000)]);
  }
}
