import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TopicSlots, scanUpdates, type FrameSink } from '../../bench/load/scan.js';

const slots = new TopicSlots(['quote.kospi.000020', 'quote.kospi.005930', 'quote.kospi.A0001X'], 'quote.kospi.');

function record(text: string, stamp?: string): { n: number; seen: unknown[] } {
  // As the pool reads a frame: its bytes as latin1 text, a message handed back by that range of the bytes.
  const bytes = Buffer.from(text);
  const seen: unknown[] = [];
  const sink: FrameSink = {
    patch: (slot, seq, ts) => seen.push(['patch', slot, seq, ts]),
    snapshot: (slot, seq) => seen.push(['snapshot', slot, seq]),
    unknown: () => seen.push(['unknown']),
    other: (start, end) => seen.push(['other', JSON.parse(bytes.toString('utf8', start, end))]),
  };
  return { n: scanUpdates(bytes.toString('latin1'), slots, sink, stamp), seen };
}

describe('TopicSlots', () => {
  it('resolves six-digit codes by index and other topics by map', () => {
    const t = 'x"quote.kospi.005930"';
    expect(slots.at(t, 2, 20)).toBe(1);
    expect(slots.get('quote.kospi.A0001X')).toBe(2);
    const u = '"quote.kospi.A0001X"';
    expect(slots.at(u, 1, 19)).toBe(2);
    expect(slots.at('"quote.kospi.999999"', 1, 19)).toBe(-1);
    expect(slots.get('quote.kosdaq.000020')).toBe(-1);
  });
});

describe('scanUpdates', () => {
  it('reads a batch of bridge messages as JSON.parse would', () => {
    const frame = JSON.stringify([
      { type: 'patch', topic: 'quote.kospi.000020', seq: 12, ts: 1712345678901.125, ops: [{ op: 'replace', path: '/trdPrc', value: 5 }], crc: 7 },
      { type: 'snapshot', topic: 'quote.kospi.005930', seq: 3, ts: 1712345678000, data: { isuSrtCd: '005930', seq: 99 }, crc: 1 },
      { type: 'patch', topic: 'quote.kospi.A0001X', seq: 1, ts: 1712345678902, ops: [], crc: 0 },
    ]);
    const { n, seen } = record(frame);
    expect(n).toBe(3);
    expect(seen).toEqual([
      ['patch', 0, 12, expect.closeTo(1712345678901.125, 6)],
      ['snapshot', 1, 3],
      ['patch', 2, 1, 1712345678902],
    ]);
  });

  it('takes a patch’s time from its stamp field, in µs, when given the stamp key; NaN without one', () => {
    const ops = (stamp: number[]) => [{ op: 'replace', path: '/trdPrc', value: 5 }, ...stamp.map((v) => ({ op: 'replace', path: '/answeredUs', value: v }))];
    const frame = JSON.stringify([
      { type: 'patch', topic: 'quote.kospi.000020', seq: 2, ts: 1, ops: ops([1712345678901234]), crc: 7 },
      { type: 'patch', topic: 'quote.kospi.005930', seq: 3, ts: 2, ops: ops([]), crc: 1 },
      { type: 'patch', topic: 'quote.kospi.A0001X', seq: 4, ts: 3, ops: ops([1712345678999000]), crc: 0 },
    ]);
    const seen = record(frame, '"path":"/answeredUs","value":').seen.map((x) => (x as unknown[]).slice(1));
    // The second patch has no stamp: the third's must not be taken for it.
    expect(seen).toEqual([
      [0, 2, 1712345678901.234],
      [1, 3, NaN],
      [2, 4, 1712345678999],
    ]);
  });

  it('reads a single message frame', () => {
    const { seen } = record('{"type":"patch","topic":"quote.kospi.005930","seq":7,"ts":5.5,"ops":[]}');
    expect(seen).toEqual([['patch', 1, 7, 5.5]]);
  });

  it('reports unknown topics and messages missing a field', () => {
    const { seen } = record(
      '[{"type":"patch","topic":"quote.kospi.123456","seq":1,"ts":1},{"type":"patch","topic":"quote.kospi.000020"},{"type":"patch","topic":"quote.kospi.000020","seq":"x","ts":1}]',
    );
    expect(seen).toEqual([['unknown'], ['unknown'], ['unknown']]);
  });
});

describe('other messages', () => {
  it('hands each one back by its range, updates around it still scanned', () => {
    const { n, seen } = record(
      '[{"type":"subscribed","id":1,"topics":["quote.kospi.*"]},{"type":"snapshot","topic":"quote.kospi.000020","seq":1,"ts":2,"data":{},"crc":0},{"type":"status","market":"kospi","channel":"quote","state":"live","intervalMs":1000,"ts":3}]',
    );
    expect(n).toBe(3);
    expect(seen).toEqual([
      ['other', { type: 'subscribed', id: 1, topics: ['quote.kospi.*'] }],
      ['snapshot', 0, 1],
      ['other', { type: 'status', market: 'kospi', channel: 'quote', state: 'live', intervalMs: 1000, ts: 3 }],
    ]);
  });

  it('hands back a single non-update frame whole, and finds nothing in a frame without a type', () => {
    expect(record('{"type":"welcome","version":"1"}').seen).toEqual([['other', { type: 'welcome', version: '1' }]]);
    expect(record('{"ok":50}')).toEqual({ n: 0, seen: [] });
  });
});

describe('scanUpdates against JSON.parse', () => {
  const STAMP = '"path":"/answeredUs","value":';
  const topic = fc.constantFrom('quote.kospi.000020', 'quote.kospi.005930', 'quote.kospi.A0001X', 'quote.kospi.999999', 'quote.kosdaq.000020', '종목');
  const extra = fc.option(fc.record({ x: fc.oneof(fc.string(), fc.integer(), fc.constant('"type":"patch"')) }), { nil: undefined });
  const op = fc.oneof(
    fc.record({ op: fc.constant('replace'), path: fc.constantFrom('/trdPrc', '/answeredUs', '/memo'), value: fc.oneof(fc.nat(), fc.string()) }),
    fc.record({ op: fc.constant('remove'), path: fc.constant('/x') }),
  );
  // Messages as the peers write them (type, topic, seq, ts first), sometimes with a field between, and other messages.
  const message = fc.oneof(
    fc
      .record({ topic, seq: fc.integer({ min: 1, max: 2 ** 40 }), ts: fc.nat(), ops: fc.array(op, { maxLength: 4 }), extra })
      .map(({ topic, seq, ts, ops, extra }) => ({
        type: 'patch',
        topic,
        ...extra,
        seq,
        ts,
        ops,
        crc: 1,
      })),
    fc.record({ topic, seq: fc.integer({ min: 1, max: 2 ** 40 }), ts: fc.nat(), extra }).map(({ topic, seq, ts, extra }) => ({
      type: 'snapshot',
      topic,
      seq,
      ...extra,
      ts,
      data: { isuSrtCd: '005930', seq: 3, note: '"type":"x"' },
      crc: 0,
    })),
    fc.record({ type: fc.constantFrom('status', 'subscribed', 'pong'), id: fc.nat(), note: fc.string({ unit: 'binary' }) }),
  );

  /** What the scanner must report for one parsed message. */
  function expected(m: Record<string, unknown>): unknown[] {
    if (m.type !== 'patch' && m.type !== 'snapshot') return ['other', m];
    const slot = slots.get(m.topic as string);
    if (slot < 0) return ['unknown'];
    if (m.type === 'snapshot') return ['snapshot', slot, m.seq];
    const stamp = (m.ops as { path: string; value?: unknown }[]).find((o) => o.path === '/answeredUs');
    // The scanner reads the first stamp key's number: a string value there is no number.
    const time = stamp === undefined ? NaN : typeof stamp.value === 'number' ? stamp.value / 1000 : NaN;
    return ['patch', slot, m.seq, time];
  }

  it('reads every frame of bridge-like messages as JSON.parse does', () => {
    fc.assert(
      fc.property(fc.array(message, { minLength: 1, maxLength: 8 }), fc.boolean(), (msgs, single) => {
        const frame = single ? JSON.stringify(msgs[0]) : JSON.stringify(msgs);
        const parsed = (single ? [msgs[0]] : msgs).map((m) => JSON.parse(JSON.stringify(m)) as Record<string, unknown>);
        const { n, seen } = record(frame, STAMP);
        expect(n).toBe(parsed.length);
        expect(seen).toEqual(parsed.map(expected));
      }),
      { numRuns: 500 },
    );
  });
});
