import { toDate8 } from '../client/dates.js';
import { isKrxError } from '../client/errors.js';
import { CliError } from './io.js';

/**
 * Checks of the options `tail` and `get` take, where they enter: a value
 * that is not usable is a `CliError` (exit 1) naming the option, what it
 * expects and what it got, before anything is sent. Pure.
 */

/** The longest time a timer keeps (2^31 − 1 ms, about 24.8 days), the SDK's limit too. */
const MAX_MS = 2_147_483_647;

/**
 * The whole number an option's text spells (digits only: no sign, no
 * exponent, no fraction), within `[min, max]`; `fallback` when the option
 * was not given. `expected` says what the option takes, for the message.
 */
export function intOption(
  name: string,
  text: string | undefined,
  fallback: number | undefined,
  range: { readonly min: number; readonly max: number; readonly expected: string },
): number | undefined {
  if (text === undefined) return fallback;
  const n = /^\s*\d+\s*$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n) || n < range.min || n > range.max) {
    throw new CliError(`--${name} takes ${range.expected}, got ${JSON.stringify(text)}`);
  }
  return n;
}

/** `--timeout`: a whole number of ms, 1 or more (at most a timer's longest); `fallback` (ms) when not given. */
export function timeoutOption(text: string | undefined, fallback: number): number {
  return intOption('timeout', text, fallback, { min: 1, max: MAX_MS, expected: 'a whole number of milliseconds, 1 or more (e.g. 5000)' })!;
}

/**
 * The bridge's WebSocket URL, checked: `ws://` or `wss://` (what `--url` and
 * `KRX_BRIDGE_URL` take). An `http(s)://` URL is refused with the `ws(s)://`
 * one it likely meant.
 */
export function wsUrlOption(text: string): string {
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    throw new CliError(`not a URL: ${JSON.stringify(text)} (the bridge's WebSocket, e.g. ws://localhost:8080/ws)`);
  }
  if (u.protocol === 'ws:' || u.protocol === 'wss:') return text;
  const hint =
    u.protocol === 'http:' || u.protocol === 'https:' ? `; did you mean ${u.protocol === 'https:' ? 'wss' : 'ws'}:${text.slice(u.protocol.length)}?` : '';
  throw new CliError(`not a WebSocket URL: ${JSON.stringify(text)} (expected ws:// or wss://, e.g. ws://localhost:8080/ws${hint})`);
}

/** A day option (`--from`, `--to`, `--date`): `YYYYMMDD` or `YYYY-MM-DD`, as `YYYYMMDD`; undefined when not given. */
export function dayOption(name: string, text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  try {
    return toDate8(text, `--${name}`);
  } catch (err) {
    // The SDK's message also offers a Date object; on the command line a day is text.
    if (isKrxError(err)) throw new CliError(`--${name} takes a day, YYYYMMDD or YYYY-MM-DD, got ${JSON.stringify(text)}`);
    throw err;
  }
}
