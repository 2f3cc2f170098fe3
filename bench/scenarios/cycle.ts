import { Session } from 'node:inspector/promises';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LocalBus } from '../../src/bus/bus.js';
import type { ChangeBatch } from '../../src/state/store.js';
import { StateStore } from '../../src/state/store.js';
import { readBody } from '../../src/upstream/body.js';
import { endpoint, type Endpoint } from '../../src/upstream/catalogue.js';
import { ListReader } from '../../src/upstream/listread.js';
import { normaliseBody } from '../../src/upstream/normalise.js';
import { crc32, rowChecksum } from '../../src/protocol/crc32.js';
import { FEED, SyntheticMarket, listBody } from '../lib/market.js';
import { hotFunctions, type CpuProfile, type HotFunction } from '../lib/profile.js';
import { median } from '../lib/stats.js';

/**
 * The poll-cycle scenario: what one whole-market list response costs the
 * bridge from the body's bytes to a published batch, against a bare
 * `JSON.parse` of the same body's text, in the same process. The measured
 * path is the poller's: `readBody` with the feed's `ListReader` for that
 * call (what `UpstreamClient` does with a response), `StateStore.apply`
 * with the reader's delta and `LocalBus.publish` to one no-op subscriber
 * (what `Feed` does with the answer). The plain path, which the bridge
 * took before it read lists incrementally and still takes for a body the
 * reader refuses (`JSON.parse` of the text, `normaliseBody`,
 * `StateStore.apply`, `LocalBus.publish`), then takes the same bodies with
 * a store of its own, and every cycle's events of the two are compared.
 * Each path's cycles alternate with a bare `JSON.parse` of the same text.
 * Runs in the server process.
 */

/** Parameters of the cycle scenario. */
export interface CycleConfig {
  readonly symbols: number;
  readonly changeRatio: number;
  readonly seed: number;
  /** Cycles run before measuring (JIT warm-up). */
  readonly warmup: number;
  /** Cycles measured. */
  readonly cycles: number;
  /** Directory for CPU profiles of each path (extra cycles after the measured ones); none by default. */
  readonly profileDir?: string;
}

/** Stages of the real path, medians per cycle, ms. */
export interface CycleStages {
  /** `readBody` with the reader: rows found, compared, the changed ones read. */
  readonly read: number;
  readonly apply: number;
  readonly publish: number;
}

/** The plain path's figures, medians per cycle, ms. */
export interface PlainCycle {
  readonly cycleMs: number;
  /** `JSON.parse` beside this path's cycles. */
  readonly jsonParseMs: number;
  readonly ratioToJsonParse: number;
  readonly stagesMs: { parse: number; normalise: number; apply: number; publish: number };
}

/** Medians per cycle, ms. */
export interface CycleResult {
  readonly symbols: number;
  readonly cycles: number;
  readonly bodyBytes: number;
  /** The real path, bytes to published batch. */
  readonly cycleMs: number;
  readonly jsonParseMs: number;
  readonly ratioToJsonParse: number;
  readonly stagesMs: CycleStages;
  /** The plain path over the same bodies. */
  readonly plain: PlainCycle;
  /** Changes published per measured cycle (median). */
  readonly changes: number;
  readonly droppedRows: number;
  /** Bodies the reader refused (read the plain way instead), all cycles. */
  readonly plainReads: number;
  /**
   * The poller's path and bare `JSON.parse`, each alone over the same
   * bodies (a fresh store, then the parses, one after the other): means
   * per cycle, every garbage collection included, and their ratio. Beside
   * each other in one heap, a collection that one's garbage causes can
   * fall in the other's time, and a median leaves out the cycles it falls
   * in; alone, each pays for its own, as its CPU does.
   */
  readonly alone: {
    readonly cycleMs: number;
    readonly jsonParseMs: number;
    readonly ratio: number;
    /** V8 heap the poller's path holds after its run (reader, store: rows, replay log), after full collections, per symbol, KB. */
    readonly heapKbPerTopic: number;
    /** Buffer memory (outside the V8 heap) it holds then, per symbol, KB. */
    readonly buffersKbPerTopic: number;
    /** The reader's list kernel's memory (WebAssembly, outside both), per symbol, KB: the last two bodies, their row records, the frames' room. */
    readonly kernelKbPerTopic: number;
  };
  /**
   * A resume of every topic `back` changes behind, from the poller's path's
   * store after its run alone: the frames it gives, the ms the first one
   * takes and the ms the same resume takes again.
   */
  readonly resume: { readonly back: number; readonly frames: number; readonly firstMs: number; readonly againMs: number };
  /** Cycles whose events (topic, seq, kind, frame, checksum, row) differed between the two paths, all cycles. */
  readonly mismatches: number;
  /** Hottest functions of each path by self time, when profiled. */
  readonly profile?: { readonly real: HotFunction[]; readonly plain: HotFunction[] };
}

function trdTm(i: number): string {
  const s = 9 * 3600 + 5 * 60 + i;
  const hh = Math.floor(s / 3600);
  const mm = Math.floor((s % 3600) / 60);
  return `${String(hh).padStart(2, '0')}${String(mm).padStart(2, '0')}${String(s % 60).padStart(2, '0')}`;
}

/** One path from a body to a published batch, with the time of each stage. */
interface Path {
  run(i: number): { batch: ChangeBatch; stages: number[] };
  /** The path's store. */
  readonly store: StateStore;
  /** The path's list reader, if it has one. */
  readonly reader?: ListReader;
}

/** The bodies of a run: text and bytes of each, every one the previous with a share of the symbols changed. */
function makeBodies(cfg: CycleConfig, count: number): { texts: string[]; bytes: Buffer[] } {
  const market = new SyntheticMarket({ symbols: cfg.symbols, seed: cfg.seed, changeRatio: cfg.changeRatio });
  const texts: string[] = [];
  for (let i = 0; i < count; i++) {
    if (i > 0) market.step();
    texts.push(listBody(market, '20240603', trdTm(i)));
  }
  return { texts, bytes: texts.map((t) => Buffer.from(t)) };
}

/** The poller's path: bytes, reader, store with delta, bus. */
function realPath(e: Endpoint, bytes: readonly Buffer[], plainReads: { n: number }): Path {
  const reader = new ListReader();
  const store = new StateStore({ epoch: 'cycle' });
  const bus = new LocalBus();
  bus.subscribe('batch', () => undefined);
  return {
    store,
    reader,
    run(i) {
      const t0 = performance.now();
      const r = readBody(e, bytes[i]!, reader);
      if (!r.ok) throw new Error(`cycle body rejected: ${r.reason}`);
      const t1 = performance.now();
      const batch = store.apply(FEED.channel, FEED.market, r.value.rows, 1_717_370_000_000 + i * 1000, undefined, r.delta);
      const t2 = performance.now();
      bus.publish(batch);
      const t3 = performance.now();
      if (r.plain !== undefined) plainReads.n++;
      return { batch, stages: [t1 - t0, t2 - t1, t3 - t2] };
    },
  };
}

/** The plain path: text, JSON.parse, normaliseBody, store, bus. */
function plainPath(e: Endpoint, texts: readonly string[], dropped: { n: number }): Path {
  const store = new StateStore({ epoch: 'cycle' });
  const bus = new LocalBus();
  bus.subscribe('batch', () => undefined);
  return {
    store,
    run(i) {
      const t0 = performance.now();
      const body: unknown = JSON.parse(texts[i]!);
      const t1 = performance.now();
      const res = normaliseBody(e.response, body);
      if (!res.ok) throw new Error(`cycle body rejected: ${res.reason}`);
      const t2 = performance.now();
      const batch = store.apply(FEED.channel, FEED.market, res.value.rows, 1_717_370_000_000 + i * 1000);
      const t3 = performance.now();
      bus.publish(batch);
      const t4 = performance.now();
      dropped.n += res.value.dropped;
      return { batch, stages: [t1 - t0, t2 - t1, t3 - t2, t4 - t3] };
    },
  };
}

function timeParse(text: string, use: (n: number) => void): number {
  const t0 = performance.now();
  const v = JSON.parse(text) as { isuLists: unknown[] };
  const t1 = performance.now();
  // Keep the result observable so the parse cannot be optimised away.
  use(v.isuLists.length);
  return t1 - t0;
}

/** A digest of a batch's events (topic, seq, kind, frame, checksum, row), made without allocating. */
function digest(b: ChangeBatch): number {
  let d = b.events.length;
  for (const e of b.events) d = (Math.imul(d, 31) + (crc32(e.topic) ^ e.seq ^ crc32(e.kind) ^ crc32(e.frame) ^ (e.crc ?? 0) ^ rowChecksum(e.row))) | 0;
  return d;
}

/** One path's run over the bodies, its cycles alternating with a bare `JSON.parse` of the same text. */
interface PhaseResult {
  readonly parse: number[];
  readonly stages: number[][];
  readonly changes: number[];
  /** Per body, the digest of the published events. */
  readonly digests: number[];
}

function phase(path: Path, texts: readonly string[], warmup: number, count: number): PhaseResult {
  // Starts from a collected heap: the other phase's garbage is not this one's to collect.
  (globalThis as { gc?: () => void }).gc?.();
  const out: PhaseResult = { parse: [], stages: [], changes: [], digests: [] };
  let sink = 0;
  for (let i = 0; i < count; i++) {
    // Alternate the order so neither measurement always runs with the other's garbage to collect.
    const parseFirst = i % 2 === 0;
    let bare = parseFirst ? timeParse(texts[i]!, (n) => (sink += n)) : 0;
    const r = path.run(i);
    if (!parseFirst) bare = timeParse(texts[i]!, (n) => (sink += n));
    out.digests.push(digest(r.batch));
    if (i <= warmup) continue;
    out.parse.push(bare);
    out.stages.push(r.stages);
    out.changes.push(r.batch.events.length);
  }
  if (sink < 0) throw new Error('unreachable');
  return out;
}

/** Mean ms of `run(i)` over cycles `warmup + 1` to `count - 1`, nothing else run in between (starts from a collected heap). */
function aloneMean(run: (i: number) => void, warmup: number, count: number): number {
  (globalThis as { gc?: () => void }).gc?.();
  let total = 0;
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    run(i);
    if (i > warmup) total += performance.now() - t0;
  }
  return total / (count - warmup - 1);
}

/** How far behind the resume probe's client is on every topic. */
const RESUME_BACK = 5;

/** Times a resume of every topic of `store`'s feed from `back` changes behind its seq (or its first seq), twice. */
function timeResume(store: StateStore, back: number): CycleResult['resume'] {
  const entries = [...store.entries(FEED.channel, FEED.market)];
  let frames = 0;
  const once = (): number => {
    frames = 0;
    const t0 = performance.now();
    for (const e of entries) frames += store.replay(e, Math.max(1, e.seq - back))?.length ?? 0;
    return performance.now() - t0;
  };
  const firstMs = once();
  return { back, frames, firstMs, againMs: once() };
}

/** Runs the cycle scenario: bodies are made first; the real path takes them all, then the plain path, each beside a bare parse of every body. */
export async function runCycle(cfg: CycleConfig): Promise<CycleResult> {
  const profiled = cfg.profileDir !== undefined ? 50 : 0;
  const total = cfg.warmup + cfg.cycles + 1 + profiled;
  const { texts, bytes } = makeBodies(cfg, total);
  const e = endpoint('v2.multiquote.lists');
  const counts = { plainReads: { n: 0 }, dropped: { n: 0 } };
  const real = realPath(e, bytes, counts.plainReads);
  const plain = plainPath(e, texts, counts.dropped);
  const r = phase(real, texts, cfg.warmup, total - profiled);
  const p = phase(plain, texts, cfg.warmup, total - profiled);
  const memory = (): NodeJS.MemoryUsage => {
    (globalThis as { gc?: () => void }).gc?.();
    (globalThis as { gc?: () => void }).gc?.();
    return process.memoryUsage();
  };
  const before = memory();
  const alonePath = realPath(e, bytes, { n: 0 });
  const aloneCycle = aloneMean((i) => alonePath.run(i), cfg.warmup, total - profiled);
  const after = memory();
  const heapKbPerTopic = (after.heapUsed - before.heapUsed) / 1024 / cfg.symbols;
  const buffersKbPerTopic = (after.arrayBuffers - before.arrayBuffers) / 1024 / cfg.symbols;
  const kernelKbPerTopic = (alonePath.reader?.kernelBytes ?? 0) / 1024 / cfg.symbols;
  const resume = timeResume(alonePath.store, RESUME_BACK);
  let sink = 0;
  const aloneParse = aloneMean((i) => (sink += (JSON.parse(texts[i]!) as { isuLists: unknown[] }).isuLists.length), cfg.warmup, total - profiled);
  if (sink < 0) throw new Error('unreachable');
  const mismatches = r.digests.filter((d, i) => d !== p.digests[i]).length;
  const sum = (s: number[]): number => s.reduce((a, b) => a + b, 0);
  const jsonParseMs = median(r.parse);
  const cycleMs = median(r.stages.map(sum));
  const plainMs = median(p.stages.map(sum));
  const stage = (rows: number[][], k: number): number => median(rows.map((s) => s[k]!));
  const profile = cfg.profileDir !== undefined ? await profilePaths(cfg.profileDir, real, plain, total - profiled, total) : undefined;
  return {
    symbols: cfg.symbols,
    cycles: cfg.cycles,
    bodyBytes: bytes[bytes.length - 1]!.length,
    cycleMs,
    jsonParseMs,
    ratioToJsonParse: cycleMs / jsonParseMs,
    stagesMs: { read: stage(r.stages, 0), apply: stage(r.stages, 1), publish: stage(r.stages, 2) },
    plain: {
      cycleMs: plainMs,
      jsonParseMs: median(p.parse),
      ratioToJsonParse: plainMs / median(p.parse),
      stagesMs: { parse: stage(p.stages, 0), normalise: stage(p.stages, 1), apply: stage(p.stages, 2), publish: stage(p.stages, 3) },
    },
    alone: { cycleMs: aloneCycle, jsonParseMs: aloneParse, ratio: aloneCycle / aloneParse, heapKbPerTopic, buffersKbPerTopic, kernelKbPerTopic },
    resume,
    changes: median(r.changes),
    droppedRows: counts.dropped.n,
    plainReads: counts.plainReads.n,
    mismatches,
    ...(profile ? { profile } : {}),
  };
}

/** CPU profiles of cycles `from` to `to` of each path, taken one path at a time; written to `dir` and summarised. */
async function profilePaths(dir: string, real: Path, plain: Path, from: number, to: number): Promise<{ real: HotFunction[]; plain: HotFunction[] }> {
  mkdirSync(dir, { recursive: true });
  const session = new Session();
  session.connect();
  try {
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 100 });
    const one = async (name: string, path: Path): Promise<HotFunction[]> => {
      await session.post('Profiler.start');
      for (let i = from; i < to; i++) path.run(i);
      const { profile } = await session.post('Profiler.stop');
      // The first sample's delta spans the time before the profiler started (the inspector's own dispatch).
      if (profile.timeDeltas?.length) profile.timeDeltas[0] = 0;
      writeFileSync(join(dir, `cycle-${name}.cpuprofile`), JSON.stringify(profile));
      return hotFunctions(profile as unknown as CpuProfile, 15);
    };
    const plainHot = await one('plain', plain);
    const realHot = await one('real', real);
    return { real: realHot, plain: plainHot };
  } finally {
    session.disconnect();
  }
}
