/**
 * The workload of the state-store benchmarks (bench/state-journal.ts,
 * bench/state-store-lmdb.mjs): 4,500 quote rows, a third of which change
 * each round, as in a busy second. Pure.
 */

/** Topics held. */
export const JOURNAL_TOPICS = 4500;

/** Row `i` as it stands in round `t`. */
export function journalRow(i: number, t: number): Record<string, string | number> {
  return {
    isuSrtCd: String(100000 + i),
    isuKorAbbrv: '종목' + i,
    trdPrc: 10000 + ((i * 7 + t) % 97) * 10,
    cmpprevddTpCd: '2',
    cmpprevddPrc: 10,
    accTrdvol: 1000 + t * i,
    accTrdval: 123456789 + t,
    opnprc: 10000,
    hgprc: 10500,
    lwprc: 9900,
    mktcap: 1e12,
    listShrs: 1e8,
    trdTm: '101010',
  };
}

/** All rows of round 0. */
export function firstJournalRows(): Record<string, string | number>[] {
  return Array.from({ length: JOURNAL_TOPICS }, (_, i) => journalRow(i, 0));
}

/** The rows of round `t`: `rows` with a third of them changed. */
export function nextJournalRows(rows: readonly Record<string, string | number>[], t: number): Record<string, string | number>[] {
  return rows.map((r, i) => (i % 3 === t % 3 ? journalRow(i, t) : r));
}
