import { parseArgs } from 'node:util';
import WebSocket from 'ws';
import { KrxClient } from '../client/index.js';
import { RESOURCES, type Resource } from '../protocol/constants.js';
import { CliError, type CliIo } from './io.js';
import { whyNot } from './tail.js';

/** `krx-bridge get <resource> <market> [code]`: one lookup through a running bridge, printed as JSON. */

/** The help text of `get`. */
export const GET_HELP = `Usage: krx-bridge get <resource> <market> [code] [options]

One lookup through a running bridge, printed as JSON, e.g.
  krx-bridge get history kospi 005930 --period D --count 3
  krx-bridge get master kosdaq 247540
  krx-bridge get lists konex

Resources: ${RESOURCES.join(', ')}

Options (the resource's parameters, docs/PROTOCOL.md §4.1):
  --period <D|W|M>     history: bar period
  --count <n>          history, foreignhistory: most rows (1-100)
  --from <YYYYMMDD>    first day (history, shortsell, foreignhistory); for intraday a time HHMM
  --to <YYYYMMDD>      last day; for intraday a time HHMM
  --date <YYYYMMDD>    intraday: the day
  --interval <10|60|600>  intraday: bar length, seconds
  --fields <a,b,...>   selectivemaster: the fields
  --url <ws url>       the bridge's WebSocket (default $KRX_BRIDGE_URL, else ws://localhost:8080/ws)
  --token <token>      access token (default $KRX_BRIDGE_TOKEN)
  --timeout <ms>       time allowed for the answer (default 10000)
  -h, --help           this text
`;

/** Runs `get`; prints the result's data. */
export async function get(argv: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      period: { type: 'string' },
      count: { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
      date: { type: 'string' },
      interval: { type: 'string' },
      fields: { type: 'string' },
      url: { type: 'string' },
      token: { type: 'string' },
      timeout: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    io.out(GET_HELP);
    return 0;
  }
  const [resource, market, code] = positionals;
  if (!resource || !market) throw new CliError('usage: krx-bridge get <resource> <market> [code] (see --help)');
  if (!(RESOURCES as readonly string[]).includes(resource)) throw new CliError(`unknown resource ${JSON.stringify(resource)} (one of ${RESOURCES.join(', ')})`);
  const params: Record<string, unknown> = {};
  if (values.period !== undefined) params.period = values.period;
  if (values.count !== undefined) params.count = Number(values.count);
  if (values.from !== undefined) params.from = values.from;
  if (values.to !== undefined) params.to = values.to;
  if (values.date !== undefined) params.date = values.date;
  if (values.interval !== undefined) params.interval = Number(values.interval);
  if (values.fields !== undefined) params.fields = values.fields.split(',');
  const url = values.url ?? io.env.KRX_BRIDGE_URL ?? 'ws://localhost:8080/ws';
  const token = values.token ?? io.env.KRX_BRIDGE_TOKEN;
  const timeoutMs = Number(values.timeout ?? 10_000);
  const client = new KrxClient(url, { WebSocket: WebSocket as never, connectTimeoutMs: timeoutMs, requestTimeoutMs: timeoutMs, ...(token ? { token } : {}) });
  try {
    const data = await client.get(resource as Resource, market as never, code, params);
    io.out(`${JSON.stringify(data, null, 2)}\n`);
    return 0;
  } catch (err) {
    const e = err as { code?: string; message?: string };
    if (e.code === 'timeout' || e.code === 'not_connected') throw new CliError(`cannot connect to ${url}: ${await whyNot(url, e.message ?? '')}`, 2);
    throw new CliError(`${e.code ? `${e.code}: ` : ''}${e.message ?? String(err)}`, 2);
  } finally {
    await client.close();
  }
}
