/**
 * A bot that logs every price move of more than N percent within one minute.
 *
 *   npx tsx examples/move-bot.ts [--pct 1] [--market kospi] [--url ws://localhost:8080/ws] [code …]
 *   npx tsx examples/move-bot.ts --replay 20261124/100000-103000@60 [code …]   (a recorded day, at 60×)
 *
 * It subscribes to the `price` channel of the codes (default: ten KOSPI
 * large caps) and keeps, per code, the trades of the last 60 seconds. When
 * the newest price is more than N% above the window's low or below its high,
 * it prints one line and starts the window afresh from that price. The URL
 * can also come from KRX_BRIDGE_URL. With `--replay` the same bot runs,
 * unchanged, on a recorded day (docs/REPLAY.md), and exits when it ends.
 */
import { parseArgs } from 'node:util';
import { WebSocket } from 'ws';
// In your own project: import { KrxClient, type Market } from 'krx-bridge/client';
import { KrxClient, type Market } from '../src/client/index.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    pct: { type: 'string', default: '1' },
    market: { type: 'string', default: 'kospi' },
    url: { type: 'string', default: process.env.KRX_BRIDGE_URL ?? 'ws://localhost:8080/ws' },
    replay: { type: 'string' },
  },
});
/** `YYYYMMDD[/HHMMSS-HHMMSS][@speed]`. */
function replayOf(spec: string | undefined) {
  if (spec === undefined) return undefined;
  const m = /^(\d{8})(?:\/(\d{6})-(\d{6}))?(?:@(\d+|max))?$/.exec(spec);
  if (!m) throw new Error(`--replay must be YYYYMMDD[/HHMMSS-HHMMSS][@speed], not ${spec}`);
  return { date: m[1]!, ...(m[2] ? { from: m[2], to: m[3]! } : {}), ...(m[4] ? { speed: m[4] === 'max' ? ('max' as const) : Number(m[4]) } : {}) };
}
const replay = replayOf(values.replay);
const threshold = Number(values.pct);
const market = values.market as Market;
const codes = positionals.length > 0 ? positionals : ['005930', '000660', '373220', '207940', '005380', '000270', '035420', '068270', '105560', '069500'];
if (!(threshold > 0)) throw new Error(`--pct must be a positive number, not ${values.pct}`);

const WINDOW_MS = 60_000;
/** Trades of the last minute per code: [bridge time in ms, price]. */
const windows = new Map<string, [number, number][]>();
const names = new Map<string, string>();

const client = new KrxClient(values.url, { WebSocket, ...(replay ? { replay } : {}) });
/** Whether the client closes because it was asked to (a signal) or a replay played to its end. */
let done = false;
client.on('error', (e) => console.error(`error ${e.code}: ${e.message}`));
client.on('state', (_prev, next) => {
  console.error(`connection ${next}`);
  // Otherwise the bridge refused it for good (a token not valid, say): the error above says why.
  if (next === 'closed') process.exit(done ? 0 : 1);
});
client.on('status', (s) => {
  if (s.reason === 'replay ended') done = true;
  if (s.state !== 'live') console.error(`feed ${s.channel}.${s.market} is ${s.state}${s.reason ? ` (${s.reason})` : ''}`);
});

client.on('price', (code, row, change) => {
  const price = row.trdPrc;
  if (typeof price !== 'number' || price <= 0) return;
  const now = change.ts;
  const w = windows.get(code) ?? [];
  windows.set(code, w);
  w.push([now, price]);
  while (w.length > 0 && w[0]![0] < now - WINDOW_MS) w.shift();
  const low = w.reduce((a, b) => (b[1] < a[1] ? b : a));
  const high = w.reduce((a, b) => (b[1] > a[1] ? b : a));
  const up = (price / low[1] - 1) * 100;
  const down = (price / high[1] - 1) * 100;
  const [from, pct] = up > threshold ? [low, up] : -down > threshold ? [high, down] : [undefined, 0];
  if (from === undefined) return;
  const secs = Math.round((now - from[0]) / 1000);
  const when = new Date(now).toISOString().slice(11, 19);
  const sign = pct > 0 ? '+' : '';
  console.log(
    `${when}Z ${code} ${names.get(code) ?? ''} ${sign}${pct.toFixed(2)}% in ${secs}s: ${from[1].toLocaleString('en-US')} -> ${price.toLocaleString('en-US')}`,
  );
  // The move is reported; the next one is measured from here.
  w.splice(0, w.length, [now, price]);
});

client
  .lists(market)
  .then((l) => l.isuLists.forEach((i) => names.set(i.isuSrtCd, i.isuKorAbbrv ?? i.isuKorNm ?? '')))
  .catch((e: Error) => console.error(`no names: ${e.message}`));
await client.subscribe('price', market, codes);
console.error(`watching ${codes.length} ${market} codes for moves over ${threshold}% within a minute`);

for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    done = true;
    void client.close().then(() => process.exit(0));
  });
}
