// The state store measured two ways on one workload: the project's append-only journal (src/persist) and LMDB (lmdb-js, a key
// per topic), the embedded database from the npm registry that installs with prebuilt binaries and no compiler. lmdb is not a
// dependency of the project: install it in a folder of its own and point STOREBENCH at it (docs/OPERATIONS.md §11):
//   mkdir -p /tmp/storebench && (cd /tmp/storebench && npm init -y >/dev/null && npm install lmdb@3.5.6)
//   STOREBENCH=/tmp/storebench node --import tsx bench/state-store-lmdb.mjs [journal|lmdb]
// Workload of bench/state-journal.ts: 4,500 quote rows; 20 rounds that change a third of them (a busy second), each written
// durably (the journal syncs each flush; lmdb waits for `flushed`); then all rows written at once, and a restore from disk.
import { createRequire } from 'node:module';
import { mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { LocalBus } from '../src/bus/bus.ts';
import { silentLogger } from '../src/log.ts';
import { StateJournal } from '../src/persist/journal.ts';
import { loadState } from '../src/persist/load.ts';
import { StateStore } from '../src/state/store.ts';
import { JOURNAL_TOPICS, firstJournalRows, nextJournalRows } from './lib/journal-rows.ts';

const N = JOURNAL_TOPICS;
const ROUNDS = 20;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const dirBytes = (d) => readdirSync(d).reduce((a, f) => a + statSync(join(d, f)).blocks * 512, 0);

async function journal() {
  const d = mkdtempSync(join(tmpdir(), 'sb-journal-'));
  const store = new StateStore();
  const bus = new LocalBus();
  const j = new StateJournal({ dir: d, store, logger: silentLogger(), flushMs: 1e9, compactMs: 1e12 }, bus);
  await j.start();
  let rows = firstJournalRows();
  bus.publish(store.apply('quote', 'kospi', rows, 1));
  await j.flush();
  const b0 = dirBytes(d);
  const times = [];
  for (let t = 1; t <= ROUNDS; t++) {
    rows = nextJournalRows(rows, t);
    bus.publish(store.apply('quote', 'kospi', rows, 1000 * t));
    const t0 = performance.now();
    await j.flush();
    times.push(performance.now() - t0);
  }
  const grown = dirBytes(d) - b0;
  const c0 = performance.now();
  await j.compact();
  const full = performance.now() - c0;
  await j.stop();
  const r0 = performance.now();
  const loaded = loadState(d);
  const restore = performance.now() - r0;
  if (loaded.topics.size !== N) throw new Error(`journal restored ${loaded.topics.size}`);
  return { times, grown, full, restore, disk: dirBytes(d) };
}

async function lmdb() {
  const require = createRequire(join(process.env.STOREBENCH ?? '/tmp/storebench', 'package.json'));
  const { open } = await import(pathToFileURL(require.resolve('lmdb')).href);
  const d = mkdtempSync(join(tmpdir(), 'sb-lmdb-'));
  // On Linux lmdb-js resolves a commit before its sync (overlappingSync): each write also waits for `flushed`, to be as durable as a journal flush.
  const db = open({ path: d, compression: false });
  const store = new StateStore();
  const put = async (codes) => {
    await db.transaction(() => {
      for (const code of codes) {
        const e = store.entry('quote', 'kospi', code);
        db.put(`quote.kospi.${code}`, { k: 'quote', m: 'kospi', c: e.code, r: e.row, s: e.seq, t: e.ts, x: e.crc });
      }
    });
    await db.flushed;
  };
  let rows = firstJournalRows();
  const all = rows.map((r) => r.isuSrtCd);
  store.apply('quote', 'kospi', rows, 1);
  await put(all);
  const b0 = dirBytes(d);
  const times = [];
  for (let t = 1; t <= ROUNDS; t++) {
    rows = nextJournalRows(rows, t);
    const batch = store.apply('quote', 'kospi', rows, 1000 * t);
    const t0 = performance.now();
    await put(batch.events.map((e) => e.topic.split('.')[2]));
    times.push(performance.now() - t0);
  }
  const grown = dirBytes(d) - b0;
  const c0 = performance.now();
  await put(all);
  const full = performance.now() - c0;
  await db.close();
  const r0 = performance.now();
  const again = open({ path: d, compression: false, readOnly: true });
  const restored = new Map();
  for (const { key, value } of again.getRange()) restored.set(key, value);
  const restore = performance.now() - r0;
  await again.close();
  if (restored.size !== N) throw new Error(`lmdb restored ${restored.size}`);
  return { times, grown, full, restore, disk: dirBytes(d) };
}

const show = (name, r) =>
  console.log(
    `${name.padEnd(8)} flush of 1,500 rows: median ${median(r.times).toFixed(1)} ms (max ${Math.max(...r.times).toFixed(1)}); growth ${(r.grown / ((ROUNDS * N) / 3)).toFixed(0)} B/row; ` +
      `all 4,500 rows ${r.full.toFixed(1)} ms; restore ${r.restore.toFixed(1)} ms; on disk ${(r.disk / 1e6).toFixed(2)} MB`,
  );
const which = process.argv[2] ?? 'both';
if (which !== 'lmdb') show('journal', await journal());
if (which !== 'journal') show('lmdb', await lmdb());
