import { z } from 'zod';
import { CHANNELS, CLIENT_OPS, ClientMsg, LIST_CHANNELS, MARKETS, STOCK_CODE, WILDCARD } from '../protocol/index.js';
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
