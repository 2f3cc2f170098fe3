import { z } from 'zod';
import { CHANNELS, CLIENT_OPS, ClientMsg, GET_MARKETS, LIST_CHANNELS, MARKETS, STOCK_CODE, WILDCARD } from '../protocol/index.js';
import type { Channel, Market } from '../protocol/index.js';
import { feedOf, topicOf } from '../protocol/topics.js';
import { issuesText } from '../protocol/issues.js';
import { wireError, type WireError } from '../protocol/errors.js';
import { type RequestId } from '../protocol/messages.js';
import { isIndexCodeOf } from '../lookups/resources.js';

/**
 * Parsing of client frames and validation of subscription requests. Pure
 * functions: a bad request becomes a wire error value, never an exception.
 * See docs/PROTOCOL.md §Client messages.
 */

/** A parsed client frame: the message, or the error to answer with (and the id, if readable). */
export type Parsed = { ok: true; msg: ClientMsg } | { ok: false; error: WireError; id?: RequestId };

const OP_SET: ReadonlySet<string> = new Set(CLIENT_OPS);
const CHANNEL_SET: ReadonlySet<string> = new Set(CHANNELS);
const MARKET_SET: ReadonlySet<string> = new Set(MARKETS);
/** Markets `get` answers for but nothing streams (KONEX: its symbol list only). */
const GET_ONLY_MARKETS: ReadonlySet<string> = new Set(GET_MARKETS.filter((m) => !MARKET_SET.has(m)));
const LIST_SET: ReadonlySet<string> = new Set(LIST_CHANNELS);
const Id = z.union([z.number().int(), z.string().max(64)]);

function readId(raw: unknown): RequestId | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const r = Id.safeParse((raw as { id?: unknown }).id);
  return r.success ? r.data : undefined;
}

/**
 * Parses one text frame: bad JSON or a schema mismatch is `bad_request`,
 * an `op` that is not a known one is `unknown_op`.
 */
export function parseClientFrame(text: string): Parsed {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { ok: false, error: wireError('bad_request', 'the frame is not valid JSON') };
  }
  const id = readId(raw);
  const withId = (error: WireError): Parsed => (id === undefined ? { ok: false, error } : { ok: false, error, id });
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return withId(wireError('bad_request', 'a client message must be a JSON object'));
  }
  const op = (raw as { op?: unknown }).op;
  if (typeof op === 'string' && !OP_SET.has(op)) {
    return withId(wireError('unknown_op', `unknown op: ${JSON.stringify(op.slice(0, 32))}`));
  }
  const r = ClientMsg.safeParse(raw);
  if (!r.success) return withId(wireError('bad_request', issuesText(r.error)));
  return { ok: true, msg: r.data };
}

/** Bytes of a frame `peekRequestId` reads structurally: its first few hundred. */
export const PEEK_BYTES = 512;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

function isSpace(c: number | undefined): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function skipSpace(b: Buffer, i: number, end: number): number {
  while (i < end && isSpace(b[i])) i++;
  return i;
}

/** The index of the quote closing the string opening at `i`, or -1 when it does not close before `end`. */
function stringEnd(b: Buffer, i: number, end: number): number {
  for (let j = i + 1; j < end; j++) {
    const c = b[j];
    if (c === BACKSLASH) j++;
    else if (c === QUOTE) return j;
  }
  return -1;
}

/** Whether the string token `b[i..close]` (quotes included) is the key `id`, written plainly or with escapes. */
function isIdKey(b: Buffer, i: number, close: number): boolean {
  if (close === i + 3) return b[i + 1] === 0x69 && b[i + 2] === 0x64;
  // Another plain key is not `id`; one with escapes (`"\u0069d"`) is decoded.
  let escaped = false;
  for (let j = i + 1; j < close && !escaped; j++) escaped = b[j] === BACKSLASH;
  if (!escaped) return false;
  try {
    return JSON.parse(b.toString('utf8', i, close + 1)) === 'id';
  } catch {
    return false;
  }
}

/**
 * The value at `v` if it is a request id (a number or a string, as
 * `RequestId` takes them) that ends before `end`, with the index after it;
 * undefined otherwise (another type, malformed, or cut by `end`).
 */
function idValueAt(b: Buffer, v: number, end: number): { id: RequestId; next: number } | undefined {
  let raw: unknown;
  let next: number;
  if (b[v] === QUOTE) {
    const close = stringEnd(b, v, end);
    if (close < 0) return undefined;
    try {
      raw = JSON.parse(b.toString('utf8', v, close + 1));
    } catch {
      return undefined;
    }
    next = close + 1;
  } else {
    next = v;
    while (next < end && !isSpace(b[next]) && b[next] !== COMMA && b[next] !== 0x7d && b[next] !== 0x5d) next++;
    // A number running to the end of what is read may go on past it.
    if (next >= end) return undefined;
    const text = b.toString('latin1', v, next);
    if (!JSON_NUMBER.test(text)) return undefined;
    raw = Number(text);
  }
  const r = Id.safeParse(raw);
  return r.success ? { id: r.data, next } : undefined;
}

/**
 * The `id` of a client frame read without parsing it, for the refusal of a
 * frame over the rate limit (refused before it is parsed, so a flood costs
 * no parse). Only the first `PEEK_BYTES` are read token by token, tracking
 * strings and nesting, for a top-level key `id` with a number or string
 * value as `RequestId` takes it; the rest of a longer frame is only
 * searched (natively) for anything that could be another `id` key. Returns
 * undefined whenever the answer is not certain: not an object, the id's
 * value not a valid id or cut off, `id` given twice, or the unread rest
 * holding `"id"` or a `\u` escape (which could spell one). A frame that
 * `parseClientFrame` would find valid gets the id it would read, or none.
 */
export function peekRequestId(b: Buffer): RequestId | undefined {
  const end = Math.min(b.length, PEEK_BYTES);
  let i = skipSpace(b, 0, end);
  if (b[i] !== 0x7b) return undefined;
  i++;
  let depth = 1;
  /** At depth 1, whether the next string is a key. */
  let keyNext = true;
  let found: RequestId | undefined;
  let seen = false;
  let closed = false;
  while (i < end) {
    const c = b[i]!;
    if (c === QUOTE) {
      const close = stringEnd(b, i, end);
      if (close < 0) break;
      if (depth === 1 && keyNext) {
        keyNext = false;
        const key = isIdKey(b, i, close);
        const colon = skipSpace(b, close + 1, end);
        if (colon >= end) break;
        if (b[colon] !== COLON) return undefined;
        if (key) {
          if (seen) return undefined;
          seen = true;
          const v = idValueAt(b, skipSpace(b, colon + 1, end), end);
          if (v === undefined) return undefined;
          found = v.id;
          i = v.next;
        } else i = colon + 1;
        continue;
      }
      i = close + 1;
      continue;
    }
    if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) {
      if (--depth === 0) {
        closed = true;
        break;
      }
    } else if (c === COMMA && depth === 1) keyNext = true;
    i++;
  }
  if (!seen) return undefined;
  // The object goes on past what was read: certain only if the rest cannot hold another `id` key.
  if (!closed && (b.indexOf('"id"', i) >= 0 || b.indexOf('\\u', i) >= 0)) return undefined;
  return found;
}

/** The refusal of a client message over the connection's message rate (`/ws` and `/ws/replay` alike). */
export function rateLimited(perSecond: number): WireError {
  return wireError('rate_limited', `at most ${perSecond} messages per second`);
}

/** A validated subscription target: explicit codes of a feed, or its wildcard. */
export interface Target {
  readonly channel: Channel;
  readonly market: Market;
  /** `channel.market`. */
  readonly feed: string;
  /** True for `codes: ["*"]`. */
  readonly wildcard: boolean;
  /** Distinct codes, in request order (empty for a wildcard). */
  readonly codes: readonly string[];
  /** Topics of `codes`, in the same order. */
  readonly topics: readonly string[];
}

/** Either a target or the error refusing it. */
export type TargetResult = { ok: true; value: Target } | { ok: false; error: WireError };

/** Checks the channel and market of a request. */
export function checkFeed(channel: string, market: string): WireError | undefined {
  if (!CHANNEL_SET.has(channel)) return wireError('invalid_channel', `unknown channel: ${JSON.stringify(channel)}`);
  if (GET_ONLY_MARKETS.has(market)) return wireError('invalid_market', `${market} is not streamed: it is a market of get only`);
  if (!MARKET_SET.has(market)) return wireError('invalid_market', `unknown market: ${JSON.stringify(market)}`);
  return undefined;
}

function codeError(channel: Channel, market: Market, code: string, listed: (m: string, c: string) => boolean): WireError | undefined {
  if (channel === 'index') {
    return isIndexCodeOf(market, code) ? undefined : wireError('invalid_code', `not an index code of ${market}: ${JSON.stringify(code)}`);
  }
  if (!STOCK_CODE.test(code)) return wireError('invalid_code', `not a stock code: ${JSON.stringify(code)}`);
  if (!listed(market, code)) return wireError('invalid_code', `not listed on ${market}: ${code}`);
  return undefined;
}

/**
 * Validates a subscribe target: channel, market, then codes. `["*"]` is
 * accepted on list channels only; stock codes must be listed (`listed`,
 * e.g. SymbolDirectory.has); index codes are industry codes of the market.
 */
export function resolveTarget(
  req: { channel: string; market: string; codes: readonly string[] },
  listed: (market: string, code: string) => boolean,
): TargetResult {
  const fe = checkFeed(req.channel, req.market);
  if (fe) return { ok: false, error: fe };
  const channel = req.channel as Channel;
  const market = req.market as Market;
  const feed = feedOf(channel, market);
  if (req.codes.includes(WILDCARD)) {
    if (req.codes.some((c) => c !== WILDCARD)) {
      return { ok: false, error: wireError('invalid_code', 'the wildcard "*" cannot be combined with codes') };
    }
    if (!LIST_SET.has(channel)) {
      return { ok: false, error: wireError('invalid_code', `channel ${channel} takes explicit codes only, not "*"`) };
    }
    return { ok: true, value: { channel, market, feed, wildcard: true, codes: [], topics: [] } };
  }
  const codes = [...new Set(req.codes)];
  for (const code of codes) {
    const e = codeError(channel, market, code, listed);
    if (e) return { ok: false, error: e };
  }
  return { ok: true, value: { channel, market, feed, wildcard: false, codes, topics: codes.map((c) => topicOf(channel, market, c)) } };
}

/** The topic string a wildcard subscription is reported as: `channel.market.*`. */
export function wildcardTopic(feed: string): string {
  return `${feed}.${WILDCARD}`;
}

/** The channel and market of a feed key `channel.market` (feed keys are built by feedOf, so they are valid). */
export function parseFeed(feed: string): { channel: Channel; market: Market } {
  const dot = feed.indexOf('.');
  return { channel: feed.slice(0, dot) as Channel, market: feed.slice(dot + 1) as Market };
}
