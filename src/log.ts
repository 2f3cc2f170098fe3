import { pino, type DestinationStream, type Logger, type LevelWithSilent } from 'pino';
import { PinoPretty } from 'pino-pretty';

/** The project's logger type (pino). */
export type { Logger };

/** Paths pino removes from every log object, wherever a key or token may sit. */
export const REDACT_PATHS: readonly string[] = [
  'apikey',
  'apiKey',
  'upstreamApiKey',
  'headers.apikey',
  'headers.authorization',
  'req.headers.apikey',
  'req.headers.authorization',
  'request.headers.apikey',
  '*.apikey',
  '*.apiKey',
  '*.upstreamApiKey',
  '*.headers.apikey',
  '*.headers.authorization',
  'token',
  '*.token',
];

/** Options of `createLogger`. */
export interface LoggerOptions {
  /** Minimum level; default `info`. */
  readonly level?: LevelWithSilent;
  /**
   * Secret values (the upstream API key, tokens) that must never appear in a
   * log line. Any occurrence in the serialised line is replaced, whatever
   * field or message it is in.
   */
  readonly secrets?: readonly string[];
  /** Where lines go; default stdout. */
  readonly destination?: DestinationStream;
  /** Base bindings of every line (e.g. `{ component: 'bridge' }`). */
  readonly base?: Record<string, unknown>;
  /**
   * `json`: one JSON object a line (for log shippers); `pretty`: readable
   * lines through pino's own pretty printer, in colour; `auto` (default):
   * pretty when standard output is a terminal, JSON when it is piped.
   * Ignored when `destination` is given.
   */
  readonly format?: LogFormat;
}

/** How log lines are written. */
export type LogFormat = 'auto' | 'json' | 'pretty';

/** Whether `format` means pretty lines on this process's standard output. */
export function prettyLogs(format: LogFormat = 'auto', isTTY = process.stdout.isTTY === true): boolean {
  return format === 'pretty' || (format === 'auto' && isTTY);
}

/** Replaces each secret in `line` with `[REDACTED]`. Secrets shorter than 4 characters are ignored. */
export function scrubSecrets(line: string, secrets: readonly string[]): string {
  let out = line;
  for (const s of secrets) {
    if (s.length < 4) continue;
    if (out.includes(s)) out = out.split(s).join('[REDACTED]');
    const json = JSON.stringify(s).slice(1, -1);
    if (json !== s && out.includes(json)) out = out.split(json).join('[REDACTED]');
  }
  return out;
}

/**
 * A pino logger that redacts known secret paths and scrubs the configured
 * secret values from every serialised line.
 */
export function createLogger(opts: LoggerOptions = {}): Logger {
  const secrets = (opts.secrets ?? []).filter((s) => s.length >= 4);
  return pino(
    {
      level: opts.level ?? 'info',
      base: opts.base ?? null,
      redact: { paths: [...REDACT_PATHS], censor: '[REDACTED]' },
      hooks: secrets.length ? { streamWrite: (line: string) => scrubSecrets(line, secrets) } : {},
    },
    opts.destination ?? (prettyLogs(opts.format) ? prettyStream() : pino.destination({ dest: 1, sync: false })),
  );
}

/**
 * Pretty lines on standard output. The secrets are scrubbed before a line
 * gets here (pino's `streamWrite` hook runs on the JSON line), so the pretty
 * printer never sees them.
 */
function prettyStream(): DestinationStream {
  return PinoPretty({
    colorize: process.stdout.isTTY === true,
    translateTime: 'SYS:HH:MM:ss',
    ignore: 'pid,hostname,app',
    singleLine: true,
    destination: 1,
    sync: true,
  });
}

/** How long `exitAfterLogs` lets the log lines in flight finish, ms. */
const LOG_SETTLE_MS = 100;

/**
 * Ends the process with `code` once the log lines still being written have
 * had a moment to be written or to fail. Lines are written asynchronously; a
 * line in flight to a pipe whose reader went away (`… | head`) fails at
 * once, and pino then stops writing. Exiting while it is still pending
 * leaves pino's flush at exit retrying it forever (sonic-boom retries any
 * failed write there, not only EAGAIN), and the process never ends.
 */
export function exitAfterLogs(code: number): void {
  setTimeout(() => process.exit(code), LOG_SETTLE_MS);
}

/** A logger that writes nothing (tests, library use without logging). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
