/**
 * Exports daily history of some codes to CSV: one row per trading day per code.
 *
 *   npx tsx examples/history-csv.ts [--from 20261001] [--to 20261120] [--market kospi] [--out prices.csv] [--url ws://localhost:8080/ws] [code …]
 *
 * It asks the bridge's `history` resource (at most 100 days per request, so
 * longer ranges are fetched in pages, newest first) and writes
 * `code,date,open,high,low,close,change,volume,value`, oldest day first per
 * code, to stdout or to `--out`. The range defaults to the last 30 days (KST), the codes to
 * 005930 and 000660.
 * The URL can also come from KRX_BRIDGE_URL.
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { WebSocket } from 'ws';
// In your own project: import { KrxClient, type HistoryRow, type Market } from 'krx-bridge/client';
import { KrxClient, type HistoryRow, type Market } from '../src/client/index.js';

const DAY_MS = 86_400_000;
/** `YYYYMMDD` of a time in KST. */
const kstDay = (ms: number) => new Date(ms + 9 * 3_600_000).toISOString().slice(0, 10).replace(/-/g, '');
/** The day before a `YYYYMMDD` day. */
const dayBefore = (d: string) => kstDay(Date.UTC(+d.slice(0, 4), +d.slice(4, 6) - 1, +d.slice(6, 8)) - DAY_MS - 9 * 3_600_000);

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    from: { type: 'string', default: kstDay(Date.now() - 30 * DAY_MS) },
    to: { type: 'string', default: kstDay(Date.now()) },
    market: { type: 'string', default: 'kospi' },
    out: { type: 'string' },
    url: { type: 'string', default: process.env.KRX_BRIDGE_URL ?? 'ws://localhost:8080/ws' },
  },
});
const market = values.market as Market;
const codes = positionals.length > 0 ? positionals : ['005930', '000660'];
for (const d of [values.from, values.to]) if (!/^\d{8}$/.test(d)) throw new Error(`dates are YYYYMMDD, not ${d}`);

/** Every daily bar of a code from `from` to `to`, oldest first. */
async function daily(client: KrxClient, code: string, from: string, to: string): Promise<HistoryRow[]> {
  const rows: HistoryRow[] = [];
  let end = to;
  while (end >= from) {
    const page = (await client.history(market, code, { period: 'D', from, to: end, count: 100 })).hisLists;
    rows.push(...page);
    const oldest = page[page.length - 1]?.trdDd;
    if (page.length < 100 || oldest === undefined) break;
    end = dayBefore(oldest);
  }
  return rows.filter((r) => r.trdDd >= from && r.trdDd <= to).sort((a, b) => a.trdDd.localeCompare(b.trdDd));
}

const cell = (v: unknown) => (v === null || v === undefined ? '' : String(v));
const client = new KrxClient(values.url, { WebSocket, reconnect: false });
const lines = ['code,date,open,high,low,close,change,volume,value'];
try {
  for (const code of codes) {
    const rows = await daily(client, code, values.from, values.to);
    for (const r of rows) {
      const date = `${r.trdDd.slice(0, 4)}-${r.trdDd.slice(4, 6)}-${r.trdDd.slice(6, 8)}`;
      lines.push([code, date, r.opnprc, r.hgprc, r.lwprc, r.trdPrc, r.cmpprevddPrc, r.accTrdvol, r.accTrdval].map(cell).join(','));
    }
    console.error(`${code}: ${rows.length} days`);
  }
} catch (e) {
  console.error(`history-csv: ${(e as Error).message}`);
  process.exitCode = 1;
} finally {
  await client.close();
}
if (process.exitCode !== 1) {
  const csv = `${lines.join('\n')}\n`;
  if (values.out !== undefined) writeFileSync(values.out, csv);
  else process.stdout.write(csv);
}
