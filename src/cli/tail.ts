import { connect } from 'node:net';
import { parseArgs } from 'node:util';
import WebSocket from 'ws';
import { KrxClient, isKrxError } from '../client/index.js';
import type { Change } from '../client/index.js';
import type { AnyRow } from '../client/rows.js';
import { CHANNELS, MARKETS, type Channel, type Market } from '../protocol/constants.js';
import { CliError, type CliIo } from './io.js';
import { Table } from './table.js';

/**
 * `krx-bridge tail <topic>…`: follows topics of a running bridge through the
 * SDK. On a terminal, a table that updates in place; piped, one JSON line
 * per change: `{"topic","seq","ts","row"}`, the whole row after the change.
 */

/** The help text of `tail`. */
export const TAIL_HELP = `Usage: krx-bridge tail <topic>... [options]

Follows topics of a running bridge. A topic is channel.market.code, or
channel.market.* for a whole market (quote, ohlc, top, aht), e.g.
  krx-bridge tail price.kospi.005930 quote.kosdaq.*

On a terminal it shows a table that updates in place; piped, it prints one
JSON line per change: {"topic","seq","ts","row"} (the whole row after it).

Options:
  --url <ws url>       the bridge's WebSocket (default $KRX_BRIDGE_URL, else ws://localhost:8080/ws)
  --token <token>      access token, when the bridge requires one (default $KRX_BRIDGE_TOKEN)
  --timeout <ms>       how long to try to connect before giving up (default 10000)
  --json               print JSON lines even on a terminal
  -h, --help           this text
`;

/** The feeds and codes a list of topic arguments names. */
export function parseTopics(args: readonly string[]): Map<string, { channel: Channel; market: Market; codes: string[] }> {
  const out = new Map<string, { channel: Channel; market: Market; codes: string[] }>();
  for (const a of args) {
    const [channel, market, code, extra] = a.split('.');
    if (extra !== undefined || !channel || !market || !code) throw new CliError(`not a topic: ${JSON.stringify(a)} (expected channel.market.code)`);
    if (!(CHANNELS as readonly string[]).includes(channel)) throw new CliError(`unknown channel ${JSON.stringify(channel)} (one of ${CHANNELS.join(', ')})`);
    if (!(MARKETS as readonly string[]).includes(market)) throw new CliError(`unknown market ${JSON.stringify(market)} (one of ${MARKETS.join(', ')})`);
    const key = `${channel}.${market}`;
    let f = out.get(key);
    if (!f) out.set(key, (f = { channel: channel as Channel, market: market as Market, codes: [] }));
    if (!f.codes.includes(code)) f.codes.push(code);
  }
  return out;
}

/** Why a WebSocket URL does not answer: the TCP error (e.g. ECONNREFUSED), else what the client saw. */
export async function whyNot(url: string, seen: string): Promise<string> {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return 'not a WebSocket URL';
  }
  const port = Number(u.port || (u.protocol === 'wss:' ? 443 : 80));
  const tcp = await new Promise<string | undefined>((resolve) => {
    const sock = connect({ host: u.hostname, port, timeout: 2000 });
    sock.once('connect', () => {
      sock.destroy();
      resolve(undefined);
    });
    sock.once('timeout', () => {
      sock.destroy();
      resolve('no answer (timed out)');
    });
    sock.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
  if (tcp !== undefined) return tcp === 'ECONNREFUSED' ? 'connection refused (is the bridge running there?)' : tcp;
  return seen && seen !== 'closed 1006' ? seen : 'the server there does not speak the bridge protocol';
}

/** Runs `tail`; resolves when it is interrupted (SIGINT) or the bridge goes away for good. */
export async function tail(argv: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      url: { type: 'string' },
      token: { type: 'string' },
      timeout: { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    io.out(TAIL_HELP);
    return 0;
  }
  if (positionals.length === 0) throw new CliError('name at least one topic, e.g. krx-bridge tail price.kospi.005930');
  const feeds = parseTopics(positionals);
  const url = values.url ?? io.env.KRX_BRIDGE_URL ?? 'ws://localhost:8080/ws';
  const token = values.token ?? io.env.KRX_BRIDGE_TOKEN;
  const timeoutMs = Number(values.timeout ?? 10_000);
  const client = new KrxClient(url, { WebSocket: WebSocket as never, connectTimeoutMs: timeoutMs, ...(token ? { token } : {}) });
  let lastError = '';
  client.on('disconnect', (code, reason) => (lastError = reason || `closed ${code}`));
  client.on('error', (e) => (lastError = e.message));
  try {
    await client.ready({ timeoutMs });
  } catch (err) {
    await client.close();
    // A refusal no retry changes (a token not valid, say) closes the client at once with the bridge's reason; else the time ran out.
    const refused = isKrxError(err) && err.code !== 'timeout' ? err.message : undefined;
    throw new CliError(`cannot connect to ${url}: ${refused ?? (await whyNot(url, lastError))}`, 2);
  }
  const table = io.isTTY && !values.json ? new Table(io) : undefined;
  client.on('update', (topic: string, row: AnyRow, change: Change) => {
    if (table) table.update(topic, row, change);
    else io.out(`${JSON.stringify({ topic, seq: change.seq, ts: change.ts, row })}\n`);
  });
  if (table) client.on('status', (s) => table.status(`${s.channel}.${s.market}`, s.state, s.reason));
  for (const f of feeds.values()) {
    try {
      await client.subscribe(f.channel, f.market, f.codes);
    } catch (err) {
      await client.close();
      throw new CliError(`cannot subscribe ${f.channel}.${f.market} ${f.codes.join(',')}: ${(err as Error).message}`, 2);
    }
  }
  await io.interrupted();
  await client.close();
  return 0;
}
