// The state journal's cost, with its default sizes: one flush of the rows a busy second changes (a third of 4,500), a restore
// from the snapshot and 20 such flushes, a restore from the longest journal it keeps before it compacts (`compactionBytes`),
// one snapshot of all the rows, and the longest the event loop waits while the snapshot is built.
// Run: node --import tsx bench/state-journal.ts [journal per snapshot]   (default: the journal's own, 8; 1000 leaves only its 64 MiB bound)
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { LocalBus } from '../src/bus/bus.js';
import { silentLogger } from '../src/log.js';
import { StateJournal } from '../src/persist/journal.js';
import { FILES, loadState } from '../src/persist/load.js';
import { StateStore } from '../src/state/store.js';
import { JOURNAL_TOPICS, firstJournalRows, nextJournalRows } from './lib/journal-rows.js';

const per = Number(process.argv[2] ?? 0);
const store = new StateStore();
const bus = new LocalBus();
const d = mkdtempSync(join(tmpdir(), 'jb-'));
const j = new StateJournal({ dir: d, store, logger: silentLogger(), flushMs: 1e9, compactMs: 1e12, ...(per > 0 ? { journalPerSnapshot: per } : {}) }, bus);
const compact = () => (j as unknown as { compact(): Promise<void> }).compact();
const journalBytes = async () => (await j.diskBytes()) - statSync(join(d, FILES.snapshot)).size;
const restore = (): number => {
  const c = performance.now();
  const l = loadState(d);
  const ms = performance.now() - c;
  if (l.topics.size !== JOURNAL_TOPICS || l.problems.length > 0) throw new Error(`restored ${l.topics.size} topics, problems ${l.problems.length}`);
  return ms;
};
await j.start();
let rows = firstJournalRows();
bus.publish(store.apply('quote', 'kospi', rows, 1));
bus.publishStatus({ channel: 'quote', market: 'kospi', state: 'live', intervalMs: 1000, ts: 1 });
// As a running bridge after its first snapshot: every row in it, the journal empty.
await compact();
const times: number[] = [];
let t = 0;
for (; t < 20;) {
  rows = nextJournalRows(rows, ++t);
  bus.publish(store.apply('quote', 'kospi', rows, 1000 * t));
  const t0 = performance.now();
  await j.flush();
  times.push(performance.now() - t0);
}
const j20 = await journalBytes();
times.sort((a, b) => a - b);
console.log(
  'flush of a busy second (1,500 changes): median ms',
  times[10]!.toFixed(1),
  'max',
  times[19]!.toFixed(1),
  'bytes/change',
  (j20 / (20 * 1500)).toFixed(0),
);
console.log('restore from the snapshot and 20 flushes ms', restore().toFixed(1));
// More busy seconds, until one more flush would pass the size at which the journal compacts: the longest journal a crash can leave.
const cap = j.compactionBytes;
while ((await journalBytes()) + 2 * (j20 / 20) < cap) {
  rows = nextJournalRows(rows, ++t);
  bus.publish(store.apply('quote', 'kospi', rows, 1000 * t));
  await j.flush();
}
const atCap = await journalBytes();
const capTimes = [restore(), restore(), restore()].sort((a, b) => a - b);
console.log(
  `compacts past ${(cap / (1 << 20)).toFixed(1)} MiB of journal; restore from the snapshot and ${t} flushes (${(atCap / (1 << 20)).toFixed(1)} MiB, ${(t * 1500).toLocaleString('en')} changes): median of 3 ms`,
  capTimes[1]!.toFixed(0),
);
const delay = monitorEventLoopDelay({ resolution: 1 });
delay.enable();
const c0 = performance.now();
await compact();
const snapMs = performance.now() - c0;
delay.disable();
console.log(
  'snapshot of 4,500 rows ms',
  snapMs.toFixed(1),
  'bytes',
  statSync(join(d, FILES.snapshot)).size,
  'longest event-loop wait ms',
  (delay.max / 1e6).toFixed(1),
);
await j.stop();
