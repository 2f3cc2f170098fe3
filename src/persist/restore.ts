import { rowChecksum } from '../protocol/crc32.js';
import type { StateStore } from '../state/store.js';
import type { Row } from '../upstream/normalise.js';
import type { LoadedState } from './load.js';

/**
 * Puts what the state files held into a store at start: each topic's last
 * row, seq, checksum and the time it was observed, so its snapshots carry
 * that time, not the time they are sent. A row whose checksum does not
 * match the one written with it is left out. Returns the topics restored
 * and the ones left out.
 */
export function restoreInto(store: StateStore, loaded: LoadedState): { restored: number; rejected: string[] } {
  const rejected: string[] = [];
  let restored = 0;
  for (const [key, t] of loaded.topics) {
    const row = t.r as Row;
    if (rowChecksum(row) !== t.x) {
      rejected.push(key);
      continue;
    }
    store.load(t.k, t.m, t.c, { row, seq: t.s, ts: t.t, crc: t.x });
    restored++;
  }
  return { restored, rejected };
}
