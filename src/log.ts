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

/**
 * Shortest start of a secret that `scrubSecrets` removes where a text was
 * cut short. Shorter ones are left: too common to tell from other text.
 */
export const MIN_SECRET_PREFIX = 8;

/** Marks that end a text cut short (`...`, `…`). */
const CUT_MARKS = ['...', '\u2026'];

/**
 * Replaces each secret in `line` with `[REDACTED]`, and each start of a
 * secret (its first `MIN_SECRET_PREFIX` characters or more) that ends
 * `line` or stands just before a cut mark (`...`, `…`): what is left of a
 * secret in a text that was cut short. Both the secret and its JSON-escaped
 * form are matched. Secrets shorter than 4 characters are ignored.
 *
 * A text should be scrubbed before it is cut (see `cutScrubbed`); the
 * prefix rule is a second line of defence for texts cut elsewhere.
 */
export function scrubSecrets(line: string, secrets: readonly string[]): string {
  let out = line;
  for (const s of secrets) {
    if (s.length < 4) continue;
    const json = JSON.stringify(s).slice(1, -1);
    for (const form of json === s ? [s] : [s, json]) {
      if (out.includes(form)) out = out.split(form).join('[REDACTED]');
      out = scrubCutPrefix(out, form);
    }
  }
  return out;
}

/** `line` with the longest start of `secret` (at least `MIN_SECRET_PREFIX` characters) that ends it or precedes a cut mark replaced. */
function scrubCutPrefix(line: string, secret: string): string {
  if (secret.length <= MIN_SECRET_PREFIX) return line;
  const head = secret.slice(0, MIN_SECRET_PREFIX);
  if (!line.includes(head)) return line;
  const ends = [line.length];
  for (const mark of CUT_MARKS) {
    for (let i = line.indexOf(mark); i >= 0; i = line.indexOf(mark, i + 1)) ends.push(i);
  }
  let out = line;
  // From the last end to the first, so that earlier positions stay valid.
  for (const end of [...new Set(ends)].sort((a, b) => b - a)) {
    for (let n = Math.min(secret.length - 1, end); n >= MIN_SECRET_PREFIX; n--) {
      if (out.startsWith(secret.slice(0, n), end - n)) {
        out = `${out.slice(0, end - n)}[REDACTED]${out.slice(end)}`;
        break;
      }
    }
  }
  return out;
}

/**
 * `text` with `secrets` scrubbed, then cut to at most `max` characters
 * (ending in `...` when cut), then scrubbed again of any start of a secret
 * the cut left at its end. Scrubbing first means that a secret straddling
 * the cut is matched whole. The result is at most `max` characters long
 * (`max` at least 4).
 */
export function cutScrubbed(text: string, max: number, secrets: readonly string[] = []): string {
  const scrubbed = scrubSecrets(text, secrets);
  if (scrubbed.length <= max) return scrubbed;
  const keep = Math.max(1, max - 3);
  // A start of a secret scrubbed at the end may make the head longer again: cut it back (into "[REDACTED]" at worst).
  return `${scrubSecrets(scrubbed.slice(0, keep), secrets).slice(0, keep)}...`;
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
