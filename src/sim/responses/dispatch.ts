import type { z } from 'zod';
import type { Endpoint } from '../../upstream/catalogue.js';
import type { Market } from '../market/market.js';
import { Refused, type Builder, type Outcome, type Refusal } from './context.js';
import { DERIVATIVE_BUILDERS } from './derivatives.js';
import { ETF_BUILDERS, HOLIDAY } from './extra.js';
import { INDEX_BUILDERS, MARKET_BUILDERS } from './indexes.js';
import { MULTIQUOTE_BUILDERS, SYMBOL_LIST } from './lists.js';
import { STOCK_BUILDERS } from './stocks.js';

/**
 * From a catalogue entry to the builder of its body: the entry's path shape
 * (multi-quote, derivative, index, per-issue stock, market level) and its
 * last segment name the operation, so new entries of a known shape are
 * served without a table of ids.
 */

/** The builder of an entry, or undefined when the simulator has none. */
export function builderFor(e: Endpoint): Builder | undefined {
  const segments = e.path.split('/');
  const last = segments[segments.length - 1]!;
  if (e.path.includes('/multiquote/')) return MULTIQUOTE_BUILDERS[last];
  if (e.path.includes('/futures/') || e.path.includes('/options/')) return DERIVATIVE_BUILDERS[last];
  if (e.path.includes('{nationcode}')) return last === 'holiday' ? HOLIDAY : undefined;
  if (e.code === 'index') return INDEX_BUILDERS[last];
  if (last === 'lists') return SYMBOL_LIST;
  if (e.code === 'stock') return ETF_BUILDERS[last] ?? STOCK_BUILDERS[last];
  return MARKET_BUILDERS[last];
}

/** Parameters whose problems make the code (not the request) invalid. */
const CODE_PARAMS = new Set(['marketcode', 'issuecode', 'nationcode']);

/** Classifies zod issues of a request's parameters. */
export function refusalOf(error: z.ZodError): Refusal {
  for (const issue of error.issues) {
    const name = String(issue.path[0] ?? '');
    if (CODE_PARAMS.has(name)) return 'invalidCode';
    // A malformed code inside the isuCd list is an invalid code; too many or none is a bad request.
    if (name === 'isuCd' && issue.code !== 'too_big' && issue.code !== 'too_small' && issue.path.length > 1) return 'invalidCode';
  }
  return 'badParameter';
}

/** Validates raw parameters and builds the body (unwrapped) of an entry. */
export function build(market: Market, e: Endpoint, raw: Record<string, unknown>): Outcome {
  const builder = builderFor(e);
  if (!builder) return { ok: false, refusal: 'badParameter' };
  const parsed = e.params.safeParse(raw);
  if (!parsed.success) return { ok: false, refusal: refusalOf(parsed.error) };
  try {
    return builder({ market, endpoint: e, params: parsed.data });
  } catch (err) {
    if (err instanceof Refused) return { ok: false, refusal: err.refusal };
    throw err;
  }
}

/** The body with the entry's envelope. */
export function envelope(e: Endpoint, body: Record<string, unknown>): unknown {
  return e.envelope === 'wrapped' ? { jsonrpc: '2.0', result: body } : body;
}
