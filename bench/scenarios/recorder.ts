import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { LocalBus } from '../../src/bus/bus.js';
import { silentLogger } from '../../src/log.js';
import { Recorder } from '../../src/recorder/recorder.js';
import { StateStore } from '../../src/state/store.js';
import { endpoint } from '../../src/upstream/catalogue.js';
import { normaliseBody, type Row } from '../../src/upstream/normalise.js';
import { FEED, SyntheticMarket, listBody } from '../lib/market.js';
import { median } from '../lib/stats.js';

/**
 * The recorder scenario: what recording adds to a poll cycle, and what it
 * stores. The whole-market list bodies of the cycle scenario (the same
 * seeded market) are normalised first; then each cycle's rows go through
 * `StateStore.apply` and `LocalBus.publish` twice, into two stores with a
 * no-op subscriber each, one bus also feeding a `Recorder` that writes real
 * files under a temporary DATA_DIR. The two are timed per cycle in
 * alternating order; the recorder's cost is the difference of the medians.
 * Bytes are counted as written (change lines only) and, for what is stored
 * once the day is compressed, gzip of the whole segment (its keyframe
 * included) over every change recorded. Runs in the server process.
 */

/** Parameters of the recorder scenario. */
export interface RecorderConfig {
  readonly symbols: number;
  readonly changeRatio: number;
  readonly seed: number;
  /** Cycles run before measuring (JIT warm-up, the segment's keyframe). */
  readonly warmup: number;
  /** Cycles measured. */
  readonly cycles: number;
}

/** Medians per cycle, ms, and bytes per change. */
export interface RecorderResult {
  readonly symbols: number;
  readonly cycles: number;
  /** Changes per measured cycle (median). */
  readonly changes: number;
  /** apply + publish without a recorder, and with one. */
  readonly offMs: number;
  readonly onMs: number;
  /** What the recorder adds to a cycle (`onMs - offMs`), and as a share of the cycle. */
  readonly costMs: number;
  readonly ratioToOff: number;
  /** Bytes of change lines written per change, measured cycles. */
  readonly bytesPerChange: number;
  /** Bytes per change once compressed (gzip of the whole segment, keyframe included, over every change recorded). */
  readonly storedBytesPerChange: number;
  /** Changes the recorder dropped (its disk did not keep up); 0 for a valid run. */
  readonly dropped: number;
}

function trdTm(i: number): string {
  const s = 9 * 3600 + 5 * 60 + i;
  return [Math.floor(s / 3600), Math.floor((s % 3600) / 60), s % 60].map((n) => String(n).padStart(2, '0')).join('');
}

/** The rows of each cycle's body, normalised as the poller does (once per store: a store may keep the row objects). */
function cycleRows(cfg: RecorderConfig, total: number): Row[][] {
  const market = new SyntheticMarket({ symbols: cfg.symbols, seed: cfg.seed, changeRatio: cfg.changeRatio });
  const spec = endpoint('v2.multiquote.lists').response;
  const out: Row[][] = [];
  for (let i = 0; i < total; i++) {
    if (i > 0) market.step();
    const res = normaliseBody(spec, JSON.parse(listBody(market, '20240603', trdTm(i))));
    if (!res.ok) throw new Error(`cycle body rejected: ${res.reason}`);
    out.push(res.value.rows);
  }
  return out;
}

/** Runs the recorder scenario. */
export async function runRecorder(cfg: RecorderConfig): Promise<RecorderResult> {
  const total = cfg.warmup + cfg.cycles + 1;
  const rowsOff = cycleRows(cfg, total);
  const rowsOn = cycleRows(cfg, total);
  const dir = mkdtempSync(join(tmpdir(), 'krx-bench-rec-'));
  const off = { store: new StateStore(), bus: new LocalBus() };
  const on = { store: new StateStore(), bus: new LocalBus() };
  let sink = 0;
  for (const s of [off, on]) s.bus.subscribe('batch', (b) => (sink += b.events.length));
  let written = 0;
  let dropped = 0;
  const recorder = new Recorder({ dir, store: on.store, logger: silentLogger(), onWrite: (n) => (written += n), onDrop: (_why, n) => (dropped += n) }, on.bus);
  recorder.start();
  const times = { off: [] as number[], on: [] as number[] };
  const changes: number[] = [];
  let measuredBytes = 0;
  let recorded = 0;
  try {
    for (let i = 0; i < total; i++) {
      const ts = Date.now();
      const run = (s: typeof on, rows: Row[]): { ms: number; n: number } => {
        const t0 = performance.now();
        const batch = s.store.apply(FEED.channel, FEED.market, rows, ts);
        s.bus.publish(batch);
        return { ms: performance.now() - t0, n: batch.events.length };
      };
      const before = written;
      // Alternate the order so neither run always pays for the other's garbage.
      const first = i % 2 === 0 ? run(off, rowsOff[i]!) : run(on, rowsOn[i]!);
      const second = i % 2 === 0 ? run(on, rowsOn[i]!) : run(off, rowsOff[i]!);
      const [without, withRec] = i % 2 === 0 ? [first, second] : [second, first];
      recorded += withRec.n;
      // The writes go on in the background, as between poll cycles (about a second apart live).
      await new Promise((r) => setTimeout(r, 5));
      if (i <= cfg.warmup) continue;
      times.off.push(without.ms);
      times.on.push(withRec.ms);
      changes.push(withRec.n);
      measuredBytes += written - before;
    }
  } finally {
    await recorder.stop();
  }
  const stored = segmentFiles(dir).reduce((n, f) => n + gzipSync(readFileSync(f)).length, 0);
  rmSync(dir, { recursive: true, force: true });
  if (sink < 0) throw new Error('unreachable');
  const offMs = median(times.off);
  const onMs = median(times.on);
  const measuredChanges = changes.reduce((x, y) => x + y, 0);
  return {
    symbols: cfg.symbols,
    cycles: cfg.cycles,
    changes: median(changes),
    offMs,
    onMs,
    costMs: onMs - offMs,
    ratioToOff: onMs / offMs,
    bytesPerChange: measuredBytes / measuredChanges,
    storedBytesPerChange: stored / recorded,
    dropped,
  };
}

/** The segment files written under `dir` (any day). */
function segmentFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ndjson'))
    .map((f) => join(dir, f));
}
