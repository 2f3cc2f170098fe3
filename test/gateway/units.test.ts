import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { issuesText } from '../../src/protocol/issues.js';
import { upstreamWireError, UPSTREAM_TO_WIRE } from '../../src/lookups/errors.js';
import { errorFrame } from '../../src/protocol/encode.js';
import { SubscriptionIndex, type Subscriber } from '../../src/gateway/index.js';
import { SmallSet } from '../../src/gateway/smallset.js';
import { ConnectionCounter, KeyedRateLimiter, TokenBucket, WindowCounter, messageBucket, resolveLimits } from '../../src/access/limits.js';
import { parseClientFrame, resolveTarget } from '../../src/gateway/requests.js';
import { DEFAULT_SLOW_POLICY, behindAction, heartbeatCheck, overCap, slowPolicy } from '../../src/gateway/slow.js';
import { DEFAULT_LIMITS } from '../../src/protocol/constants.js';
import { ErrorMsg } from '../../src/protocol/messages.js';
import { RESOURCE_PARAMS } from '../../src/protocol/resources.js';

describe('parseClientFrame', () => {
  it.each([
    ['{', 'bad_request', undefined],
    ['[1]', 'bad_request', undefined],
    ['"x"', 'bad_request', undefined],
    ['{"op":"jump","id":3}', 'unknown_op', 3],
    ['{"id":"a"}', 'bad_request', 'a'],
    ['{"op":"ping","id":1,"extra":true}', 'bad_request', 1],
    ['{"op":"subscribe","id":{"x":1},"channel":"quote","market":"kospi","codes":[]}', 'bad_request', undefined],
  ])('%s -> %s (id %s)', (text, code, id) => {
    const r = parseClientFrame(text);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.code).toBe(code);
      expect(r.id).toBe(id);
    }
  });

  it('accepts every op', () => {
    for (const m of [
      { op: 'ping' },
      { op: 'resync', topic: 'quote.kospi.005930' },
      { op: 'get', resource: 'master', market: 'kospi', code: '005930' },
      { op: 'subscribe', channel: 'quote', market: 'kospi', codes: ['*'], since: { 'quote.kospi.005930': 3 }, epoch: 'e' },
      { op: 'unsubscribe', channel: 'quote', market: 'kospi', codes: ['005930'] },
    ]) {
      expect(parseClientFrame(JSON.stringify(m)).ok).toBe(true);
    }
  });
});

describe('resolveTarget', () => {
  const listed = (_m: string, c: string) => c !== '999999';
  const target = (channel: string, market: string, codes: string[]) => resolveTarget({ channel, market, codes }, listed);

  it('dedupes codes and builds topics', () => {
    const r = target('quote', 'kospi', ['005930', '005930', '00088K']);
    expect(r.ok && r.value.topics).toEqual(['quote.kospi.005930', 'quote.kospi.00088K']);
  });
  it.each([
    ['nope', 'kospi', ['005930'], 'invalid_channel'],
    ['quote', 'konex', ['005930'], 'invalid_market'],
    ['quote', 'kospi', ['*', '005930'], 'invalid_code'],
    ['price', 'kospi', ['*'], 'invalid_code'],
    ['book', 'kosdaq', ['*'], 'invalid_code'],
    ['index', 'kospi', ['*'], 'invalid_code'],
    ['quote', 'kospi', ['005930 '], 'invalid_code'],
    ['quote', 'kospi', ['999999'], 'invalid_code'],
    ['index', 'kospi', ['Q1'], 'invalid_code'],
    ['index', 'kosdaq', ['K1'], 'invalid_code'],
    ['index', 'kospi', ['K1234'], 'invalid_code'],
  ])('%s %s %o -> %s', (ch, mk, codes, code) => {
    const r = target(ch, mk, codes);
    expect(r.ok ? 'ok' : r.error.code).toBe(code);
  });
  it('says why a market is refused: one it does not know, and KONEX, which has no streamed channel', () => {
    const message = (market: string) => {
      const r = target('quote', market, ['005930']);
      return r.ok ? 'ok' : r.error.message;
    };
    expect(message('nyse')).toBe('unknown market: "nyse"');
    expect(message('konex')).toBe('konex is not streamed: it is a market of get only');
  });
  it('accepts industry codes of the market and wildcards of list channels', () => {
    expect(target('index', 'kospi', ['K1', 'K200']).ok).toBe(true);
    expect(target('index', 'kosdaq', ['Q1']).ok).toBe(true);
    for (const ch of ['quote', 'ohlc', 'top', 'aht']) {
      const r = target(ch, 'kosdaq', ['*']);
      expect(r.ok && r.value.wildcard).toBe(true);
    }
  });
});

describe('slow-consumer policy', () => {
  const p = slowPolicy({ conflateBytes: 100, closeBytes: 1000, maxBehindMs: 50 });
  it('defaults', () => {
    expect(slowPolicy()).toEqual(DEFAULT_SLOW_POLICY);
    expect(DEFAULT_SLOW_POLICY).toMatchObject({ conflateBytes: 32 << 10, closeBytes: 16 << 20, maxBehindMs: 30_000, frameBytes: 16 << 10 });
    expect(p.drainBytes).toBe(25);
    expect(slowPolicy({ conflateBytes: 100, drainBytes: 500 }).drainBytes).toBe(100);
  });
  it.each([
    [200, 100, 10, 'wait'],
    [25, 100, 10, 'resume'],
    [26, 0, 10, 'wait'],
    [25, 976, 10, 'close'],
    [200, 801, 10, 'close'],
    [0, 0, 51, 'close'],
    [0, 0, 50, 'resume'],
  ] as const)('behind, buffered %s, owed %s, for %s ms -> %s', (buffered, owed, behind, action) => {
    expect(behindAction(buffered, owed, behind, p)).toBe(action);
  });
  it('a write past closeBytes is over the cap', () => {
    expect(overCap(500, 400, 100, p)).toBe(false);
    expect(overCap(500, 400, 101, p)).toBe(true);
  });
  it.each([
    [1200, 1000, false, 1000],
    [1201, 1000, false, undefined],
    // Held (behind): never cut, however long silent; its clock restarts.
    [9000, 1000, true, 9000],
  ] as const)('heartbeat at %s, last heard at %s, held %s -> %s', (now, lastSeen, held, out) => {
    expect(heartbeatCheck(now, lastSeen, 100, held)).toBe(out);
  });
});

describe('limits', () => {
  it('resolveLimits applies defaults, server options and token overrides (not maxPayloadBytes)', () => {
    expect(resolveLimits()).toEqual(DEFAULT_LIMITS);
    expect(resolveLimits({ maxTopics: 10, maxPayloadBytes: 99 }, { maxTopics: 50, getsPerMinute: 5 })).toEqual({
      ...DEFAULT_LIMITS,
      maxTopics: 50,
      maxPayloadBytes: 99,
      getsPerMinute: 5,
    });
  });
  it('message bucket bursts to twice the rate, then refills', () => {
    const b = messageBucket(10, 0);
    let n = 0;
    while (b.take(0)) n++;
    expect(n).toBe(20);
    expect(b.take(50)).toBe(false);
    expect(b.take(100)).toBe(true);
  });
  it('token bucket never exceeds its capacity', () => {
    const b = new TokenBucket(2, 1, 0);
    expect([b.take(1_000_000), b.take(1_000_000), b.take(1_000_000)]).toEqual([true, true, false]);
  });
  it('window counter trips past the limit within one window', () => {
    const w = new WindowCounter(3, 1000);
    expect([w.hit(0), w.hit(1), w.hit(2), w.hit(3)]).toEqual([false, false, false, true]);
    expect(w.hit(1000)).toBe(false);
  });
  it('keyed limiter keeps keys apart and bounds its memory', () => {
    const k = new KeyedRateLimiter(2, 3);
    expect([k.take('a', 0), k.take('a', 0), k.take('a', 0), k.take('b', 0)]).toEqual([true, true, false, true]);
    for (let i = 0; i < 10; i++) k.take(`x${i}`, 0);
    expect(k.size).toBeLessThanOrEqual(3);
  });
  it('keyed rate limiter gives back a request taken, never past a full bucket', () => {
    const k = new KeyedRateLimiter(2);
    expect([k.take('a', 0), k.take('a', 0), k.take('a', 0)]).toEqual([true, true, false]);
    k.giveBack('a', 0);
    expect([k.take('a', 0), k.take('a', 0)]).toEqual([true, false]);
    k.giveBack('b', 0); // a key never taken: nothing to give back
    k.giveBack('a', 0);
    k.giveBack('a', 0);
    k.giveBack('a', 0);
    expect([k.take('a', 0), k.take('a', 0), k.take('a', 0)]).toEqual([true, true, false]);
  });
  it('connection counter caps per address, and counts every address together past that cap', () => {
    const c = new ConnectionCounter(2);
    expect([c.acquire('a'), c.acquire('a'), c.acquire('a'), c.acquire('b')]).toEqual([true, true, false, true]);
    expect(c.total).toBe(3);
    for (const addr of ['c', 'c', 'd', 'd']) c.acquire(addr);
    expect(c.total).toBe(7);
    c.release('a');
    expect(c.acquire('a')).toBe(true);
    c.release('a');
    c.release('a');
    expect(c.count('a')).toBe(0);
    // A slot never taken is not given back: the total stays the connections held.
    c.release('a');
    c.release('e');
    expect(c.total).toBe(5);
  });
});

describe('subscription index', () => {
  const sub = (): Subscriber => ({ explicit: new SmallSet(), wildcards: new SmallSet() });
  it('keeps delivery sets free of duplicates whatever the order of wildcard and explicit', () => {
    const idx = new SubscriptionIndex<Subscriber>();
    const a = sub();
    const b = sub();
    idx.addTopic(a, 'quote.kospi', 'quote.kospi.000001');
    idx.addWildcard(a, 'quote.kospi');
    idx.addWildcard(b, 'quote.kospi');
    idx.addTopic(b, 'quote.kospi', 'quote.kospi.000002');
    expect(idx.direct('quote.kospi.000001')).toBeUndefined();
    expect(idx.direct('quote.kospi.000002')).toBeUndefined();
    expect([...idx.wildcard('quote.kospi')!]).toEqual([a, b]);
    expect(idx.topicCount).toBe(3);
    expect([...idx.subscribersOf('quote.kospi')]).toEqual([a, b]);
    idx.removeWildcard(b, 'quote.kospi');
    expect([...idx.direct('quote.kospi.000002')!]).toEqual([b]);
    expect(idx.feeds()['quote.kospi']).toEqual({ sessions: 2, wildcards: 1, topics: 2 });
    expect(idx.removeAll(a)).toEqual({ topics: ['quote.kospi.000001'], wildcards: ['quote.kospi'] });
    expect(idx.removeAll(b)).toEqual({ topics: ['quote.kospi.000002'], wildcards: [] });
    expect(idx.topicCount).toBe(0);
    expect(idx.feeds()).toEqual({});
    expect(a.explicit.size + b.explicit.size + a.wildcards.size).toBe(0);
  });
  it("counts each feed's subscribers and topics as its subscribers' own records say, after any adds and removes", () => {
    const feeds = ['quote.kospi', 'quote.kosdaq', 'book.kospi'];
    const op = fc.record({
      kind: fc.constantFrom('addTopic', 'removeTopic', 'addWildcard', 'removeWildcard', 'removeAll'),
      who: fc.nat(4),
      feed: fc.nat(feeds.length - 1),
      code: fc.nat(5),
    });
    fc.assert(
      fc.property(fc.array(op, { maxLength: 80 }), (ops) => {
        const idx = new SubscriptionIndex<Subscriber>();
        const subs = Array.from({ length: 5 }, sub);
        for (const o of ops) {
          const s = subs[o.who]!;
          const feed = feeds[o.feed]!;
          const topic = `${feed}.${o.code}`;
          if (o.kind === 'addTopic') idx.addTopic(s, feed, topic);
          else if (o.kind === 'removeTopic') idx.removeTopic(s, feed, topic);
          else if (o.kind === 'addWildcard') idx.addWildcard(s, feed);
          else if (o.kind === 'removeWildcard') idx.removeWildcard(s, feed);
          else idx.removeAll(s);
        }
        const expected: Record<string, { sessions: number; wildcards: number; topics: number }> = {};
        for (const feed of feeds) {
          const prefix = `${feed}.`;
          const holds = (s: Subscriber): boolean => s.wildcards.has(feed) || [...s.explicit].some((t) => t.startsWith(prefix));
          const sessions = subs.filter(holds).length;
          if (sessions === 0) continue;
          const topics = new Set(subs.flatMap((s) => [...s.explicit].filter((t) => t.startsWith(prefix)))).size;
          expected[feed] = { sessions, wildcards: subs.filter((s) => s.wildcards.has(feed)).length, topics };
        }
        expect(idx.feeds()).toEqual(expected);
        expect(idx.topicCount).toBe(Object.values(expected).reduce((a, f) => a + f.topics + (f.wildcards > 0 ? 1 : 0), 0));
      }),
      { numRuns: 300 },
    );
  });
  it('reports adds and removes that change nothing', () => {
    const idx = new SubscriptionIndex<Subscriber>();
    const a = sub();
    expect(idx.addTopic(a, 'f.m', 'f.m.1')).toBe(true);
    expect(idx.addTopic(a, 'f.m', 'f.m.1')).toBe(false);
    expect(idx.removeTopic(a, 'f.m', 'f.m.2')).toBe(false);
    expect(idx.removeWildcard(a, 'f.m')).toBe(false);
  });
});

describe('wire errors', () => {
  it('maps every upstream code and never uses the error message', () => {
    const expected: Record<string, string> = {
      invalid_code: 'invalid_code',
      not_provided_now: 'not_provided_now',
      rate_limited: 'upstream_rate_limited',
      not_found: 'not_found',
      invalid_request: 'invalid_params',
      bad_request: 'invalid_params',
      unauthorized: 'upstream_unavailable',
      upstream_error: 'upstream_unavailable',
      timeout: 'upstream_unavailable',
      network: 'upstream_unavailable',
      malformed_body: 'upstream_unavailable',
    };
    expect(UPSTREAM_TO_WIRE).toEqual(expected);
    for (const code of Object.keys(expected)) {
      const err = Object.assign(new Error('secret-KEY-123 in the url'), { code });
      const w = upstreamWireError(err);
      expect(w.code).toBe(expected[code]);
      expect(w.message).not.toContain('secret-KEY-123');
    }
    expect(upstreamWireError(Object.assign(new Error('x'), { code: 'unauthorized' })).message).toMatch(/credentials/);
    expect(upstreamWireError(new TypeError('boom')).code).toBe('internal');
    expect(upstreamWireError({ code: 'rate_limited', resetAt: 5 }).resetAt).toBe(5);
  });
  it('error frames match the schema and carry retryable from the table', () => {
    const f = JSON.parse(errorFrame({ code: 'upstream_unavailable', message: 'm', topic: 't' }, 7));
    expect(ErrorMsg.parse(f)).toEqual({ type: 'error', id: 7, code: 'upstream_unavailable', message: 'm', retryable: true, topic: 't' });
    expect(JSON.parse(errorFrame({ code: 'bad_request', message: 'm' }))).toEqual({ type: 'error', code: 'bad_request', message: 'm', retryable: false });
  });
  it('summarises zod issues briefly', () => {
    const r = RESOURCE_PARAMS.history.safeParse({ from: 'x', to: 'y', count: 0, z: 1 });
    expect(r.success).toBe(false);
    if (!r.success) expect(issuesText(r.error)).toMatch(/^from: must be a date YYYYMMDD; .*\(\+\d+ more\)$/);
  });
});
