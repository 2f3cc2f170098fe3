import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { cpuMicros, fileLimit, probe, serve } from '../lib/child.js';
import { listingTopics } from '../lib/listing.js';
import { createPollingPeer, type PollingPeer, type PollingPeerName, type UpstreamTarget } from './polling.js';

/**
 * The end-to-end scenario's server process: one polling peer (the whole
 * bridge, or the socket.io server) pointed at the upstream stand-in,
 * driven by the orchestrator over IPC. CPU time is this process's own:
 * polling, parsing, diffing and fan-out together. On request it CPU-
 * profiles the measured windows only (`profileStart` … `profileStop`), not
 * the start-up and connection phases.
 */

/** Arguments of `start`. */
export interface E2eStartArgs {
  readonly peer: PollingPeerName;
  readonly upstream: UpstreamTarget;
  readonly symbols: number;
  readonly seed: number;
}

/** Reply of `mark`: cumulative counters at this instant. */
export interface E2eServerMark {
  readonly cpuUs: number;
  readonly wallMs: number;
  readonly rss: number;
  readonly heapUsed: number;
  readonly peer: Record<string, number>;
}

let peer: PollingPeer | undefined;
let topics: string[] = [];
let profiler: Session | undefined;

serve(
  {
    async start(a: E2eStartArgs) {
      topics = listingTopics(a.symbols, a.seed);
      peer = await createPollingPeer(a.peer, a.upstream);
      const port = await peer.start();
      return { port, pid: process.pid, fileLimit: fileLimit() };
    },
    async mark(): Promise<E2eServerMark> {
      const cpuUs = cpuMicros();
      const wallMs = performance.now();
      const m = process.memoryUsage();
      const stats = probe(() => peer?.stats());
      return { cpuUs, wallMs, rss: m.rss, heapUsed: m.heapUsed, peer: (await stats) ?? {} };
    },
    seqs() {
      return { seqs: peer?.seqs(topics) ?? [] };
    },
    stats() {
      return peer?.stats() ?? {};
    },
    async profileStart() {
      profiler = new Session();
      profiler.connect();
      await profiler.post('Profiler.enable');
      await profiler.post('Profiler.start');
      return true;
    },
    async profileStop(a: { dir: string }) {
      if (!profiler) throw new Error('not profiling');
      const { profile } = await profiler.post('Profiler.stop');
      // The first sample's delta spans the profiler's own start-up (credited to the inspector's `dispatch`), not the process's work.
      if (profile.timeDeltas?.length) profile.timeDeltas[0] = 0;
      profiler.disconnect();
      profiler = undefined;
      mkdirSync(a.dir, { recursive: true });
      writeFileSync(join(a.dir, `windows-${process.pid}.cpuprofile`), JSON.stringify(profile));
      return true;
    },
  },
  async () => {
    await peer?.close();
  },
);
