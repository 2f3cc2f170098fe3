import type { Logger } from '../log.js';
import type { Channel, Market } from '../protocol/constants.js';
import { WILDCARD } from '../protocol/constants.js';
import type { GetMsg, ResyncMsg, SubscribeMsg, UnsubscribeMsg } from '../protocol/messages.js';
import { feedOf, parseTopic, topicOf } from '../protocol/topics.js';
import type { StateStore } from '../state/store.js';
import { messageWithData, type OnDemand } from '../upstream/cache.js';
import { upstreamWireError } from '../lookups/errors.js';
import { wireError, type WireError } from '../protocol/errors.js';
import { encode } from '../protocol/encode.js';
import { type RequestId } from '../protocol/messages.js';
import type { SubscriptionIndex } from './index.js';
import { checkFeed, parseFeed, resolveTarget, wildcardTopic, type Target } from './requests.js';
import { resolveGet, type Families } from '../lookups/resources.js';
import type { LookupLimits } from '../access/lookups.js';
import type { ReplyQueue } from './replies.js';
import type { LookupDates } from '../lookups/dates.js';
import type { Session } from './session.js';
import { aheadOf, subscribeState } from './snapshots.js';

/**
 * Handlers of the client ops: subscribe, unsubscribe, get, resync, ping.
 * Each answers with frames or an error frame; none throws for a bad
 * request. See docs/PROTOCOL.md §Client messages.
 */

/** Demand as the gateway records it (reference counts per code or `*`). */
export interface DemandSink {
  /** One more subscriber of each code (or `*`) of a feed. */
  addAll(channel: Channel, market: Market, codes: Iterable<string>): void;
  /** One subscriber fewer of each code (or `*`) of a feed. */
  removeAll(channel: Channel, market: Market, codes: Iterable<string>): void;
}

/** Symbol listing check (SymbolDirectory.has). */
export interface SymbolLookup {
  has(market: string, code: string): boolean;
}

/** What the handlers use of the gateway. */
export interface HandlerContext {
  readonly store: StateStore;
  readonly index: SubscriptionIndex<Session>;
  readonly demand: DemandSink;
  readonly symbols: SymbolLookup;
  readonly onDemand: OnDemand;
  /** Per-client lookup limits (shared with `/api`). */
  readonly lookups: LookupLimits;
  /** The calendar and clock of lookups' default dates. */
  readonly dates: LookupDates;
  /** Where `get` replies wait their turn to be written. */
  readonly replies: ReplyQueue;
  readonly families: Families;
  readonly logger: Logger;
  /** The wall clock, ms epoch: times that go on the wire (`pong.ts`). */
  now(): number;
  /** The monotonic clock, ms: the inbound rate and flood limits, `lastSeen`. */
  monotonic(): number;
  /** The serialised current `status` of a feed, if known. */
  statusOf(channel: Channel, market: Market): string | undefined;
  /** Counts messages sent, by type. */
  sent(type: string, n: number): void;
  /** Sends an error frame (and counts it). */
  error(s: Session, err: WireError, id?: RequestId): void;
  /** The subscription counts changed. */
  topicsChanged(): void;
}

function overLimit(s: Session, t: Target): WireError | undefined {
  if (t.wildcard) {
    if (!s.wildcards.has(t.feed) && s.wildcards.size >= s.limits.maxWildcards) {
      return wireError('too_many_topics', `at most ${s.limits.maxWildcards} wildcard subscriptions per connection`);
    }
    return undefined;
  }
  let added = 0;
  for (const topic of t.topics) if (!s.explicit.has(topic)) added++;
  if (s.explicitCount + added > s.limits.maxTopics) {
    return wireError('too_many_topics', `at most ${s.limits.maxTopics} topics per connection`);
  }
  return undefined;
}

/**
 * Per topic named in a subscribe's `since` map: whether its missed patches
 * are still buffered (`true`: they follow) or a fresh snapshot follows.
 * `since` is undefined when the client's seqs are of another epoch. A
 * topic the client holds a little ahead of this process (`aheadOf`) is
 * recovered too: the session is told not to send the patches it already
 * has.
 */
function recoveredOf(
  ctx: HandlerContext,
  s: Session,
  t: Target,
  named: Readonly<Record<string, number>>,
  since: Readonly<Record<string, number>> | undefined,
): Record<string, boolean> {
  const out: Record<string, boolean> = {};
  const mine = t.wildcard ? undefined : new Set(t.topics);
  for (const topic of Object.keys(named)) {
    out[topic] = false;
    const p = since === undefined ? undefined : parseTopic(topic);
    if (p === undefined || p.channel !== t.channel || p.market !== t.market || (mine !== undefined && !mine.has(topic))) continue;
    const e = ctx.store.entry(p.channel, p.market, p.code);
    if (e === undefined) continue;
    const held = since![topic]!;
    if (aheadOf(e, held)) {
      s.holdsAhead(topic, held);
      out[topic] = true;
    } else {
      s.forgetAhead(topic);
      out[topic] = ctx.store.canReplay(e, held);
    }
  }
  return out;
}

/**
 * Subscribes: validate, check limits, reply `subscribed`, then the state
 * (resumed patches or snapshots) and status, made as the connection's
 * socket takes them (snapshots.ts); record demand.
 */
export function onSubscribe(ctx: HandlerContext, s: Session, msg: SubscribeMsg): void {
  // More codes than the connection may hold at all: say so before checking each one.
  if (msg.codes.length > s.limits.maxTopics && new Set(msg.codes).size > s.limits.maxTopics) {
    return ctx.error(s, wireError('too_many_topics', `at most ${s.limits.maxTopics} topics per connection`), msg.id);
  }
  const r = resolveTarget(msg, (m, c) => ctx.symbols.has(m, c));
  if (!r.ok) return ctx.error(s, r.error, msg.id);
  const t = r.value;
  const limit = overLimit(s, t);
  if (limit) return ctx.error(s, limit, msg.id);
  const { channel, market, feed } = t;
  const newCodes: string[] = [];
  if (t.wildcard) {
    if (ctx.index.addWildcard(s, feed)) newCodes.push(WILDCARD);
  } else {
    for (let i = 0; i < t.codes.length; i++) if (ctx.index.addTopic(s, feed, t.topics[i]!)) newCodes.push(t.codes[i]!);
  }
  const since = msg.epoch === ctx.store.epoch ? msg.since : undefined;
  const recovered = msg.since ? recoveredOf(ctx, s, t, msg.since, since) : undefined;
  const first = encode({ type: 'subscribed', id: msg.id, topics: t.wildcard ? [wildcardTopic(feed)] : [...t.topics], recovered });
  s.replyLater(
    subscribeState(first, {
      session: s,
      store: ctx.store,
      index: ctx.index,
      channel,
      market,
      codes: t.wildcard ? undefined : t.codes,
      since,
      // As the feed stands now, before this subscription's demand reaches the poller (a new feed's first state follows on its own).
      status: ctx.statusOf(channel, market),
      sent: ctx.sent,
    }),
  );
  if (newCodes.length) {
    ctx.demand.addAll(channel, market, newCodes);
    ctx.topicsChanged();
  }
}

/** Unsubscribes: reply `unsubscribed` with the topics actually removed, release their demand. */
export function onUnsubscribe(ctx: HandlerContext, s: Session, msg: UnsubscribeMsg): void {
  const fe = checkFeed(msg.channel, msg.market);
  if (fe) return ctx.error(s, fe, msg.id);
  const channel = msg.channel as Channel;
  const market = msg.market as Market;
  const feed = feedOf(channel, market);
  const removed: string[] = [];
  const released: string[] = [];
  for (const code of new Set(msg.codes)) {
    if (code === WILDCARD) {
      if (ctx.index.removeWildcard(s, feed)) {
        released.push(WILDCARD);
        removed.push(wildcardTopic(feed));
        s.forgetAhead(`${feed}.`);
      }
    } else {
      const topic = topicOf(channel, market, code);
      if (ctx.index.removeTopic(s, feed, topic)) {
        s.forgetAhead(topic);
        released.push(code);
        removed.push(topic);
      }
    }
  }
  if (released.length) ctx.demand.removeAll(channel, market, released);
  s.reply(encode({ type: 'unsubscribed', id: msg.id, topics: removed }));
  ctx.sent('unsubscribed', 1);
  if (removed.length) ctx.topicsChanged();
}

/** Resync: a fresh snapshot of one topic the connection receives. */
export function onResync(ctx: HandlerContext, s: Session, msg: ResyncMsg): void {
  const p = parseTopic(msg.topic);
  if (p === undefined || !ctx.index.has(s, feedOf(p.channel, p.market), msg.topic)) {
    return ctx.error(s, wireError('not_subscribed', 'the topic is not subscribed on this connection', msg.topic), msg.id);
  }
  const e = ctx.store.entry(p.channel, p.market, p.code);
  // Without state yet, the first snapshot follows through the bus when the poller sees the topic.
  if (e === undefined) return;
  // The snapshot is the client's state from now on, whatever seq it held.
  s.forgetAhead(msg.topic);
  s.reply(ctx.store.snapshot(e));
  ctx.sent('snapshot', 1);
}

/** Ping: `pong` with the server time. */
export function onPing(ctx: HandlerContext, s: Session, id: RequestId | undefined): void {
  s.reply(encode({ type: 'pong', id, ts: ctx.now() }));
  ctx.sent('pong', 1);
}

/**
 * Get: rate-limit, resolve to an endpoint, look it up without blocking the
 * socket loop, reply `result` (or `error`) whenever it completes.
 */
export function onGet(ctx: HandlerContext, s: Session, msg: GetMsg): void {
  // Replies this connection has not read yet: no new lookup until they drain.
  if (s.repliesBacklogged) return ctx.error(s, wireError('rate_limited', BACKLOG_TEXT), msg.id);
  if (s.getsInFlight >= MAX_GETS_IN_FLIGHT) {
    return ctx.error(s, wireError('rate_limited', `at most ${MAX_GETS_IN_FLIGHT} get requests unanswered per connection`), msg.id);
  }
  // Per client (token, else address), across all its connections and its `/api` requests.
  const client = s.who.clientId ?? s.who.addr;
  if (!ctx.lookups.admit(client, s.limits.getsPerMinute)) {
    return ctx.error(s, wireError('rate_limited', `at most ${s.limits.getsPerMinute} lookups per minute per client`), msg.id);
  }
  const r = resolveGet(msg, ctx.families, ctx.dates);
  if (!r.ok) return ctx.error(s, r.error, msg.id);
  const q = r.value;
  if (q.code !== undefined && q.resource !== 'index' && !ctx.symbols.has(q.market, q.code)) {
    return ctx.error(s, wireError('invalid_code', `not listed on ${q.market}: ${q.code}`), msg.id);
  }
  s.getsInFlight++;
  const done = (): void => void s.getsInFlight--;
  ctx.onDemand.get(q.endpointId, q.params, { spend: ctx.lookups.spender(client) }).then(
    (res) => {
      if (s.closing) return done();
      // The same bytes as JSON.stringify of the whole message, with data serialised once per answer.
      const head = {
        type: 'result',
        id: msg.id,
        resource: q.resource,
        market: q.market,
        code: q.code,
        ts: res.receivedAt,
        ...(res.dropped ? { dropped: res.dropped } : {}),
      };
      const frame = messageWithData(head, 'data', res.data);
      ctx.replies.push(
        s,
        frame,
        () => {
          done();
          ctx.sent('result', 1);
        },
        () => {
          done();
          ctx.error(s, wireError('rate_limited', BACKLOG_TEXT), msg.id);
        },
      );
    },
    (err: unknown) => {
      done();
      const we = upstreamWireError(err);
      if (we.code === 'internal') ctx.logger.error({ err, endpoint: q.endpointId }, 'get failed unexpectedly');
      else ctx.logger.debug({ code: (err as { code?: unknown }).code, endpoint: q.endpointId }, 'get failed upstream');
      if (!s.closing) ctx.error(s, we, msg.id);
    },
  );
}

/** `get`s of one connection waiting for their answer (a lookup, or their turn to be written) at one time. */
export const MAX_GETS_IN_FLIGHT = 32;

const BACKLOG_TEXT = 'replies to earlier requests are still waiting to be read on this connection; read them, then ask again';

/** Releases the demand of every subscription a closed session held (from SubscriptionIndex.removeAll). */
export function releaseDemand(demand: DemandSink, held: { topics: readonly string[]; wildcards: readonly string[] }): void {
  // Per feed, one release of all its codes: one demand change per feed, not per code.
  const byFeed = new Map<string, { channel: Channel; market: Market; codes: string[] }>();
  const release = (channel: Channel, market: Market, code: string): void => {
    const key = feedOf(channel, market);
    let f = byFeed.get(key);
    if (f === undefined) byFeed.set(key, (f = { channel, market, codes: [] }));
    f.codes.push(code);
  };
  for (const t of held.topics) {
    const p = parseTopic(t);
    if (p) release(p.channel, p.market, p.code);
  }
  for (const feed of held.wildcards) {
    const f = parseFeed(feed);
    release(f.channel, f.market, WILDCARD);
  }
  for (const f of byFeed.values()) demand.removeAll(f.channel, f.market, f.codes);
}
