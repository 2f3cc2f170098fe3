import type { Channel, Market } from '../protocol/constants.js';
import { endpoint } from '../upstream/catalogue.js';
import { type Provision } from '../market/provision.js';
import type { FieldTable } from '../upstream/fields.js';
import type { Row } from '../upstream/normalise.js';
import { FEED_ENDPOINTS, planCycle, type Family, type PlannedCall } from './feeds.js';

/**
 * Where a closed market's last state comes from at a given hour. Pure.
 *
 * A feed's own 1-second endpoint serves the day's last state while the
 * upstream still serves the trading day's snapshots (its provision: the
 * day's sessions, so 15:30–15:40 between the close and after-hours). At
 * other closed hours (nights, weekends, holidays, before the pre-market) the
 * closing-data endpoints serve the last trading day's close, one issue (or
 * index) a call: `closeprice` for `quote`, `ohlc` and `price`, `closeindex`
 * for `index`. `top`, `aht` and `book` have no closing data: outside the
 * sessions they have nothing to fetch. Which endpoint answers when is the
 * catalogue's provision rule, read on the KRX sessions (src/market/provision).
 * See docs/OPERATIONS.md §11.
 */

/** The closing-data endpoint that holds a channel's last state per code, by family. */
export const CLOSING_ENDPOINTS: Readonly<Record<Family, Readonly<Partial<Record<Channel, string>>>>> = {
  v2: { quote: 'v2.stocks.closeprice', ohlc: 'v2.stocks.closeprice', price: 'v2.stocks.closeprice', index: 'v2.index.closeindex' },
  v3: { quote: 'v3.closed.closeprice', ohlc: 'v3.closed.closeprice', price: 'v3.closed.closeprice', index: 'v3.closed.index.closeindex' },
};

/** What a closed feed wants and holds no row for: codes, and the whole market (`*`). */
export interface Missing {
  readonly codes: readonly string[];
  readonly wildcard: boolean;
}

/** The calls that fetch a closed market's last state now (`snapshot`: the feed's own endpoint), or why there are none. */
export interface ClosedPlan {
  readonly source: 'snapshot' | 'closing' | 'none';
  readonly calls: PlannedCall[];
  /** With `none`: why nothing is fetched. */
  readonly why?: string;
}

/** Why nothing is fetched when no endpoint serves the data at this hour. */
export const NOT_PROVIDED_NOW = 'not provided at this hour';

/** Why nothing is fetched for a whole market (`*`) when only the closing data, which is per code, is served at this hour. */
export const NO_WHOLE_MARKET_CLOSE = 'closing data is per code: none for a whole market';

/**
 * The calls that fetch the last state of `missing` for a feed while the
 * market is closed: its 1-second endpoint when `provides` says the upstream
 * serves it now, else one closing-data call per code. The whole market (`*`)
 * has no closing-data endpoint: without its snapshot it has nothing.
 */
export function planClosed(channel: Channel, market: Market, family: Family, missing: Missing, provides: (p: Provision) => boolean): ClosedPlan {
  if (provides(endpoint(FEED_ENDPOINTS[family][channel]).provision)) {
    return { source: 'snapshot', calls: planCycle(channel, market, family, new Set(missing.codes), missing.wildcard) };
  }
  const closing = CLOSING_ENDPOINTS[family][channel];
  if (closing === undefined || !provides(endpoint(closing).provision)) return { source: 'none', calls: [], why: NOT_PROVIDED_NOW };
  if (missing.codes.length === 0) return { source: 'none', calls: [], why: missing.wildcard ? NO_WHOLE_MARKET_CLOSE : NOT_PROVIDED_NOW };
  return { source: 'closing', calls: [...missing.codes].sort().map((code) => ({ endpointId: closing, params: { marketcode: market, issuecode: code } })) };
}

/** Whether a planned call is a closing-data call (its answer is one object, not the channel's rows). */
export function isClosingCall(call: PlannedCall): boolean {
  return !Object.values(FEED_ENDPOINTS).some((byChannel) => Object.values(byChannel).includes(call.endpointId));
}

/**
 * The channel's row from a closing-data answer (`closeprice`, `closeindex`):
 * keyed as the live rows are (the answer's code, else the code asked for),
 * with only the fields the channel's own rows carry, so a topic keeps one shape whichever endpoint filled it (a `quote`
 * row from a closing price has no market cap until the session brings one).
 */
export function closingRow(channel: Channel, family: Family, data: Record<string, unknown>, code: string): Row {
  const fields = rowFields(FEED_ENDPOINTS[family][channel]);
  const out: Row = { isuSrtCd: typeof data.isuSrtCd === 'string' && data.isuSrtCd ? data.isuSrtCd : code };
  // The normaliser made every value a scalar of the closing endpoint's table.
  for (const [k, v] of Object.entries(data)) if (k !== 'isuSrtCd' && k in fields) out[k] = v as Row[string];
  return out;
}

function rowFields(id: string): FieldTable {
  const r = endpoint(id).response;
  return r.list && typeof r.list.row === 'object' ? r.list.row : r.top;
}

/**
 * The closing-data answers of one closed stretch, shared by the feeds that
 * make the same call (`quote`, `ohlc` and `price` of a code all read its
 * `closeprice`): one upstream call where each feed made its own. An answer
 * is kept for the stretch (until the market's next close) only when it was
 * asked for after the close had settled; a failed call is not kept.
 */
export class ClosingAnswers<T> {
  private close: number | undefined;
  private readonly answers = new Map<string, Promise<T>>();

  /**
   * The answer of `call` in the stretch closed at `close`: the one kept, or
   * `ask()`'s, kept when `keep` (the close has settled).
   */
  get(call: PlannedCall, close: number | undefined, keep: boolean, ask: () => Promise<T>): Promise<T> {
    if (close !== this.close) {
      this.close = close;
      this.answers.clear();
    }
    if (!keep) return ask();
    const key = `${call.endpointId} ${JSON.stringify(call.params)}`;
    let answer = this.answers.get(key);
    if (answer === undefined) {
      const asked = ask();
      answer = asked;
      this.answers.set(key, asked);
      asked.catch(() => {
        if (this.answers.get(key) === asked) this.answers.delete(key);
      });
    }
    return answer;
  }
}
