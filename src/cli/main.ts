import { parseArgs } from 'node:util';
import { packageVersion } from '../version.js';
import { runSimulator } from '../sim/run.js';
import { SimEnv } from '../sim/env.js';
import { flagOf } from '../config/config.js';
import { get } from './get.js';
import { CliError, processIo, type CliIo } from './io.js';
import { serve } from './serve.js';
import { tail } from './tail.js';

/**
 * The `krx-bridge` command: `serve` (the default), `sim`, `tail`, `get`,
 * `--help`, `--version`. A usage error prints one line on standard error
 * and exits 1; a bridge that cannot be reached, 2.
 */

/** The top-level help. */
export const HELP = `Usage: krx-bridge [command] [options]

Commands:
  serve            run the bridge (the default; the built-in simulator when no UPSTREAM_URL is set)
  sim              run the upstream simulator alone
  tail <topic>...  follow topics of a running bridge, e.g. krx-bridge tail price.kospi.005930 quote.kosdaq.*
  get <resource> <market> [code]
                   one lookup through a running bridge, printed as JSON

krx-bridge <command> --help lists the command's options.
  -v, --version    the version
  -h, --help       this text
`;

/** The help of `sim`: the simulator's settings as flags. */
export function simHelp(): string {
  // As serve's help: the flag, then what it sets, its variable and its default (docs/SIMULATOR.md has the same table).
  const rows = Object.entries(SimEnv.shape).map(([name, schema]) => {
    const dflt = (schema as { def?: { defaultValue?: unknown } }).def?.defaultValue;
    const shown = typeof dflt === 'string' || typeof dflt === 'number' ? ` (default ${String(dflt)})` : '';
    return `  --${flagOf(name)} <value>\n      ${schema.description ?? ''} [${name}]${shown}`;
  });
  return `Usage: krx-bridge sim [options]

Runs the simulator of the upstream API alone (a real HTTP server with the
upstream's endpoints, envelopes, quirks, budget headers and faults).
Every option is also an environment variable (in brackets).

Options:
${rows.join('\n')}
  -h, --help   this text
`;
}

async function sim(argv: readonly string[], io: CliIo): Promise<number> {
  const names = Object.keys(SimEnv.shape);
  const { values } = parseArgs({
    args: [...argv],
    options: { ...Object.fromEntries(names.map((n) => [flagOf(n), { type: 'string' as const }])), help: { type: 'boolean', short: 'h' } },
  });
  if (values.help) {
    io.out(simHelp());
    return 0;
  }
  const env = { ...io.env } as NodeJS.ProcessEnv;
  for (const n of names) {
    const v = (values as Record<string, unknown>)[flagOf(n)];
    if (typeof v === 'string') env[n] = v;
  }
  await runSimulator(env);
  // The simulator runs until its own signal handlers end the process.
  await new Promise(() => undefined);
  return 0;
}

/** Runs the command line `argv` (without node and the script); resolves with the exit code. */
export async function run(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  const [first, ...rest] = argv;
  try {
    switch (first) {
      case undefined:
        return await serve([], io);
      case '-h':
      case '--help':
      case 'help':
        io.out(HELP);
        return 0;
      case '-v':
      case '--version':
        io.out(`${packageVersion()}\n`);
        return 0;
      case 'serve':
        return await serve(rest, io);
      case 'sim':
        return await sim(rest, io);
      case 'tail':
        return await tail(rest, io);
      case 'get':
        return await get(rest, io);
      default:
        // `krx-bridge --port 9000`: options of serve.
        if (first.startsWith('-')) return await serve(argv, io);
        throw new CliError(`unknown command ${JSON.stringify(first)} (serve, sim, tail, get; --help)`);
    }
  } catch (err) {
    if (err instanceof CliError) {
      io.err(`krx-bridge: ${err.message}\n`);
      return err.exitCode;
    }
    if ((err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      io.err(`krx-bridge: ${(err as Error).message}\n`);
      return 1;
    }
    throw err;
  }
}
