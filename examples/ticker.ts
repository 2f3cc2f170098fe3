/**
 * A terminal ticker: a live table of last prices, redrawn in place.
 *
 *   npx tsx examples/ticker.ts [--market kospi] [--url ws://localhost:8080/ws] [code …]
 *
 * It subscribes to the `price` channel of the codes (default: ten KOSPI
 * large caps) and redraws at most four times a second with ANSI escapes, up
 * in red and down in blue as Korean screens show them. When the output is
 * not a terminal (a pipe or a file) it prints the whole table every two
 * seconds instead, without escapes. NO_COLOR turns colours off. The URL can
 * also come from KRX_BRIDGE_URL. Ctrl-C quits.
 */
import { parseArgs } from 'node:util';
import { WebSocket } from 'ws';
// In your own project: import { KrxClient, type Market, type PriceRow } from 'krx-bridge/client';
import { KrxClient, type Market, type PriceRow } from '../src/client/index.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    market: { type: 'string', default: 'kospi' },
    url: { type: 'string', default: process.env.KRX_BRIDGE_URL ?? 'ws://localhost:8080/ws' },
  },
});
const market = values.market as Market;
const codes = positionals.length > 0 ? positionals : ['005930', '000660', '373220', '207940', '005380', '000270', '035420', '068270', '105560', '069500'];

const tty = process.stdout.isTTY === true;
const colour = tty && !process.env.NO_COLOR;
const paint = (code: string, s: string) => (colour ? `\x1b[${code}m${s}\x1b[0m` : s);
const RED = '31';
const BLUE = '34';
const DIM = '2';
const BOLD = '1';

const names = new Map<string, string>();
let state = 'connecting';

/** Columns a string takes in a terminal: Hangul and other wide characters take two. */
function width(s: string): number {
  let w = 0;
  for (const ch of s) w += /[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]/.test(ch) ? 2 : 1;
  return w;
}
const padEnd = (s: string, n: number) => s + ' '.repeat(Math.max(0, n - width(s)));
const padStart = (s: string, n: number) => ' '.repeat(Math.max(0, n - width(s))) + s;
const int = (n: number | null | undefined) => (typeof n === 'number' ? n.toLocaleString('en-US') : '-');

function line(code: string, row: PriceRow | undefined): string {
  const change = row?.cmpprevddPrc ?? null;
  const price = row?.trdPrc ?? null;
  const pct = price !== null && change !== null && price - change > 0 ? (change / (price - change)) * 100 : null;
  const dir = change === null || change === 0 ? '' : change > 0 ? RED : BLUE;
  const t = row?.trdTm?.padStart(8, '0');
  const cells = [
    padEnd(code, 8),
    padEnd((names.get(code) ?? '').slice(0, 12), 26),
    paint(dir || BOLD, padStart(int(price), 11)),
    paint(dir, padStart(change === null ? '-' : `${change > 0 ? '+' : ''}${int(change)}`, 10)),
    paint(dir, padStart(pct === null ? '-' : `${pct > 0 ? '+' : ''}${pct.toFixed(2)}%`, 9)),
    padStart(int(row?.accTrdvol), 13),
    paint(DIM, padStart(t ? `${t.slice(0, 2)}:${t.slice(2, 4)}:${t.slice(4, 6)}` : '-', 10)),
  ];
  return cells.join(' ');
}

function table(): string[] {
  const head = [
    padEnd('code', 8),
    padEnd('name', 26),
    padStart('last', 11),
    padStart('change', 10),
    padStart('%', 9),
    padStart('volume', 13),
    padStart('time', 10),
  ].join(' ');
  const title = `krx-bridge ticker · ${market.toUpperCase()} · ${state} · ${new Date().toLocaleTimeString('en-GB')}`;
  return [paint(BOLD, title), '', paint(DIM, head), ...codes.map((c) => line(c, client.row('price', market, c)))];
}

let scheduled = false;
function draw(): void {
  if (scheduled) return;
  scheduled = true;
  setTimeout(() => {
    scheduled = false;
    // Home, then each line cleared to its end, then everything below cleared: no flicker.
    process.stdout.write(`\x1b[H${table().join('\x1b[K\n')}\x1b[K\n\x1b[J`);
  }, 250);
}

const client = new KrxClient(values.url, { WebSocket });
/** Set by `quit`: the client closes because it was asked to. */
let quitting = false;
let lastError = '';
client.on('state', (_prev, next) => {
  state = next;
  if (next === 'closed' && !quitting) {
    // The bridge refused it for good (a token not valid, say): say why and stop.
    if (tty) process.stdout.write(`\x1b[?25h\n${lastError}\n`);
    process.exit(1);
  }
  if (tty) draw();
});
client.on('error', (e) => {
  lastError = `error ${e.code}: ${e.message}`;
  if (!tty) console.error(lastError);
});
if (tty) {
  process.stdout.write('\x1b[?25l\x1b[2J');
  client.on('price', () => draw());
} else {
  setInterval(() => process.stdout.write(`${table().join('\n')}\n\n`), 2000);
}

function quit(): void {
  quitting = true;
  if (tty) process.stdout.write('\x1b[?25h\n');
  void client.close().then(() => process.exit(0));
}
process.once('SIGINT', quit);
process.once('SIGTERM', quit);

client
  .lists(market)
  .then((l) => {
    for (const i of l.isuLists) names.set(i.isuSrtCd, i.isuKorAbbrv ?? i.isuKorNm ?? '');
    if (tty) draw();
  })
  .catch(() => undefined);
await client.subscribe('price', market, codes);
