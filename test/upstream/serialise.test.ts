import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { messageWithData, serialisedData } from '../../src/upstream/cache.js';

/** A reply built around an answer's memoised bytes is byte for byte the JSON.stringify of the whole message. */
describe('messageWithData', () => {
  const scalar = fc.oneof(fc.string(), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constant(null), fc.boolean());
  const data = fc.dictionary(fc.string(), fc.oneof(scalar, fc.array(fc.dictionary(fc.string(), scalar), { maxLength: 3 })));
  const head = fc.record(
    { type: fc.constant('result'), id: fc.oneof(fc.integer(), fc.string({ maxLength: 8 })), resource: fc.string(), code: fc.string(), ts: fc.integer() },
    { requiredKeys: ['type'] },
  );

  it('equals JSON.stringify of the message with data as its last key', () => {
    fc.assert(
      fc.property(head, data, (h, d) => {
        const bytes = Buffer.concat(messageWithData(h, 'data', d)).toString();
        expect(bytes).toBe(JSON.stringify({ ...h, data: d }));
      }),
    );
  });

  it('leaves out undefined head fields as JSON.stringify does, and handles an empty head', () => {
    const d = { a: [1, '이름'] };
    expect(Buffer.concat(messageWithData({ type: 'result', id: undefined, ts: 1 }, 'data', d)).toString()).toBe(
      JSON.stringify({ type: 'result', id: undefined, ts: 1, data: d }),
    );
    expect(Buffer.concat(messageWithData({}, 'data', d)).toString()).toBe(JSON.stringify({ data: d }));
  });

  it('serialises an answer once', () => {
    const d = { rows: [{ x: 1 }] };
    expect(serialisedData(d)).toBe(serialisedData(d));
  });
});
