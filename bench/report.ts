import { num, table } from './lib/table.js';
import type { PeerResult } from './scenarios/fanout.js';
import type { ConnectionsResult } from './scenarios/connections.js';
import type { CycleResult } from './scenarios/cycle.js';
import type { E2ePeerResult, E2eResult } from './scenarios/e2e.js';
import type { EconomyResult } from './scenarios/economy.js';
import type { RecorderResult } from './scenarios/recorder.js';
import type { BenchConfig } from './config.js';
import type { CheckOutcome } from './check.js';

/**
 * The console report of a run: one table per scenario, from the same
 * object that is written to the results file.
 */

/** A scenario that failed or was not run, as recorded in the results. */
export interface Skipped {
  readonly skipped?: string;
  readonly error?: string;
}

/** The results file's content. */
export interface Results {
  machine: Record<string, unknown>;
  mode: 'full' | 'quick';
  startedAt: string;
  durationS?: number;
  /** Wall time per scenario, s. */
  timingsS?: Record<string, number>;
  fanout?: Record<string, unknown> | Skipped;
  connections?: Record<string, unknown> | Skipped;
  cycle?: CycleResult | Skipped;
  snapshot?: Record<string, unknown> | Skipped;
  economy?: EconomyResult | Skipped;
  recorder?: RecorderResult | Skipped;
  e2e?: E2eResult | Skipped;
  /** Each target's outcome (bench/check.ts). */
  targets?: readonly CheckOutcome[];
}

function failed(v: unknown): string | undefined {
  if (v === undefined) return 'not run';
  const s = v as Skipped;
  return s.error !== undefined ? `error: ${s.error.split('\n')[0]}` : s.skipped !== undefined ? `skipped: ${s.skipped}` : undefined;
}

function fanoutTable(cfg: BenchConfig, f: Record<string, unknown>): string {
  const c = cfg.fanout;
  const rows = cfg.peers.map((p) => {
    const r = f[p] as PeerResult | Skipped | undefined;
    const why = failed(r);
    if (why) return [p, why];
    const x = r as PeerResult;
    return [
      p,
      num(x.updatesPerSec),
      num(x.cpuUsPerUpdate, 2),
      num(x.p50Ms, 1),
      num(x.p99Ms, 1),
      num(x.lost),
      num(x.outOfOrder),
      num(x.disconnects),
      num(x.serverCpu, 2),
      num(x.loadCpu, 2) + (x.loadSaturated ? '!' : ''),
      num(x.otherCpu, 2),
    ];
  });
  const ratios = f.ratios as Record<string, number> | undefined;
  const mismatched = cfg.peers.filter((p) => ((f[p] as PeerResult | undefined)?.scanCheck?.mismatches ?? 0) > 0);
  return [
    `fanout: ${num(c.clients)} clients x ${c.topicsPerClient} topics, ${num(c.symbols)} symbols, ${c.changeRatio * 100}% change every ${c.tickMs} ms`,
    `medians of ${c.windows} windows of ${c.windowMs / 1000} s after ${c.warmupMs / 1000} s warm-up${cfg.rounds > 1 ? `, then medians over ${cfg.rounds} rounds (lost, out of order, closed: summed)` : ''}; cpu in cores ('!' = load process saturated)`,
    table(['peer', 'updates/s', 'cpu µs/upd', 'p50 ms', 'p99 ms', 'lost', 'out of order', 'closed', 'server cpu', 'load cpu', 'other cpu'], rows),
    ratios
      ? `ratios${cfg.rounds > 1 ? ' (medians of the rounds’)' : ''}: cpu vs socket.io ${num(ratios.cpuVsSocketio, 2)}, cpu vs floor ${num(ratios.cpuVsFloor, 2)}, p99 vs floor ${num(ratios.p99VsFloor, 2)}`
      : '',
    ...((f.roundRatios as Record<string, number>[] | undefined) ?? []).map(
      (r, i) => `  round ${i + 1}: cpu vs socket.io ${num(r.cpuVsSocketio, 2)}, cpu vs floor ${num(r.cpuVsFloor, 2)}, p99 vs floor ${num(r.p99VsFloor, 2)}`,
    ),
    ...(mismatched.length ? [`warning: the load's frame scanner disagreed with JSON.parse for ${mismatched.join(', ')} (it fell back to parsing)`] : []),
  ].join('\n');
}

function e2eTable(cfg: BenchConfig, e: E2eResult): string {
  const c = cfg.e2e;
  const rows = c.peers.map((p) => {
    const why = failed(e[p]);
    if (why) return [p, why];
    const x = e[p] as E2ePeerResult;
    return [
      p,
      num(x.updatesPerSec),
      num(x.offeredPerSec),
      num(x.cpuUsPerUpdate, 2),
      num(x.p50Ms, 1),
      num(x.p99Ms, 1),
      num(x.cycleMs, 1),
      `${num(x.lost)} / ${num(x.outOfOrder)} / ${num(x.disconnects)}`,
      num(x.unstamped),
      num(x.upstream.superseded),
      num(x.serverCpu, 2),
      num(x.loadCpu, 2) + (x.loadSaturated ? '!' : ''),
      num(x.otherCpu, 2),
    ];
  });
  return [
    `e2e: upstream stand-in over HTTP, ${num(c.symbols)} symbols on two markets, ${c.changeRatio * 100}% changing every ${c.periodMs / 1000} s; each peer polls it every ${c.periodMs / 1000} s; ${num(c.clients)} clients x ${c.topicsPerClient} quote topics`,
    `medians of ${c.windows} windows of ${c.windowMs / 1000} s after ${c.warmupMs / 1000} s warm-up${cfg.rounds > 1 ? `, then medians over ${cfg.rounds} rounds` : ''}; latency from the upstream's answer to the client; cycle: the bridge's poll, request to last frame written; cpu in cores`,
    table(
      [
        'peer',
        'updates/s',
        'offered/s',
        'cpu µs/upd',
        'p50 ms',
        'p99 ms',
        'cycle ms',
        'lost / ooo / closed',
        'unstamped',
        'missed polls',
        'server cpu',
        'load cpu',
        'other cpu',
      ],
      rows,
    ),
    `ratio: cpu vs socket.io ${num(e.ratios.cpuVsSocketio ?? undefined, 2)}${(e.roundRatios ?? []).length ? ` (rounds: ${(e.roundRatios ?? []).map((r) => num(r, 2)).join(', ')})` : ''}`,
    ...c.peers
      .filter((p) => ((e[p] as E2ePeerResult | undefined)?.scanCheck?.mismatches ?? 0) > 0)
      .map((p) => `warning: the load's frame scanner disagreed with JSON.parse for ${p} (it fell back to parsing)`),
  ].join('\n');
}

function connectionsTable(cfg: BenchConfig, c: Record<string, unknown>): string {
  const peers = cfg.connections.peers;
  const rows = peers.map((p) => {
    const r = (p === 'bridge' ? c : c[p]) as ConnectionsResult | Skipped | undefined;
    const why = failed(r);
    if (why) return [p, why];
    const x = r as ConnectionsResult;
    const snap = x.snapshot ? `${num(x.snapshot.ms, 1)} (max ${num(x.snapshot.maxMs, 1)})` : '–';
    return [
      p,
      num(x.serverConnections),
      num(x.sourceAddresses),
      num(x.rssKbPerConn, 1),
      num(x.heapKbPerConn, 1),
      num(x.externalKbPerConn, 1),
      num(x.acceptMs),
      num(x.subscribeMs),
      snap,
    ];
  });
  const k = cfg.connections;
  return [
    `connections: ${num(k.count)} idle connections x ${k.topicsPerClient} topics from loopback addresses (${k.perAddress} each), ${Math.ceil(k.count / k.perLoadProcess)} load process(es); memory over an idle baseline, after full GC; snapshot: whole market (${num(k.symbols)}) to a fresh client with every connection open, median of ${k.snapshotProbes}`,
    table(['peer', 'open', 'addresses', 'rss KB/conn', 'heap KB/conn', 'external KB/conn', 'accept ms', 'subscribe ms', 'snapshot ms'], rows),
  ].join('\n');
}

function cycleTable(c: CycleResult): string {
  const p = c.plain;
  return [
    `cycle: ${num(c.symbols)} symbols, ${num(c.bodyBytes)}-byte body, ${num(c.changes)} changes per cycle; medians of ${c.cycles} cycles; JSON.parse ${num(c.jsonParseMs, 2)} ms`,
    table(
      ['path', 'cycle ms', 'ratio', 'stages ms'],
      [
        [
          'bytes, reader, apply, publish',
          num(c.cycleMs, 2),
          num(c.ratioToJsonParse, 2),
          `read ${num(c.stagesMs.read, 2)}, apply ${num(c.stagesMs.apply, 2)}, publish ${num(c.stagesMs.publish, 2)}`,
        ],
        [
          'plain: JSON.parse, normalise, apply, publish',
          num(p.cycleMs, 2),
          num(p.ratioToJsonParse, 2),
          `parse ${num(p.stagesMs.parse, 2)}, normalise ${num(p.stagesMs.normalise, 2)}, apply ${num(p.stagesMs.apply, 2)}, publish ${num(p.stagesMs.publish, 2)}`,
        ],
      ],
    ),
    `each alone, means with their garbage collections: the poller's path ${num(c.alone.cycleMs, 2)} ms, JSON.parse ${num(c.alone.jsonParseMs, 2)} ms, ratio ${num(c.alone.ratio, 2)}; its state holds ${num(c.alone.heapKbPerTopic, 2)} KB of heap, ${num(c.alone.buffersKbPerTopic, 2)} KB of buffers and ${num(c.alone.kernelKbPerTopic ?? 0, 2)} KB of the list kernel's memory per symbol`,
    `a resume of every symbol ${c.resume.back} changes back: ${num(c.resume.frames)} frames, first ${num(c.resume.firstMs, 1)} ms, again ${num(c.resume.againMs, 1)} ms`,
    `bodies read the plain way: ${num(c.plainReads)}; cycles whose events differed between the paths: ${num(c.mismatches)}`,
  ].join('\n');
}

function economyTable(e: EconomyResult): string {
  const cadence = e.feeds.map((f) => f.cadenceMs).filter(Number.isFinite);
  return [
    `economy: fixed subscription mix against the built-in simulator, ${e.measureMs / 1000} s window; minimum = the cycles that ran x their fewest calls`,
    table(
      ['calls', 'minimum', 'ratio', 'calls/min', 'minimum/min', 'cadence ms', 'idle realtime calls'],
      [
        [
          num(e.calls),
          num(e.minimumCalls),
          num(e.ratioToMinimum, 3),
          num(e.callsPerMin, 1),
          num(e.minimumCallsPerMin, 1),
          cadence.length ? `${num(Math.min(...cadence))}–${num(Math.max(...cadence))}` : '–',
          num(e.idleRealtimeCalls),
        ],
      ],
    ),
  ].join('\n');
}

function recorderTable(r: RecorderResult): string {
  return [
    `recorder: ${num(r.symbols)} symbols, ${num(r.changes)} changes per cycle; StateStore.apply + LocalBus.publish without and with a Recorder writing files; medians of ${r.cycles} cycles`,
    table(
      ['off ms', 'on ms', 'cost ms', 'ratio', 'bytes/change', 'stored bytes/change (gzip)', 'dropped'],
      [[num(r.offMs, 2), num(r.onMs, 2), num(r.costMs, 2), num(r.ratioToOff, 2), num(r.bytesPerChange, 1), num(r.storedBytesPerChange, 1), num(r.dropped)]],
    ),
  ].join('\n');
}

/** The report text of a run's results. */
export function report(cfg: BenchConfig, r: Results): string {
  const m = r.machine;
  const out = [
    `krx-bridge benchmark (${r.mode}) on ${String(m.cpus)} x ${String(m.model)}, Node ${String(m.node)}, ${m.pinned ? 'server on core 0, load on core 1' : 'not pinned'}`,
  ];
  const section = (name: string, v: unknown, render: () => string): void => {
    const why = failed(v);
    out.push('', why ? `${name}: ${why}` : render());
  };
  if (cfg.only.includes('cycle')) section('cycle', r.cycle, () => cycleTable(r.cycle as CycleResult));
  if (cfg.only.includes('fanout')) {
    section('fanout', r.fanout, () => fanoutTable(cfg, r.fanout as Record<string, unknown>));
    section('snapshot', r.snapshot, () => {
      const s = r.snapshot as { symbols: number; ms: number; subscribedMs: number; probes: number; underLoad: boolean };
      return `snapshot: whole market (${num(s.symbols)} snapshots) to a fresh client in ${num(s.ms, 1)} ms (median of ${s.probes}; subscribed reply after ${num(s.subscribedMs, 1)} ms)${s.underLoad ? ', during the fan-out load' : ''}`;
    });
  }
  if (cfg.only.includes('e2e')) section('e2e', r.e2e, () => e2eTable(cfg, r.e2e as E2eResult));
  if (cfg.only.includes('connections')) section('connections', r.connections, () => connectionsTable(cfg, r.connections as Record<string, unknown>));
  if (cfg.only.includes('economy')) section('economy', r.economy, () => economyTable(r.economy as EconomyResult));
  if (cfg.only.includes('recorder')) section('recorder', r.recorder, () => recorderTable(r.recorder as RecorderResult));
  return out.join('\n');
}
