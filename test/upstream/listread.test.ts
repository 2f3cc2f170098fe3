import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { StateStore, type ChangeBatch } from '../../src/state/store.js';
import { readBody, type BodyRead } from '../../src/upstream/body.js';
import { endpoint, type Endpoint } from '../../src/upstream/catalogue.js';
import { ListReader } from '../../src/upstream/listread.js';

/**
 * The incremental list reader against the plain way (JSON.parse of the
 * text, normaliseBody): over generated sequences of bodies that drift the
 * way the upstream's do, the normalised bodies are the same, and a state
 * store fed each way publishes the same events.
 */

const LISTS = endpoint('v2.multiquote.lists');
const PRICE = endpoint('v2.multiquote.price');

/** One field as written: its key and its value's JSON text. */
interface Field {
  key: string;
  text: string;
}

/** A row as written: its fields in order and its whitespace style. */
interface RowModel {
  fields: Field[];
  style: number;
}

/** A body as written. */
interface BodyModel {
  rows: RowModel[];
  envelope: 'bare' | 'wrapped' | 'alias' | 'extra';
}

const STYLES = [
  ['{', ':', ',', '}'],
  ['{ ', ': ', ', ', ' }'],
  ['{\n  ', ' : ', ',\n  ', '\n}'],
  ['{\t', ':\r\n', ' ,', '}'],
] as const;

function rowText(r: RowModel): string {
  const [open, colon, comma, close] = STYLES[r.style % STYLES.length]!;
  if (r.fields.length === 0) return '{}';
  return open + r.fields.map((f) => JSON.stringify(f.key) + colon + f.text).join(comma) + close;
}

function bodyText(b: BodyModel, e: Endpoint, broken?: string): string {
  const key = b.envelope === 'alias' ? e.response.list!.aliases[0]! : e.response.list!.key;
  let rows = b.rows.map(rowText);
  if (broken === 'element') rows = [...rows, '7'];
  const list = `"${key}":[${rows.join(b.envelope === 'extra' ? ' ,\n' : ',')}]`;
  let text: string;
  if (b.envelope === 'wrapped') text = `{"jsonrpc":"2.0","result":{"trdDd":20240603,"trdTm":"090500",${list}}}`;
  else if (b.envelope === 'extra') text = ` {"trdDd":"20240603","note":{"a":[1,"]"]},${list},"trdTm":" -"}\n`;
  else text = `{"trdDd":"20240603","trdTm":"090500",${list}}`;
  if (broken === 'truncate') return text.slice(0, Math.max(1, text.length - 7));
  if (broken === 'trailing') return text.replace(/\]\}+\s*$/, ',]}');
  if (broken === 'twice') return text.replace(/\}\s*$/, `,"${key}":[]}`);
  return text;
}

const CODES = ['"005930"', '"000660"', '"373220"', '"0001A0"', '"035420"', '"068270"', '"105560"', '"247540"'];
// Codes as the upstream sometimes writes them: board suffix, padding, escapes, a number, nothing.
const ODD_CODES = ['"005930*001"', '" 000660 "', '"\\u0030\\u00300660"', '5930', 'null', '" -"', '"삼성"'];
const ODD_VALUES = [
  '" -"',
  'null',
  '""',
  '"1,234"',
  '"71000"',
  '1e3',
  '-0',
  '1.50',
  '12.5',
  '0',
  'true',
  '"abc"',
  '1e400',
  '"\\u0031\\u0032"',
  '"삼성전자"',
  '{"a":[1,"}"]}',
  '[1,2]',
  '"a\\"b"',
  '9544500',
  '"0954"',
  // Sixteen digits and more: safe integers up to 2^53 − 1 are their own JSON, larger ones are not.
  '1764000000123456',
  '9007199254740991',
  '9007199254740992',
  '-9007199254740991',
  '12345678901234567',
];
const EXTRA_KEYS = ['newFld', 'isuKorAbbr', 'IsuSrtCd', 'note', '1', 'a"b', 'trdTm', 'lstAskbidTpCd', '__proto__', 'cmpprevddTpCd'];
const NUMERIC = ['trdPrc', 'accTrdvol', 'accTrdval', 'mktcap'];

const intText = fc.integer({ min: 0, max: 999_999_999_999 }).map(String);
const valueText = fc.oneof({ arbitrary: intText, weight: 3 }, { arbitrary: fc.constantFrom(...ODD_VALUES), weight: 2 });

const rowArb: fc.Arbitrary<RowModel> = fc
  .record({
    code: fc.oneof({ arbitrary: fc.constantFrom(...CODES), weight: 5 }, { arbitrary: fc.constantFrom(...ODD_CODES), weight: 1 }),
    values: fc.array(intText, { minLength: 4, maxLength: 4 }),
    style: fc.nat(3),
  })
  .map(({ code, values, style }) => ({ fields: [{ key: 'isuSrtCd', text: code }, ...NUMERIC.map((key, k) => ({ key, text: values[k]! }))], style }));

/** One change from a body to the next. */
type Op =
  | { op: 'bump'; row: number; field: number; by: number }
  | { op: 'set'; row: number; field: number; text: string }
  | { op: 'respell'; row: number; field: number; how: number }
  | { op: 'insert'; at: number; row: RowModel }
  | { op: 'remove'; at: number }
  | { op: 'reorder'; row: number; by: number }
  | { op: 'addField'; row: number; key: string; text: string }
  | { op: 'removeField'; row: number; field: number }
  | { op: 'dup'; row: number }
  | { op: 'style'; row: number; style: number }
  | { op: 'envelope'; envelope: BodyModel['envelope'] }
  | { op: 'break'; how: string };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    arbitrary: fc.record({ op: fc.constant('bump' as const), row: fc.nat(), field: fc.integer({ min: 1, max: 4 }), by: fc.integer({ min: 1, max: 20_000 }) }),
    weight: 12,
  },
  { arbitrary: fc.record({ op: fc.constant('set' as const), row: fc.nat(), field: fc.nat(), text: valueText }), weight: 3 },
  { arbitrary: fc.record({ op: fc.constant('respell' as const), row: fc.nat(), field: fc.nat(), how: fc.nat(4) }), weight: 2 },
  { arbitrary: fc.record({ op: fc.constant('insert' as const), at: fc.nat(), row: rowArb }), weight: 1 },
  { arbitrary: fc.record({ op: fc.constant('remove' as const), at: fc.nat() }), weight: 1 },
  { arbitrary: fc.record({ op: fc.constant('reorder' as const), row: fc.nat(), by: fc.integer({ min: 1, max: 5 }) }), weight: 1 },
  { arbitrary: fc.record({ op: fc.constant('addField' as const), row: fc.nat(), key: fc.constantFrom(...EXTRA_KEYS), text: valueText }), weight: 1 },
  { arbitrary: fc.record({ op: fc.constant('removeField' as const), row: fc.nat(), field: fc.nat() }), weight: 1 },
  { arbitrary: fc.record({ op: fc.constant('dup' as const), row: fc.nat() }), weight: 1 },
  { arbitrary: fc.record({ op: fc.constant('style' as const), row: fc.nat(), style: fc.nat(3) }), weight: 1 },
  {
    arbitrary: fc.record({
      op: fc.constant('envelope' as const),
      envelope: fc.constantFrom('bare' as const, 'wrapped' as const, 'alias' as const, 'extra' as const),
    }),
    weight: 1,
  },
  { arbitrary: fc.record({ op: fc.constant('break' as const), how: fc.constantFrom('truncate', 'element', 'trailing', 'twice') }), weight: 1 },
);

/** Applies one op to the model; returns how the next body is broken, if it is. */
function applyOp(b: BodyModel, o: Op): string | undefined {
  const row = (i: number): RowModel | undefined => (b.rows.length ? b.rows[i % b.rows.length] : undefined);
  switch (o.op) {
    case 'bump': {
      const f = row(o.row)?.fields[o.field];
      if (f && /^\d+$/.test(f.text)) f.text = String(Number(f.text) + o.by);
      return undefined;
    }
    case 'set': {
      const r = row(o.row);
      if (r && r.fields.length) r.fields[o.field % r.fields.length]!.text = o.text;
      return undefined;
    }
    case 'respell': {
      // The same number written another way: the value does not change.
      const r = row(o.row);
      const f = r && r.fields.length ? r.fields[o.field % r.fields.length] : undefined;
      const n = f ? /^"?(\d+)"?$/.exec(f.text)?.[1] : undefined;
      if (f && n !== undefined) f.text = [`"${n}"`, `${n}.0`, `${n}e0`, `"${Number(n).toLocaleString('en-US')}"`, n][o.how % 5]!;
      return undefined;
    }
    case 'insert':
      b.rows.splice(o.at % (b.rows.length + 1), 0, structuredClone(o.row));
      return undefined;
    case 'remove':
      if (b.rows.length) b.rows.splice(o.at % b.rows.length, 1);
      return undefined;
    case 'reorder': {
      const r = row(o.row);
      if (r) r.fields = [...r.fields.slice(o.by % (r.fields.length || 1)), ...r.fields.slice(0, o.by % (r.fields.length || 1))];
      return undefined;
    }
    case 'addField':
      row(o.row)?.fields.push({ key: o.key, text: o.text });
      return undefined;
    case 'removeField': {
      const r = row(o.row);
      if (r && r.fields.length) r.fields.splice(o.field % r.fields.length, 1);
      return undefined;
    }
    case 'dup': {
      const r = row(o.row);
      if (r) b.rows.push(structuredClone(r));
      return undefined;
    }
    case 'style': {
      const r = row(o.row);
      if (r) r.style = o.style;
      return undefined;
    }
    case 'envelope':
      b.envelope = o.envelope;
      return undefined;
    case 'break':
      return o.how;
  }
}

/** What a client can tell of an event: the bytes it is sent (its frame as UTF-8) among them. */
function events(b: ChangeBatch): unknown[] {
  return b.events.map((e) => [e.topic, e.seq, e.kind, e.frame, e.bytes?.toString('base64'), e.crc, JSON.stringify(e.row)]);
}

/** What a caller can tell of a read body (values as JSON, where +0 and -0 are one). */
function outcome(r: BodyRead): unknown {
  if (!r.ok) return { kind: r.kind, reason: r.reason };
  const { data, rows, dropped, issues } = r.value;
  return { data: JSON.stringify(data), rows: JSON.stringify(rows), dropped, issues };
}

interface Tally {
  bodies: number;
  plain: number;
  same: number;
  changed: number;
  /** Bodies whose rows lined up with the last read's, so the store visited only the changed ones. */
  aligned: number;
}

/** Feeds every body to both ways and compares them; counts what the incremental way did. */
function compare(e: Endpoint, start: RowModel[], steps: Op[][], tally: Tally): void {
  const model: BodyModel = { rows: structuredClone(start), envelope: 'bare' };
  const reader = new ListReader();
  const fast = new StateStore({ epoch: 'e' });
  const plain = new StateStore({ epoch: 'e' });
  let lastRows: readonly object[] = [];
  // Every patch frame the fast store sent, by topic and seq: a resume must get these very frames again.
  const live = new Map<string, string>();
  // Every event's bytes and what they were when sent: later reads and applies must not change them.
  const sent: [Buffer, string][] = [];
  for (let i = 0; i <= steps.length; i++) {
    let broken: string | undefined;
    for (const o of i === 0 ? [] : steps[i - 1]!) broken = applyOp(model, o) ?? broken;
    const bytes = Buffer.from(bodyText(model, e, broken));
    const want = readBody(e, bytes);
    const got = readBody(e, bytes, reader);
    expect(outcome(got)).toEqual(outcome(want));
    if (!got.ok || !want.ok) continue;
    tally.bodies++;
    if (got.plain !== undefined) tally.plain++;
    if (got.delta !== undefined) {
      if (got.delta.aligned) tally.aligned++;
      for (let r = 0; r < got.value.rows.length; r++) {
        if (lastRows.includes(got.value.rows[r]!)) tally.same++;
        if (got.delta.changedCount(r) > 0) tally.changed++;
      }
    }
    lastRows = got.value.rows;
    const ts = 1_000 + i;
    const a = fast.apply('quote', 'kospi', got.value.rows, ts, undefined, got.delta);
    const b = plain.apply('quote', 'kospi', want.value.rows, ts);
    expect(events(a)).toEqual(events(b));
    for (const ev of a.events) {
      if (ev.kind === 'patch') live.set(`${ev.topic} ${ev.seq}`, ev.frame);
      sent.push([ev.bytes!, ev.bytes!.toString('base64')]);
    }
  }
  for (const [bytes, was] of sent) expect(bytes.toString('base64')).toBe(was);
  for (const e2 of plain.entries('quote', 'kospi')) {
    const mine = fast.entry('quote', 'kospi', e2.code)!;
    expect([mine.seq, mine.crc, mine.seenTs, JSON.stringify(mine.row)]).toEqual([e2.seq, e2.crc, e2.seenTs, JSON.stringify(e2.row)]);
    // A resume from any seq gets the same frames either way.
    for (let after = 0; after <= e2.seq; after++) {
      const got = fast.replay(mine, after);
      expect(got).toEqual(plain.replay(e2, after));
      if (got !== undefined) expect(got).toEqual(Array.from({ length: e2.seq - after }, (_, k) => live.get(`${e2.topic} ${after + 1 + k}`)));
    }
  }
}

describe('ListReader', () => {
  const sequences = fc.record({
    start: fc.array(rowArb, { minLength: 1, maxLength: 10 }),
    steps: fc.array(fc.array(opArb, { minLength: 0, maxLength: 6 }), { minLength: 1, maxLength: 12 }),
  });

  for (const e of [LISTS, PRICE]) {
    it(`reads ${e.id} bodies as the plain way does, and the store publishes the same events`, () => {
      const tally: Tally = { bodies: 0, plain: 0, same: 0, changed: 0, aligned: 0 };
      fc.assert(
        fc.property(sequences, ({ start, steps }) => compare(e, start, steps, tally)),
        { numRuns: Number(process.env.LISTREAD_RUNS ?? 150) },
      );
      // The property is about the incremental way: most bodies took it, with rows kept and rows changed in place.
      expect(tally.plain).toBeLessThan(tally.bodies / 4);
      expect(tally.same).toBeGreaterThan(tally.bodies);
      expect(tally.changed).toBeGreaterThan(tally.bodies / 2);
      // And a share of them lined up with the last read, which the store took by visiting only the changed rows.
      expect(tally.aligned).toBeGreaterThan(tally.bodies / 8);
    });
  }
});

describe('ListReader on literal bodies', () => {
  const row = (code: string, trdPrc: number, extra = '') => `{"isuSrtCd":"${code}","trdPrc":${trdPrc},"accTrdvol":7${extra}}`;
  const body = (...rows: string[]) => Buffer.from(`{"trdDd":"20240603","trdTm":"090500","isuLists":[${rows.join(',')}]}`);
  const read = (reader: ListReader, b: Buffer) => {
    const r = readBody(LISTS, b, reader);
    if (!r.ok || r.delta === undefined) throw new Error(`not read incrementally: ${JSON.stringify(r)}`);
    return r;
  };

  it('gives back the same row objects for the same bytes, and a changed copy for a changed value', () => {
    const reader = new ListReader();
    const first = read(reader, body(row('005930', 100), row('000660', 200)));
    const second = read(reader, body(row('005930', 100), row('000660', 210)));
    expect(second.value.rows[0]).toBe(first.value.rows[0]);
    expect(second.value.rows[1]).toStrictEqual({ isuSrtCd: '000660', trdPrc: 210, accTrdvol: 7 });
    expect([second.delta!.changedCount(0), second.delta!.changedCount(1), second.delta!.changedField(1, 0)]).toStrictEqual([0, 1, 1]);
    expect(second.delta!.base(1)).toBe(first.value.rows[1]);
    // A value written another way is not a change: the row stays the base.
    const third = read(reader, body(row('005930', 100), row('000660', 2.1e2)));
    expect(third.value.rows[1]).toBe(second.value.rows[1]);
    expect(third.delta!.changedCount(1)).toBe(0);
  });

  it('writes the frames of changed values as bytes that stay whole across buffers and later reads', () => {
    // 3,000 rows whose values all change each time: their frames fill several of the store's 64 KiB buffers.
    const reader = new ListReader();
    const fast = new StateStore({ epoch: 'e' });
    const plain = new StateStore({ epoch: 'e' });
    const codes = Array.from({ length: 3_000 }, (_, i) => String(100_000 + i));
    const sent: [Buffer, string][] = [];
    let written = 0;
    for (let step = 0; step < 4; step++) {
      const b = body(...codes.map((c, i) => row(c, 1_000_000 + 7 * i + step, step >= 2 ? ',"x":1' : '')));
      const got = read(reader, b);
      const want = readBody(LISTS, b);
      if (!want.ok) throw new Error('plain read failed');
      const a = fast.apply('quote', 'kospi', got.value.rows, 1_000 + step, undefined, got.delta);
      const p = plain.apply('quote', 'kospi', want.value.rows, 1_000 + step);
      expect(a.events.length).toBe(3_000);
      for (let k = 0; k < a.events.length; k++) {
        const e = a.events[k]!;
        // Written from the body's bytes: a view of one of the store's buffers (16 to 64 KiB), not an encoded text (small ones come from an 8 KiB pool).
        if (e.bytes!.buffer.byteLength >= 16 << 10) written++;
        expect(e.bytes!.equals(Buffer.from(p.events[k]!.frame))).toBe(true);
        sent.push([e.bytes!, p.events[k]!.frame]);
      }
    }
    // Steps 1 and 3 changed values only (step 2 added a field: rows read whole).
    expect(written).toBeGreaterThanOrEqual(6_000);
    for (const [bytes, frame] of sent) expect(bytes.toString('utf8')).toBe(frame);
  });

  it('finds rows again after rows appear and disappear', () => {
    const reader = new ListReader();
    const codes = ['000020', '000040', '000050', '000060', '000070'];
    const first = read(reader, body(...codes.map((c, i) => row(c, i))));
    const byCode = new Map(first.value.rows.map((r) => [r.isuSrtCd, r]));
    const shifted = read(reader, body(row('000010', 9), ...codes.slice(2).map((c, i) => row(c, i + 2))));
    expect(shifted.value.rows.slice(1).map((r) => byCode.get(r.isuSrtCd) === r)).toStrictEqual([true, true, true]);
  });

  it('reads a row with a nested or escaped value whole, and one with a new field whole, and keeps them after', () => {
    const reader = new ListReader();
    read(reader, body(row('005930', 1), row('000660', 2)));
    const odd = read(reader, body(row('005930', 1, ',"note":{"a":[1]}'), row('000660', 2, ',"name":"\\uc0bc\\""')));
    expect(odd.value.rows).toStrictEqual([
      { isuSrtCd: '005930', trdPrc: 1, accTrdvol: 7, note: { a: [1] } },
      { isuSrtCd: '000660', trdPrc: 2, accTrdvol: 7, name: '삼"' },
    ]);
    const again = read(reader, body(row('005930', 1, ',"note":{"a":[1]}'), row('000660', 3, ',"name":"\\uc0bc\\""')));
    expect(again.value.rows[0]).toBe(odd.value.rows[0]);
    expect(again.value.rows[1]).toStrictEqual({ isuSrtCd: '000660', trdPrc: 3, accTrdvol: 7, name: '삼"' });
  });

  it('refuses, with a reason, bodies of a shape it does not read, and they read the plain way to the same result', () => {
    const cases: [string, string][] = [
      ['[1,2]', 'envelope'],
      ['"text"', 'envelope'],
      ['{"trdDd":"20240603"}', 'envelope'],
      [`{"note":{"x":[{"a":1}]},"isuLists":[${row('005930', 1)}]}`, 'envelope'],
      [`{"isuLists":[${row('005930', 1)}],"isuLists":[]}`, 'envelope'],
      [`{"meta":[1],"isuLists":[${row('005930', 1)}]}`, 'rows'],
      [`{"isuLists":[${row('005930', 1)},null]}`, 'rows'],
      [`{"isuLists":[[${row('005930', 1)}]]}`, 'rows'],
      [`{"isuLists":[${row('005930', 1)},]}`, 'syntax'],
      [`{"isuLists":[${row('005930', 1)}`, 'syntax'],
      [`{"isuLists":[{"isuSrtCd":"005930","trdPrc":01}]}`, 'syntax'],
      [`\ufeff{"isuLists":[${row('005930', 1)}]}`, 'envelope'],
    ];
    for (const [text, reason] of cases) {
      const reader = new ListReader();
      const r = readBody(LISTS, Buffer.from(text), reader);
      expect([text, r.plain]).toStrictEqual([text, reason]);
      expect(outcome(r)).toStrictEqual(outcome(readBody(LISTS, Buffer.from(text))));
    }
  });
});
