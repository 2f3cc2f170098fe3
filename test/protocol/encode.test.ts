import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../src/protocol/constants.js';
import { encode, errorFrame, statusFrame, welcomeFrame } from '../../src/protocol/encode.js';
import { wireError } from '../../src/protocol/errors.js';
import { ServerMsg } from '../../src/protocol/messages.js';
import { messageWithData } from '../../src/upstream/cache.js';

const keysOf = (text: string): string[] => Object.keys(JSON.parse(text) as object);

describe('encode', () => {
  it('writes fields in schema order, whatever order the object has; leaves out undefined ones and any the schema does not declare', () => {
    const msg = { ts: 5, topics: ['quote.kospi.005930'], recovered: undefined, id: 7, type: 'subscribed' as const };
    expect(encode(msg)).toBe('{"type":"subscribed","id":7,"topics":["quote.kospi.005930"]}');
    expect(keysOf(encode({ ts: 1, id: 'a', type: 'pong' }))).toEqual(['type', 'id', 'ts']);
  });

  it('every frame builder writes a message its schema accepts, with the fields in schema order', () => {
    const frames = [
      errorFrame(wireError('invalid_code', 'not listed', 'quote.kospi.999999'), 3),
      errorFrame(wireError('rate_limited', 'slow down')),
      statusFrame({ market: 'kospi', channel: 'quote', state: 'closed', intervalMs: 0, ts: 10, opensAt: 20, asOf: 5 }),
      statusFrame({ market: 'kosdaq', channel: 'book', state: 'live', intervalMs: 1000, ts: 10 }),
      welcomeFrame('krx-bridge/1.0.0', 'e1', 15_000, DEFAULT_LIMITS, 99),
      welcomeFrame('krx-bridge/1.0.0', 'replay-20261124', 15_000, DEFAULT_LIMITS, 99, { date: '20261124', from: '090000', to: '153000', speed: 'max' }),
    ];
    for (const f of frames) {
      const msg = ServerMsg.parse(JSON.parse(f));
      expect(f).toBe(encode(msg));
      const order = ServerMsg.options.find((o) => o.shape.type.value === msg.type)!.shape;
      const schemaKeys = Object.keys(order);
      expect(keysOf(f)).toEqual(schemaKeys.filter((k) => k in JSON.parse(f)));
    }
    expect(JSON.parse(frames[0]!)).toMatchObject({ type: 'error', id: 3, code: 'invalid_code', retryable: false, topic: 'quote.kospi.999999' });
  });

  it('a result built from parts (its data serialised once per answer) is byte-identical to encode()', () => {
    const scalar = fc.oneof(fc.integer(), fc.double(), fc.string(), fc.boolean(), fc.constant(null));
    const data = fc.dictionary(fc.string({ maxLength: 6 }), fc.oneof(scalar, fc.array(fc.dictionary(fc.string({ maxLength: 4 }), scalar), { maxLength: 3 })));
    fc.assert(
      fc.property(
        data,
        fc.option(fc.oneof(fc.integer(), fc.string({ maxLength: 8 })), { nil: undefined }),
        fc.option(fc.constantFrom('005930', '1001'), { nil: undefined }),
        fc.option(fc.integer({ min: 1, max: 99 }), { nil: undefined }),
        fc.integer({ min: 0, max: 2 ** 42 }),
        (d, id, code, dropped, ts) => {
          const head = { type: 'result', id, resource: 'lists', market: 'kospi', code, ts, ...(dropped ? { dropped } : {}) };
          const built = Buffer.concat(messageWithData(head, 'data', d)).toString();
          expect(built).toBe(encode({ type: 'result', id, resource: 'lists', market: 'kospi', code, ts, dropped, data: d }));
        },
      ),
      { numRuns: 500 },
    );
  });
});
