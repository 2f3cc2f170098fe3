import { parseArgs } from 'node:util';
import type { Change } from '../client/index.js';
import type { AnyRow } from '../client/rows.js';
import { CHANNELS, MARKETS, WILDCARD, type Channel, type Market } from '../protocol/constants.js';
import { BridgeSession } from './connect.js';
import { CliError, DEFAULT_URL, type CliIo } from './io.js';
import { timeoutOption } from './options.js';
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

On a terminal it shows a table that updates in place: as many topics as the
terminal has rows for, each feed's state, and the connection's while it is
down. Piped, it prints one JSON line per change: {"topic","seq","ts","row"}
(the whole row after it). It reconnects by itself and runs until interrupted;
it exits 2 when the bridge cannot be reached, or refuses it (a token not
valid, or revoked while it runs).

Options:
  --url <ws url>       the bridge's WebSocket (default $KRX_BRIDGE_URL, else ws://localhost:8080/ws)
  --token <token>      access token, when the bridge requires one (default $KRX_BRIDGE_TOKEN)
  --timeout <ms>       how long to try to connect before giving up, a whole number (default 10000)
  --json               print JSON lines even on a terminal
  -h, --help           this text
`;

/** One `subscribe` of `tail`: codes of a feed, or its wildcard alone. */
export interface TopicGroup {
  readonly channel: Channel;
  readonly market: Market;
  /** Explicit codes, or `['*']` (the protocol takes the wildcard alone in a `subscribe`). */
  readonly codes: string[];
}

/**
 * The subscriptions a list of topic arguments names, in the order given:
 * per feed, one of its codes and one of its wildcard, so
 * `quote.kospi.* quote.kospi.005930` is two subscribes of the one feed.
 */
export function parseTopics(args: readonly string[]): TopicGroup[] {
  const out = new Map<string, TopicGroup>();
  for (const a of args) {
    const [channel, market, code, extra] = a.split('.');
    if (extra !== undefined || !channel || !market || !code) throw new CliError(`not a topic: ${JSON.stringify(a)} (expected channel.market.code)`);
    if (!(CHANNELS as readonly string[]).includes(channel)) throw new CliError(`unknown channel ${JSON.stringify(channel)} (one of ${CHANNELS.join(', ')})`);
    if (!(MARKETS as readonly string[]).includes(market)) throw new CliError(`unknown market ${JSON.stringify(market)} (one of ${MARKETS.join(', ')})`);
    const key = `${channel}.${market}${code === WILDCARD ? '.*' : ''}`;
    let g = out.get(key);
    if (!g) out.set(key, (g = { channel: channel as Channel, market: market as Market, codes: [] }));
    if (!g.codes.includes(code)) g.codes.push(code);
  }
  return [...out.values()];
}

/**
 * Runs `tail`; resolves with 0 when it is interrupted (SIGINT, SIGTERM);
 * rejects with a `CliError` (exit 2) when the bridge cannot be reached, or
 * refuses the client for good while it runs (a revoked token, say).
 */
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
  const groups = parseTopics(positionals);
  const timeoutMs = timeoutOption(values.timeout, 10_000);
  const session = await BridgeSession.open({
    url: values.url ?? io.env.KRX_BRIDGE_URL ?? DEFAULT_URL,
    token: values.token ?? io.env.KRX_BRIDGE_TOKEN,
    timeoutMs,
  });
  const client = session.client;
  // Watched from now: the bridge may refuse the client for good while it subscribes, or at any time after.
  const ended = session.ended();
  const table = io.isTTY && !values.json ? new Table(io) : undefined;
  client.on('update', (topic: string, row: AnyRow, change: Change) => {
    if (table) table.update(topic, row, change);
    else io.out(`${JSON.stringify({ topic, seq: change.seq, ts: change.ts, row })}\n`);
  });
  if (table) {
    client.on('status', (s) => table.status(`${s.channel}.${s.market}`, s.state, s.reason));
    client.on('state', (_prev, next) => table.connection(next, session.problem));
    client.on('reconnecting', (attempt) => table.connection(client.state, `${session.problem}; attempt ${attempt}`));
  }
  try {
    for (const g of groups) {
      try {
        await client.subscribe(g.channel, g.market, g.codes);
      } catch (err) {
        throw new CliError(`cannot subscribe ${g.channel}.${g.market} ${g.codes.join(',')}: ${(err as Error).message}`, 2);
      }
    }
    const why = await Promise.race([io.interrupted().then(() => undefined), ended]);
    if (why !== undefined) throw new CliError(why, 2);
    return 0;
  } finally {
    table?.close();
    await session.close();
  }
}
