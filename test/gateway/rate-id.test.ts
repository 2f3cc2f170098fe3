import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { PEEK_BYTES, parseClientFrame, peekRequestId } from '../../src/gateway/requests.js';
import { Client, startHarness, type Harness } from './harness.js';

/**
 * A frame over the message rate is refused before it is parsed (a flood
 * costs no parse), and its refusal carries the frame's `id` when a bounded
 * read finds it for certain: the client can match the refusal to its
 * request instead of waiting for its own timeout.
 */

const peek = (text: string) => peekRequestId(Buffer.from(text, 'utf8'));

describe('peekRequestId', () => {
  it.each([
    ['{"op":"get","id":"my-get-42","resource":"master","market":"kospi","code":"000001"}', 'my-get-42'],
    ['{"op":"get","id":42,"resource":"master"}', 42],
    ['  {\n "id" : 7 ,\t"op":"ping"}', 7],
    ['{"op":"ping","id":-3}', -3],
    ['{"op":"ping","id":1e2}', 100],
    ['{"op":"ping","id":0}', 0],
    ['{"op":"ping","id":""}', ''],
    ['{"op":"ping","id":"a\\"b\\\\c\\u00e9"}', 'a"b\\cé'],
    ['{"params":{"id":5,"x":[{"id":6}]},"id":7}', 7],
    ['{"op":"x","note":"\\"id\\":3, {\\"id\\":4}","id":"after"}', 'after'],
    ['{"\\u0069d":9,"op":"ping"}', 9],
    ['{"op":"ping","id":"' + 'é'.repeat(64) + '"}', 'é'.repeat(64)],
  ])('reads %s', (text, id) => {
    expect(peek(text)).toBe(id);
    // The id the parse would read.
    const parsed = JSON.parse(text) as { id: unknown };
    expect(parsed.id).toBe(id);
  });

  it.each([
    ['no id', '{"op":"ping"}'],
    ['an id only nested', '{"op":"get","params":{"id":5}}'],
    ['an id only inside a string', '{"op":"ping","note":"\\"id\\":3"}'],
    ['the id twice', '{"id":1,"op":"ping","id":2}'],
    ['the id twice, once escaped', '{"id":1,"\\u0069d":2}'],
    ['a fractional id', '{"id":1.5}'],
    ['a null id', '{"id":null}'],
    ['a boolean id', '{"id":true}'],
    ['an object id', '{"id":{"a":1}}'],
    ['an id string too long', `{"id":"${'x'.repeat(65)}"}`],
    ['an unsafe integer', '{"id":12345678901234567890}'],
    ['a malformed number', '{"id":01}'],
    ['a bad escape', '{"id":"\\x"}'],
    ['no colon', '{"id" 1}'],
    ['an array', '[{"id":1}]'],
    ['a string', '"id"'],
    ['empty', ''],
    ['not JSON', 'id=1'],
  ])('reads nothing from %s', (_why, text) => {
    expect(peek(text)).toBeUndefined();
  });

  it('reads only the first PEEK_BYTES structurally: an id past them, or cut by them, is not read', () => {
    const pad = 'x'.repeat(PEEK_BYTES);
    expect(peek(`{"op":"ping","pad":"${pad}","id":1}`)).toBeUndefined();
    // A number that reaches the end of what is read may go on past it.
    const head = '{"op":"ping","id":';
    const cut = `${head}${'1'.repeat(PEEK_BYTES - head.length)}}`;
    expect(cut.length).toBe(PEEK_BYTES + 1);
    expect(peek(cut)).toBeUndefined();
    const str = `{"op":"ping","id":"${'y'.repeat(PEEK_BYTES)}"}`;
    expect(peek(str)).toBeUndefined();
  });

  it('reads the id of a longer frame only when its unread rest could not hold another', () => {
    const codes = Array.from({ length: 200 }, (_, i) => String(i).padStart(6, '0'));
    const long = JSON.stringify({ op: 'subscribe', id: 'sub-1', channel: 'quote', market: 'kospi', codes });
    expect(long.length).toBeGreaterThan(PEEK_BYTES * 2);
    expect(peek(long)).toBe('sub-1');
    // The rest names `"id"` (a second key, or only a value: not told apart without reading it), or holds an escape that could spell it.
    expect(peek(long.slice(0, -1) + ',"id":"other"}')).toBeUndefined();
    expect(peek(long.replace('"000150"', '"id"'))).toBeUndefined();
    expect(peek(long.slice(0, -1) + ',"\\u0069d":2}')).toBeUndefined();
  });

  it('never reads an id the parse would not: on any object a client could send, it is the parsed id or nothing, and always the id of a short frame', () => {
    const id = fc.oneof(fc.integer(), fc.maxSafeInteger(), fc.string({ maxLength: 64, unit: 'binary' }));
    const value = fc.oneof(id, fc.boolean(), fc.constant(null), fc.double({ noNaN: true, noDefaultInfinity: true }));
    const nested = fc.dictionary(fc.oneof(fc.constant('id'), fc.string({ maxLength: 5 })), fc.oneof(value, fc.array(value, { maxLength: 3 })), { maxKeys: 3 });
    const frame = fc.record(
      {
        before: fc.dictionary(fc.string({ maxLength: 8, unit: 'binary' }), fc.oneof(value, nested), { maxKeys: 4 }),
        id: fc.oneof(id, value),
        after: fc.dictionary(fc.string({ maxLength: 8, unit: 'binary' }), fc.oneof(value, nested), { maxKeys: 4 }),
      },
      { requiredKeys: ['before', 'after'] },
    );
    fc.assert(
      fc.property(frame, fc.boolean(), ({ before, id: v, after }, spaced) => {
        const obj: Record<string, unknown> = { ...before };
        delete obj.id;
        if (v !== undefined) obj.id = v;
        for (const [k, x] of Object.entries(after)) if (k !== 'id') obj[k] = x;
        const text = JSON.stringify(obj, null, spaced ? 1 : undefined);
        const got = peek(text);
        const parsed = parseClientFrame(text);
        // The id a frame's own reply echoes (the schema refuses every one of these frames, so it is that of the error).
        const want = parsed.ok ? parsed.msg.id : parsed.id;
        if (got !== undefined) expect(got).toBe(want);
        if (Buffer.byteLength(text) < PEEK_BYTES) expect(got).toBe(want);
      }),
      { numRuns: 2000 },
    );
  });
});

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('a frame over the message rate', () => {
  it('is refused with its id, a number or a string, so the client can match the refusal', async () => {
    // The monotonic clock stands still: no token comes back, whatever time the test takes.
    h = await startHarness({ limits: { maxMessagesPerSecond: 50 }, monotonic: () => 0 });
    const c = await Client.connect(h.url);
    // A bucket of 2 × 50: a hundred pings pass.
    for (let i = 0; i < 100; i++) c.send({ op: 'ping', id: i });
    await c.wait(() => c.of('pong').length === 100);
    const get = { op: 'get', resource: 'master', market: 'kospi', code: '000001' };
    expect(await c.request({ ...get, id: 'my-get-42' })).toMatchObject({ type: 'error', code: 'rate_limited', retryable: true, id: 'my-get-42' });
    expect(await c.request({ ...get, id: 43 })).toMatchObject({ type: 'error', code: 'rate_limited', id: 43 });
    // Nothing was looked up.
    expect(h.onDemand.calls).toEqual([]);
    // A frame whose id cannot be read for certain is refused without one, as before.
    const from = c.msgs.length;
    c.send(`{"id":1,"op":"ping","id":2}`);
    const refusal = await c.until((m) => m.type === 'error', 3000, from);
    expect(refusal.code).toBe('rate_limited');
    expect('id' in refusal).toBe(false);
    expect(c.closed).toBeUndefined();
    c.close();
  });
});
