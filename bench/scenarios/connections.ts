import { GATEWAY_DEFAULTS } from '../../src/gateway/options.js';
import { Child } from '../lib/child.js';
import { addressCount } from '../lib/addresses.js';
import { median } from '../lib/stats.js';
import type { SnapshotProbe } from '../load/snapshot.js';
import type { PeerName } from '../server/peer.js';

/**
 * The connections scenario: many idle subscribed connections to one peer.
 * Memory per connection is the server's growth over a baseline taken with
 * the server idle and no clients (both after a full GC); accept time is
 * how long the load took to get every connection open. The clients come
 * from many loopback addresses, at most the bridge's default per-address
 * limit from each, and from several load processes when one would come
 * near its open-file limit. With every connection open, fresh clients ask
 * the bridge for a whole market's snapshots.
 */

/** Parameters of the connections scenario. */
export interface ConnectionsConfig {
  readonly count: number;
  readonly topicsPerClient: number;
  readonly symbols: number;
  readonly seed: number;
  readonly concurrency: number;
  /** Clients per loopback source address (the bridge's MAX_CONNECTIONS_PER_IP default is 100). */
  readonly perAddress: number;
  /** Most clients one load process runs (each holds one descriptor per client). */
  readonly perLoadProcess: number;
  /** Whole-market snapshot probes run against the bridge with every connection open (0 for none). */
  readonly snapshotProbes: number;
}

/** The snapshot probes' timings with every connection open, ms. */
export interface LoadedSnapshot {
  readonly symbols: number;
  /** Median of the probes, until the last snapshot arrived. */
  readonly ms: number;
  readonly maxMs: number;
  readonly subscribedMs: number;
  readonly probes: number;
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
  /** Loopback source addresses the clients came from, and the load processes that ran them. */
  readonly sourceAddresses: number;
  readonly loadProcesses: number;
  /** Connections the server reported open after the load connected. */
  readonly serverConnections: number;
  readonly baseline: { rssMb: number; heapMb: number };
  readonly loaded: { rssMb: number; heapMb: number };
  /** Open-file limits the processes got (the lowest of the load processes'). */
  readonly fileLimit: { server?: number; load?: number };
  /** A whole market to a fresh client while every connection is open (the bridge only). */
  readonly snapshot?: LoadedSnapshot;
}

interface Connected {
  openMs: number;
  subscribeMs: number;
  failed: number;
  fileLimit?: number;
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
  const processes = Math.ceil(cfg.count / cfg.perLoadProcess);
  const loads = Array.from({ length: processes }, (_, i) => new Child({ name: `load(${peer} ${i + 1}/${processes})`, script: 'bench/load/main.ts', core: 1 }));
  try {
    const started = await server.request<{ port: number; fileLimit?: number }>('start', {
      peer,
      symbols: cfg.symbols,
      seed: cfg.seed,
      changeRatio: 0,
      // The gateway's own per-address limit; its total cap leaves room for the probes.
      limits: { maxConnectionsPerIp: GATEWAY_DEFAULTS.maxConnectionsPerIp, maxConnections: cfg.count + cfg.snapshotProbes + 1 },
    });
    await sleep(500);
    await server.request('memory', { gc: true });
    await sleep(200);
    const base = await server.request<Mem>('memory', { gc: true });
    const layout = { seed: cfg.seed, clients: cfg.count, topicsPerClient: cfg.topicsPerClient, symbols: cfg.symbols };
    const target = { peer, port: started.port, symbols: cfg.symbols, seed: cfg.seed, perAddress: cfg.perAddress };
    const share = Math.ceil(cfg.count / processes);
    const parts = await Promise.all(
      loads.map((load, i) =>
        load.request<Connected>(
          'connect',
          { target, layout, concurrency: Math.ceil(cfg.concurrency / processes), range: { first: i * share, count: Math.min(share, cfg.count - i * share) } },
          600_000,
        ),
      ),
    );
    const failed = parts.reduce((a, p) => a + p.failed, 0);
    if (failed > 0) log(`  ${peer}: ${failed} of ${cfg.count} connections failed`);
    await sleep(1_000);
    await server.request('memory', { gc: true });
    await sleep(200);
    const after = await server.request<Mem>('memory', { gc: true });
    const stats = await server.request<Record<string, number>>('stats');
    const snapshot = peer === 'bridge' && cfg.snapshotProbes > 0 ? await probe(loads[0]!, started.port, cfg) : undefined;
    const n = stats.connections ?? cfg.count - failed;
    const perConn = (bytes: number): number => bytes / Math.max(1, n) / 1024;
    const limits = parts.map((p) => p.fileLimit).filter((l): l is number => l !== undefined);
    return {
      count: cfg.count,
      topicsPerClient: cfg.topicsPerClient,
      rssKbPerConn: perConn(after.rss - base.rss),
      heapKbPerConn: perConn(after.heapUsed - base.heapUsed),
      externalKbPerConn: perConn(after.external - base.external),
      acceptMs: Math.max(...parts.map((p) => p.openMs)),
      subscribeMs: Math.max(...parts.map((p) => p.subscribeMs)),
      failed,
      sourceAddresses: addressCount(cfg.count, cfg.perAddress),
      loadProcesses: processes,
      serverConnections: n,
      baseline: { rssMb: base.rss / 2 ** 20, heapMb: base.heapUsed / 2 ** 20 },
      loaded: { rssMb: after.rss / 2 ** 20, heapMb: after.heapUsed / 2 ** 20 },
      fileLimit: { server: started.fileLimit, ...(limits.length ? { load: Math.min(...limits) } : {}) },
      ...(snapshot ? { snapshot } : {}),
    };
  } finally {
    await Promise.all([...loads.map((l) => l.close(20_000)), server.close(20_000)]);
  }
}

/** Fresh clients (from 127.0.0.1) ask for the whole market, one after another, 300 ms apart. */
async function probe(load: Child, port: number, cfg: ConnectionsConfig): Promise<LoadedSnapshot> {
  const probes = await load.request<SnapshotProbe[]>('snapshot', { port, expected: cfg.symbols, repeats: cfg.snapshotProbes, pauseMs: 300 }, 120_000);
  return {
    symbols: cfg.symbols,
    ms: median(probes.map((p) => p.ms)),
    maxMs: Math.max(...probes.map((p) => p.ms)),
    subscribedMs: median(probes.map((p) => p.subscribedMs)),
    probes: probes.length,
  };
}
