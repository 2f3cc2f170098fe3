import { LocalBus } from '../../src/bus/bus.js';
import { endpoint } from '../../src/upstream/catalogue.js';
import { normaliseBody } from '../../src/upstream/normalise.js';
import { StateStore } from '../../src/state/store.js';
import { FEED, SyntheticMarket, listBody } from '../lib/market.js';
import { median } from '../lib/stats.js';

/**
 * The poll-cycle scenario: what one whole-market list response costs the
 * bridge from body text to published batch (JSON.parse, normaliseBody
 * against the `v2.multiquote.lists` response spec, StateStore.apply,
 * LocalBus.publish to one no-op subscriber), against a bare JSON.parse of
 * the same text, in the same process. Runs in the server process.
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
}

/** Medians per cycle, ms. */
export interface CycleResult {
  readonly symbols: number;
  readonly cycles: number;
  readonly bodyBytes: number;
  readonly cycleMs: number;
  readonly jsonParseMs: number;
  readonly ratioToJsonParse: number;
  /** The cycle's stages: JSON.parse, normaliseBody, StateStore.apply, LocalBus.publish. */
  readonly stagesMs: { parse: number; normalise: number; apply: number; publish: number };
  /** Changes published per measured cycle (median). */
  readonly changes: number;
  readonly droppedRows: number;
}

function trdTm(i: number): string {
  const s = 9 * 3600 + 5 * 60 + i;
  const hh = Math.floor(s / 3600);
  const mm = Math.floor((s % 3600) / 60);
  return `${String(hh).padStart(2, '0')}${String(mm).padStart(2, '0')}${String(s % 60).padStart(2, '0')}`;
}

/** Runs the cycle scenario: bodies are made first, then each is timed both ways. */
export function runCycle(cfg: CycleConfig): CycleResult {
  const market = new SyntheticMarket({ symbols: cfg.symbols, seed: cfg.seed, changeRatio: cfg.changeRatio });
  const total = cfg.warmup + cfg.cycles + 1;
  const bodies: string[] = [];
  for (let i = 0; i < total; i++) {
    if (i > 0) market.step();
    bodies.push(listBody(market, '20240603', trdTm(i)));
  }
  const spec = endpoint('v2.multiquote.lists').response;
  const store = new StateStore();
  const bus = new LocalBus();
  let published = 0;
  bus.subscribe('batch', (b) => {
    published += b.events.length;
  });
  const parse: number[] = [];
  const stages = { parse: [] as number[], normalise: [] as number[], apply: [] as number[], publish: [] as number[] };
  const cycle: number[] = [];
  const changes: number[] = [];
  let dropped = 0;
  let sink = 0;
  for (let i = 0; i < total; i++) {
    const text = bodies[i]!;
    // Alternate the order so neither measurement always runs with the other's garbage to collect.
    const parseFirst = i % 2 === 0;
    let p = 0;
    if (parseFirst) p = timeParse(text, (n) => (sink += n));
    const t0 = performance.now();
    const body: unknown = JSON.parse(text);
    const t1 = performance.now();
    const res = normaliseBody(spec, body);
    if (!res.ok) throw new Error(`cycle body rejected: ${res.reason}`);
    const t2 = performance.now();
    const batch = store.apply(FEED.channel, FEED.market, res.value.rows, Date.now());
    const t3 = performance.now();
    const before = published;
    bus.publish(batch);
    const t4 = performance.now();
    if (!parseFirst) p = timeParse(text, (n) => (sink += n));
    if (i <= cfg.warmup) continue;
    dropped += res.value.dropped;
    parse.push(p);
    cycle.push(t4 - t0);
    stages.parse.push(t1 - t0);
    stages.normalise.push(t2 - t1);
    stages.apply.push(t3 - t2);
    stages.publish.push(t4 - t3);
    changes.push(published - before);
  }
  if (sink < 0) throw new Error('unreachable');
  const cycleMs = median(cycle);
  const jsonParseMs = median(parse);
  return {
    symbols: cfg.symbols,
    cycles: cfg.cycles,
    bodyBytes: Buffer.byteLength(bodies[bodies.length - 1]!),
    cycleMs,
    jsonParseMs,
    ratioToJsonParse: cycleMs / jsonParseMs,
    stagesMs: {
      parse: median(stages.parse),
      normalise: median(stages.normalise),
      apply: median(stages.apply),
      publish: median(stages.publish),
    },
    changes: median(changes),
    droppedRows: dropped,
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
