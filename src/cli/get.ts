import { parseArgs } from 'node:util';
import { RESOURCES, type Resource } from '../protocol/constants.js';
import { BridgeSession, whyNot } from './connect.js';
import { CliError, DEFAULT_URL, type CliIo } from './io.js';
import { dayOption, intOption, timeoutOption } from './options.js';

/** `krx-bridge get <resource> <market> [code]`: one lookup through a running bridge, printed as JSON. */

/** The help text of `get`. */
export const GET_HELP = `Usage: krx-bridge get <resource> <market> [code] [options]

One lookup through a running bridge, printed as JSON, e.g.
  krx-bridge get history kospi 005930 --period D --count 3
  krx-bridge get history kospi 005930 --from 2026-11-02 --to 2026-11-06
  krx-bridge get master kosdaq 247540
  krx-bridge get lists konex

Resources: ${RESOURCES.join(', ')}

Options (the resource's parameters, docs/PROTOCOL.md §4.1; a day is YYYYMMDD or YYYY-MM-DD):
  --period <D|W|M>     history: bar period
  --count <n>          history, shortsell, foreignhistory: most rows (1-100)
  --from <day>         first day (history, shortsell, foreignhistory); for intraday a time HHMM
  --to <day>           last day; for intraday a time HHMM
  --date <day>         intraday: the day
  --interval <10|60|600>  intraday: bar length, seconds
  --fields <a,b,...>   selectivemaster: the fields
  --url <ws url>       the bridge's WebSocket (default $KRX_BRIDGE_URL, else ws://localhost:8080/ws)
  --token <token>      access token (default $KRX_BRIDGE_TOKEN)
  --timeout <ms>       time allowed to connect, then for the answer, a whole number (default 10000)
  -h, --help           this text
`;

const INTERVALS: readonly number[] = [10, 60, 600];

/** The resource's parameters from the options, checked where the CLI can say more than the bridge would. */
function paramsOf(resource: Resource, values: Record<string, string | boolean | undefined>): Record<string, unknown> {
  const text = (name: string) => values[name] as string | undefined;
  const params: Record<string, unknown> = {};
  if (text('period') !== undefined) params.period = text('period');
  params.count = intOption('count', text('count'), undefined, { min: 1, max: 100, expected: 'a whole number from 1 to 100' });
  const interval = intOption('interval', text('interval'), undefined, { min: 0, max: Number.MAX_SAFE_INTEGER, expected: '10, 60 or 600 (seconds)' });
  if (interval !== undefined && !INTERVALS.includes(interval))
    throw new CliError(`--interval takes 10, 60 or 600 (seconds), got ${JSON.stringify(text('interval'))}`);
  params.interval = interval;
  // intraday's from and to are times of the day (HHMM); everywhere else they are days.
  const span = resource === 'intraday' ? (name: string) => text(name) : (name: string) => dayOption(name, text(name));
  params.from = span('from');
  params.to = span('to');
  params.date = dayOption('date', text('date'));
  if (text('fields') !== undefined) params.fields = text('fields')!.split(',');
  for (const k of Object.keys(params)) if (params[k] === undefined) delete params[k];
  return params;
}

/** Runs `get`; prints the result's data. A usage error exits 1; a bridge that cannot be reached, refuses, or answers with an error, 2. */
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
  const [resource, market, code, ...extra] = positionals;
  if (!resource || !market) throw new CliError('usage: krx-bridge get <resource> <market> [code] (see --help)');
  if (extra.length > 0)
    throw new CliError(
      `unexpected argument${extra.length > 1 ? 's' : ''} ${extra.map((a) => JSON.stringify(a)).join(' ')} (usage: krx-bridge get <resource> <market> [code]; see --help)`,
    );
  if (!(RESOURCES as readonly string[]).includes(resource)) throw new CliError(`unknown resource ${JSON.stringify(resource)} (one of ${RESOURCES.join(', ')})`);
  const params = paramsOf(resource as Resource, values);
  const timeoutMs = timeoutOption(values.timeout, 10_000);
  const session = await BridgeSession.open({
    url: values.url ?? io.env.KRX_BRIDGE_URL ?? DEFAULT_URL,
    token: values.token ?? io.env.KRX_BRIDGE_TOKEN,
    timeoutMs,
  });
  try {
    const data = await session.client.get(resource as Resource, market as never, code, params);
    io.out(`${JSON.stringify(data, null, 2)}\n`);
    return 0;
  } catch (err) {
    const e = err as { code?: string; message?: string };
    if (e.code === 'timeout') throw new CliError(`no answer from ${session.url} within ${timeoutMs} ms`, 2);
    // Connected, then lost and not back within the time.
    if (e.code === 'not_connected') throw new CliError(`cannot connect to ${session.url}: ${await whyNot(session.url, session.problem)}`, 2);
    throw new CliError(`${e.code ? `${e.code}: ` : ''}${e.message ?? String(err)}`, 2);
  } finally {
    await session.close();
  }
}
