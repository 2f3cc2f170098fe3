// The state journal's cost: one flush of the rows a busy second changes (a third of 4,500), a restore from 20 such flushes, and one snapshot of all of them.
// Run: node --import tsx bench/state-journal.ts
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalBus } from '../src/bus/bus.js';
import { silentLogger } from '../src/log.js';
import { StateJournal } from '../src/persist/journal.js';
import { loadState } from '../src/persist/load.js';
import { StateStore } from '../src/state/store.js';
import { JOURNAL_TOPICS, firstJournalRows, nextJournalRows } from './lib/journal-rows.js';
const store = new StateStore();
const bus = new LocalBus();
const d = mkdtempSync(join(tmpdir(), 'jb-'));
const j = new StateJournal({ dir: d, store, logger: silentLogger(), flushMs: 1e9, compactMs: 1e12 }, bus);
await j.start();
let rows = firstJournalRows();
bus.publish(store.apply('quote', 'kospi', rows, 1));
bus.publishStatus({ channel: 'quote', market: 'kospi', state: 'live', intervalMs: 1000, ts: 1 });
const times: number[] = [];
const bytes0 = await j.diskBytes();
for (let t = 1; t <= 20; t++) {
  rows = nextJournalRows(rows, t);
  bus.publish(store.apply('quote', 'kospi', rows, 1000 * t));
  const t0 = performance.now();
  await j.flush();
  times.push(performance.now() - t0);
}
const b1 = await j.diskBytes();
times.sort((a, b) => a - b);
console.log(
  'flush of ~1500 changed rows: median ms',
  times[10]!.toFixed(1),
  'max',
  times[19]!.toFixed(1),
  'bytes/row',
  ((b1 - bytes0) / (20 * 1500)).toFixed(0),
);
// A crash now: the start reads the snapshot and the 20 flushes' journal.
const r0 = performance.now();
const loaded = loadState(d);
const restoreMs = performance.now() - r0;
if (loaded.topics.size !== JOURNAL_TOPICS || loaded.problems.length > 0)
  throw new Error(`restored ${loaded.topics.size} topics, problems ${loaded.problems.length}`);
console.log('restore from the snapshot and that journal ms', restoreMs.toFixed(1));
// More busy seconds, until one more flush would pass the cap: the longest journal a crash can leave.
const cap = 64 << 20;
const perFlush = (b1 - bytes0) / 20;
let t = 20;
while ((await j.diskBytes()) + 2 * perFlush < cap) {
  rows = nextJournalRows(rows, ++t);
  bus.publish(store.apply('quote', 'kospi', rows, 1000 * t));
  await j.flush();
}
const atCap = await j.diskBytes();
const capTimes: number[] = [];
for (let k = 0; k < 3; k++) {
  const c = performance.now();
  const l = loadState(d);
  capTimes.push(performance.now() - c);
  if (l.topics.size !== JOURNAL_TOPICS || l.problems.length > 0) throw new Error(`restored ${l.topics.size} topics, problems ${l.problems.length}`);
}
capTimes.sort((a, b) => a - b);
console.log(
  `restore from ${t} flushes (${(atCap / (1 << 20)).toFixed(1)} MiB, ${(t * 1500).toLocaleString('en')} changes): median of 3 ms`,
  capTimes[1]!.toFixed(0),
);
const c0 = performance.now();
await (j as unknown as { compact(): Promise<void> }).compact();
console.log('snapshot of 4500 rows ms', (performance.now() - c0).toFixed(1), 'bytes', await j.diskBytes());
await j.stop();
