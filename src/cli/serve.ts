import { bridgeLogger, createBridge, type Bridge } from '../bridge/bridge.js';
import { Metrics } from '../metrics/metrics.js';
import { ConfigError, SETTINGS, flagOf, loadConfig } from '../config/config.js';
import { installProcessGuard } from '../guard.js';
import { CliError, type CliIo } from './io.js';

/**
 * `krx-bridge` / `krx-bridge serve`: the bridge, configured from the
 * environment and flags mirroring it (`PORT` = `--port`); drains on
 * SIGTERM/SIGINT (clients get close 1001; exit 0), re-reads the token file
 * on SIGHUP.
 */

/** The help text of `serve`: every setting, as a flag, with its variable and default. */
export function serveHelp(): string {
  const rows = Object.entries(SETTINGS).map(([name, s]) => {
    const d = (s.schema as { _zod?: { def?: { defaultValue?: unknown } } })._zod?.def?.defaultValue;
    const def = d === undefined ? '' : ` (default ${Array.isArray(d) ? d.join(',') : String(d)})`;
    return `  --${flagOf(name)} <value>\n      ${s.text} [${name}]${def}`;
  });
  return `Usage: krx-bridge [serve] [options]

Runs the bridge: the demo page, the WebSocket at /ws and the HTTP API, polling
the upstream (UPSTREAM_URL), or its built-in simulator when none is set.
Every option is also an environment variable (shown in brackets); a flag wins.

Options:
${rows.join('\n')}
  -h, --help
      this text
`;
}

/** Runs the bridge until a signal stops it; resolves with the exit code. */
export async function serve(argv: readonly string[], io: CliIo): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    io.out(serveHelp());
    return 0;
  }
  let config;
  try {
    config = loadConfig(io.env, [...argv]);
  } catch (err) {
    if (err instanceof ConfigError) throw new CliError(err.message);
    throw err;
  }
  const logger = bridgeLogger(config);
  const metrics = new Metrics();
  let bridge: Bridge | undefined;
  installProcessGuard({ logger, count: (kind) => metrics.processErrors.inc({ kind }), stop: () => bridge?.stop() ?? Promise.resolve() });
  const stop = (signal: string): Promise<number> => {
    logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), 15_000);
    force.unref();
    return bridge!.stop().then(
      () => 0,
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        return 1;
      },
    );
  };
  let done: (code: number) => void = () => undefined;
  const stopped = new Promise<number>((resolve) => (done = resolve));
  // A signal during the start is acted on once the bridge is up (a half-started bridge has nothing to drain).
  let signalled: string | undefined;
  const onSignal = (signal: string): void => {
    if (bridge) void stop(signal).then(done);
    else signalled ??= signal;
  };
  process.once('SIGTERM', () => onSignal('SIGTERM'));
  process.once('SIGINT', () => onSignal('SIGINT'));
  try {
    bridge = await createBridge(config, { logger, metrics });
    // After the start: a SIGHUP during it would find no token file read yet.
    process.on('SIGHUP', () => void bridge?.reloadTokens());
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const line = e.code === 'EADDRINUSE' ? `port ${config.PORT} is already in use (set PORT or --port)` : e.message;
    throw new CliError(`cannot start: ${line}`);
  }
  if (signalled !== undefined) onSignal(signalled);
  return stopped;
}
