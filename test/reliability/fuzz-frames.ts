import fc from 'fast-check';
import { CHANNELS, GET_MARKETS, MARKETS, RESOURCES } from '../../src/protocol/constants.js';

/**
 * Generators of malformed and adversarial client frames for the protocol
 * fuzz test, each tagged with what the server may answer: `reply` (a coded
 * error or a valid answer), or a documented close.
 */

/** One fuzz frame and the kind it was generated as. */
export interface FuzzFrame {
  readonly kind: string;
  readonly data: string | Uint8Array;
  readonly binary: boolean;
  /** Close codes the server may answer this frame with (besides a reply). */
  readonly closes: readonly number[];
}

const text = (kind: string, data: string, closes: readonly number[] = []): FuzzFrame => ({ kind, data, binary: false, closes });
const json = (kind: string, value: unknown): FuzzFrame => text(kind, JSON.stringify(value));

/** Strings meant to trip validation: empty, whitespace, control characters, unicode, lookalikes, long. */
export const nastyString = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    '005930\u0000',
    ' 005930',
    '００５９３０',
    '٠٠٥٩٣٠',
    '005930 ',
    '*',
    '**',
    '.',
    '..',
    'quote.kospi.',
    '\u202e005930',
    '\ud800',
    '\udfff',
    '🙂',
    'NaN',
    'null',
    'undefined',
    '__proto__',
    'constructor',
    'prototype',
    'hasOwnProperty',
    'toString',
    'KOSPI',
    'Quote',
  ),
  fc.string({ maxLength: 24 }),
  fc.string({ unit: 'binary', maxLength: 24 }),
  fc.string({ unit: 'grapheme', maxLength: 8 }),
  fc.string({ minLength: 17, maxLength: 80 }),
);

/** Request ids at and past the edges of what the protocol accepts. */
export const edgeId = fc.oneof(
  fc.constantFrom(
    0,
    -0,
    -1,
    1.5,
    2 ** 53 - 1,
    -(2 ** 53) + 1,
    2 ** 53 + 2,
    1e308,
    -1e308,
    5e-324,
    '',
    'x'.repeat(64),
    'x'.repeat(65),
    null,
    true,
    false,
    [],
    {},
    [1],
    { id: 1 },
  ),
  fc.integer(),
  fc.double(),
  fc.string({ maxLength: 70 }),
  fc.string({ unit: 'binary', maxLength: 70 }),
);

/** Valid-looking request pieces mixed with nasty ones. */
function pieces(codes: readonly string[]) {
  const channel = fc.oneof(fc.constantFrom(...CHANNELS), nastyString);
  const market = fc.oneof(fc.constantFrom(...GET_MARKETS), nastyString);
  const code = fc.oneof(fc.constantFrom(...codes), fc.constantFrom('999999', '000000', 'K1', 'Q1', 'K999', '*'), nastyString);
  return { channel, market, code, resource: fc.oneof(fc.constantFrom(...RESOURCES), nastyString) };
}

/** Frames built from `codes` (listed stock codes) and a counter for unique ids. */
export function fuzzFrames(codes: readonly string[], maxPayload: number): fc.Arbitrary<FuzzFrame> {
  const p = pieces(codes);
  const codesArr = fc.array(p.code, { minLength: 0, maxLength: 30 });
  const anything = fc.anything({ maxDepth: 3, maxKeys: 5 });
  const deep = fc.integer({ min: 2, max: 45_000 });

  const garbage = fc.oneof(
    fc.string({ maxLength: 200 }).map((s) => text('garbage', s)),
    fc.string({ unit: 'binary', maxLength: 200 }).map((s) => text('garbage', s)),
    fc
      .constantFrom(
        '{',
        '}',
        '[',
        '{"op":',
        '{"op":"ping"',
        '{"op":"ping"}}',
        '{"op":"ping",}',
        "{'op':'ping'}",
        'null',
        'true',
        '0',
        '""',
        '[]',
        '{}',
        '[{"op":"ping"}]',
        '\ufeff{"op":"ping"}',
        '{"op":"ping"}\u0000',
      )
      .map((s) => text('garbage', s)),
    fc.jsonValue({ maxDepth: 3 }).map((v) => json('json-value', v)),
  );
  const binary = fc.uint8Array({ maxLength: 300 }).map((b): FuzzFrame => ({ kind: 'binary', data: b, binary: true, closes: [] }));
  const nesting = fc.oneof(
    deep.map((n) => text('deep-array', '['.repeat(n) + ']'.repeat(n))),
    deep.map((n) => text('deep-object', '{"a":'.repeat(n) + '1' + '}'.repeat(n))),
    deep.map((n) => text('deep-params', `{"op":"get","resource":"history","market":"kospi","code":"005930","params":${'{"a":'.repeat(n)}1${'}'.repeat(n)}}`)),
    deep.map((n) => text('deep-unclosed', '['.repeat(n))),
  );
  const huge = fc.integer({ min: maxPayload - 2048, max: maxPayload + 2048 }).map((n) => {
    const head = '{"op":"ping","id":"big","pad":"';
    const pad = Math.max(0, n - head.length - 2);
    return text('huge', head + 'x'.repeat(pad) + '"}', [1009]);
  });
  const wrongTypes = fc
    .record(
      {
        op: fc.constantFrom('subscribe', 'unsubscribe', 'get', 'resync', 'ping'),
        id: edgeId,
        channel: anything,
        market: anything,
        codes: anything,
        resource: anything,
        code: anything,
        params: anything,
        topic: anything,
        since: anything,
        epoch: anything,
      },
      { requiredKeys: ['op'] },
    )
    .map((v) => json('wrong-types', v));
  const unknownOp = fc
    .oneof(nastyString, anything)
    .filter((op) => !['subscribe', 'unsubscribe', 'get', 'resync', 'ping'].includes(op as string))
    .map((op) => json('unknown-op', { op, id: 1 }));
  const invalidTarget = fc.oneof(
    fc.record({ op: fc.constantFrom('subscribe', 'unsubscribe'), channel: p.channel, market: p.market, codes: codesArr }).map((v) => json('invalid-target', v)),
    fc
      .record({
        op: fc.constant('get'),
        resource: p.resource,
        market: p.market,
        code: p.code,
        params: fc.option(fc.dictionary(nastyString, anything, { maxKeys: 4 }), { nil: undefined }),
      })
      .map((v) => json('invalid-get', v)),
    fc
      .record({
        op: fc.constant('resync'),
        topic: fc.oneof(
          nastyString,
          fc.tuple(p.channel, p.market, p.code).map((t) => t.join('.')),
        ),
      })
      .map((v) => json('resync', v)),
  );
  const flood = fc
    .record({ channel: fc.constantFrom('quote', 'top', 'price', 'book'), market: fc.constant('kospi'), n: fc.integer({ min: 40, max: 1000 }) })
    .map(({ channel, market, n }) => json('flood', { op: 'subscribe', channel, market, codes: Array.from({ length: n }, (_, i) => codes[i % codes.length]) }));
  const ids = edgeId.map((id) => json('edge-id', { op: 'ping', id }));
  const pollution = fc
    .constantFrom(
      '{"op":"ping","id":1,"__proto__":{"polluted":true}}',
      '{"__proto__":{"op":"ping"},"id":2}',
      '{"op":"ping","constructor":{"prototype":{"polluted":true}}}',
      '{"op":"subscribe","channel":"quote","market":"kospi","codes":["005930"],"since":{"__proto__":5,"constructor":1},"epoch":"x"}',
      '{"op":"subscribe","channel":"quote","market":"kospi","codes":["005930"],"since":{"__proto__":{"polluted":1}}}',
      '{"op":"get","resource":"history","market":"kospi","code":"005930","params":{"__proto__":{"count":5,"polluted":true},"from":"20260101","to":"20260110"}}',
      '{"op":"get","resource":"master","market":"kospi","code":"005930","params":{"constructor":{"prototype":{"polluted":true}}}}',
      '{"op":"__proto__","id":3}',
      '{"op":"constructor","id":4}',
      '{"op":"subscribe","channel":"__proto__","market":"constructor","codes":["toString"]}',
      '{"op":"resync","topic":"__proto__.constructor.prototype"}',
      '{"op":"resync","topic":"quote.__proto__.005930"}',
    )
    .map((s) => text('pollution', s));
  const valid = fc.oneof(
    fc
      .record({
        channel: fc.constantFrom(...CHANNELS.filter((c) => c !== 'index')),
        market: fc.constant('kospi'),
        codes: fc.subarray([...codes], { minLength: 1, maxLength: 3 }),
      })
      .map((v) => json('valid-subscribe', { op: 'subscribe', ...v })),
    fc
      .record({ channel: fc.constantFrom(...CHANNELS), market: fc.constantFrom(...MARKETS), codes: fc.subarray([...codes], { minLength: 1, maxLength: 5 }) })
      .map((v) => json('valid-unsubscribe', { op: 'unsubscribe', ...v })),
    fc.constantFrom(...codes).map((code) => json('valid-get', { op: 'get', resource: 'master', market: 'kospi', code })),
    fc.constant(json('valid-get', { op: 'get', resource: 'lists', market: 'konex' })),
    fc.constantFrom(...codes).map((code) => json('valid-resync', { op: 'resync', topic: `quote.kospi.${code}` })),
    fc.constant(json('valid-ping', { op: 'ping' })),
  );
  return fc.oneof(
    { arbitrary: garbage, weight: 14 },
    { arbitrary: binary, weight: 6 },
    { arbitrary: nesting, weight: 3 },
    { arbitrary: huge, weight: 1 },
    { arbitrary: wrongTypes, weight: 14 },
    { arbitrary: unknownOp, weight: 6 },
    { arbitrary: invalidTarget, weight: 22 },
    { arbitrary: flood, weight: 3 },
    { arbitrary: ids, weight: 8 },
    { arbitrary: pollution, weight: 3 },
    { arbitrary: valid, weight: 10 },
  );
}
