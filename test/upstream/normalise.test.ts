import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { endpoint, type ResponseSpec } from '../../src/upstream/catalogue.js';
import type { FieldType } from '../../src/upstream/fields.js';
import { coerceValue, normaliseBody, normaliseRow, unwrap } from '../../src/upstream/normalise.js';

describe('coerceValue', () => {
  const cases: [FieldType, unknown, string | number | null | undefined][] = [
    // numbers become zero-padded strings of the declared width
    ['s8', 9544500, '09544500'],
    ['s8', 0, '00000000'],
    ['s8', '9000400', '09000400'],
    ['s8', 20220602, '20220602'],
    ['s8', '20220602', '20220602'],
    ['s8', 31000000, '31000000'],
    ['s3', 13, '013'],
    ['s2', 1, '01'],
    ['s6', 202206, '202206'],
    ['s12', '1', '000000000001'],
    // non-digit text is not padded
    ['s8', '12:00:00', '12:00:00'],
    ['s', 12, '12'],
    ['s', 'N', 'N'],
    // numeric strings become numbers
    ['n', '1,234', 1234],
    ['n', ' 12.5', 12.5],
    ['n', '-0.6', -0.6],
    ['n', '1,234,567.25', 1234567.25],
    ['n', 42, 42],
    ['n', -4.15, -4.15],
    // placeholders become null, for every type
    ['n', ' -', null],
    ['n', '', null],
    ['n', '-', null],
    ['n', null, null],
    ['s', ' -', null],
    ['s1', '', null],
    ['s8', '-', null],
    ['c', null, null],
    // board suffix of short codes
    ['c', '005930*001', '005930'],
    ['c', '201S6212*006', '201S6212'],
    ['c', 'K2FA001', 'K2FA001'],
    ['c', ' 005930 ', '005930'],
    // unusable values
    ['n', 'abc', undefined],
    ['n', '0x1A', undefined],
    ['n', 'Infinity', undefined],
    ['n', true, undefined],
    ['n', { a: 1 }, undefined],
    ['s', [1], undefined],
    ['s8', Number.NaN, undefined],
  ];
  it.each(cases)('%s %j -> %j', (type, input, expected) => {
    expect(coerceValue(type, input)).toStrictEqual(expected);
  });
});

describe('normaliseRow', () => {
  const table = { isuSrtCd: 'c', isuKorAbbrv: 's', lstAskbidTpCd: 's1', srtsellTrdvol: 'n', trdPrc: 'n' } as const;

  it('renames known aliases to the table names', () => {
    const row = normaliseRow({ isuSrtCd: '005930', isuKorAbbr: '삼성전자', lstTrdTpCd: 0, srtsellTrdVol: '304,382' }, table);
    expect(row).toStrictEqual({ isuSrtCd: '005930', isuKorAbbrv: '삼성전자', lstAskbidTpCd: '0', srtsellTrdvol: 304382 });
  });

  it('keeps the canonical field when both it and its alias are present', () => {
    const row = normaliseRow({ isuSrtCd: '1', isuKorAbbrv: 'A', isuKorAbbr: 'B' }, table);
    expect(row).toStrictEqual({ isuSrtCd: '1', isuKorAbbrv: 'A', isuKorAbbr: 'B' });
  });

  it('keeps unknown fields as they are', () => {
    const row = normaliseRow({ isuSrtCd: '005930', newField: 'x', nested: { a: 1 } }, table);
    expect(row).toStrictEqual({ isuSrtCd: '005930', newField: 'x', nested: { a: 1 } });
  });

  it('reports why a row is unusable', () => {
    expect(normaliseRow({ isuSrtCd: '1', trdPrc: 'abc' }, table)).toBe('trdPrc: "abc" is not a valid number');
    expect(normaliseRow({ trdPrc: 1 }, table, 'isuSrtCd')).toBe('missing isuSrtCd');
    expect(normaliseRow({ isuSrtCd: ' -' }, table, 'isuSrtCd')).toBe('missing isuSrtCd');
    expect(normaliseRow({ isuSrtCd: '1' }, table, 'isuSrtCd', ['trdPrc'])).toBe('missing trdPrc');
    expect(normaliseRow([1, 2], table)).toBe('row is not an object');
    expect(normaliseRow('row', table)).toBe('row is not an object');
    expect(normaliseRow(null, table)).toBe('row is not an object');
  });
});

describe('normaliseRow without aliases', () => {
  const table = { isuSrtCd: 'c', isuKorAbbrv: 's', trdTm: 's8', cmpprevddTpCd: 's1', trdPrc: 'n', mktcap: 'n' } as const;
  const raw = fc.oneof(
    fc.integer(),
    fc.double(),
    fc.constantFrom(null, '', ' -', '-', '1,234', '0012', '005930', '005930*01', ' 005930 ', '9', 'abc', '삼성전자', '0x1A', 'Infinity'),
    fc.string({ maxLength: 6 }),
    fc.constant({ nested: 1 }),
  );
  const rowArb = fc.record(
    { isuSrtCd: raw, isuKorAbbrv: raw, trdTm: raw, cmpprevddTpCd: raw, trdPrc: raw, mktcap: raw, extra: raw },
    { requiredKeys: [], noNullPrototype: true },
  );

  /** What normalising means, field by field: declared fields coerced, unknown fields kept. */
  function expected(src: Record<string, unknown>): Record<string, unknown> | string {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(src)) {
      const type = (table as Record<string, FieldType>)[k];
      if (type === undefined) out[k] = v;
      else {
        const c = coerceValue(type, v);
        if (c === undefined) return 'invalid';
        out[k] = c;
      }
    }
    return out.isuSrtCd === undefined || out.isuSrtCd === null ? 'missing' : out;
  }

  it('equals coercing every field, keeps rows already normal as they are and never changes its input', () => {
    fc.assert(
      fc.property(rowArb, (src) => {
        const before = structuredClone(src);
        const got = normaliseRow(src, table, 'isuSrtCd');
        const want = expected(src);
        expect(src).toStrictEqual(before);
        if (typeof want === 'string') {
          expect(typeof got).toBe('string');
          return;
        }
        expect(got).toStrictEqual(want);
        // A row that needed no change is the same object; one that did is a copy.
        const unchanged = Object.keys(want).every((k) => Object.is(want[k], (src as Record<string, unknown>)[k]));
        expect(got === src).toBe(unchanged);
      }),
      { numRuns: 3000 },
    );
  });
});

describe('unwrap', () => {
  it('removes the jsonrpc envelope', () => {
    expect(unwrap({ jsonrpc: '2.0', result: { a: 1 } })).toStrictEqual({ body: { a: 1 }, envelope: 'wrapped' });
    expect(unwrap({ result: { a: 1 } })).toStrictEqual({ body: { a: 1 }, envelope: 'wrapped' });
  });
  it('leaves a bare body as it is', () => {
    expect(unwrap({ trdDd: '20220602', isuLists: [] })).toStrictEqual({
      body: { trdDd: '20220602', isuLists: [] },
      envelope: 'bare',
    });
    // a field that happens to be called result, next to others, is not an envelope
    expect(unwrap({ result: { a: 1 }, other: 2 })?.envelope).toBe('bare');
  });
  it('refuses what is not an object', () => {
    for (const body of [null, [], 'x', 1, true]) expect(unwrap(body)).toBeUndefined();
  });
});

describe('normaliseBody', () => {
  const lists = endpoint('v3.realtime.multiquote.lists').response;
  const price = endpoint('v3.realtime.multiquote.price').response;
  const master = endpoint('v3.closed.master').response;

  it('drops and counts each unusable row; the others survive', () => {
    const r = normaliseBody(lists, {
      trdDd: 20220602,
      trdTm: '93039',
      isuLists: [
        { isuSrtCd: '000020', trdPrc: 11900 },
        { isuSrtCd: '000040', trdPrc: 'abc' },
        { trdPrc: 776 },
        'not a row',
        { isuSrtCd: '000050*001', trdPrc: '14,900', accTrdvol: ' -' },
      ],
    });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.dropped).toBe(3);
    expect(r.value.rows).toStrictEqual([
      { isuSrtCd: '000020', trdPrc: 11900 },
      { isuSrtCd: '000050', trdPrc: 14900, accTrdvol: null },
    ]);
    expect(r.value.issues.map((i) => i.index)).toStrictEqual([1, 2, 3]);
    expect(r.value.data).toStrictEqual({ trdDd: '20220602', trdTm: '093039', isuLists: r.value.rows });
  });

  it('finds the multi-quote list under its alias and unwraps the envelope', () => {
    const wrapped = { jsonrpc: '2.0', result: { isulist: [{ isuSrtCd: '005930', trdPrc: 66700, trdTm: 9544500 }] } };
    const r = normaliseBody(price, wrapped);
    expect(r.ok && r.value.rows).toStrictEqual([{ isuSrtCd: '005930', trdPrc: 66700, trdTm: '09544500' }]);
    // the bare form of the same list under the spec's own key
    const bare = normaliseBody(price, { isulist: [{ isuSrtCd: '005930', trdPrc: 1 }] });
    expect(bare.ok && bare.value.rows.length).toBe(1);
    const otherAlias = normaliseBody(price, { isuLists: [{ isuSrtCd: '005930', trdPrc: 1 }] });
    expect(otherAlias.ok && otherAlias.value.data.isulist).toStrictEqual([{ isuSrtCd: '005930', trdPrc: 1 }]);
  });

  it('nulls an unusable top-level field and reports it, keeping the body', () => {
    const r = normaliseBody(master, { jsonrpc: '2.0', result: { isuSrtCd: '005930', basPrc: 'n/a', kospi50Yn: ' -' } });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.data).toStrictEqual({ isuSrtCd: '005930', basPrc: null, kospi50Yn: null });
    expect(r.value.issues).toStrictEqual([{ index: -1, field: 'basPrc', reason: '"n/a" is not valid' }]);
    expect(r.value.rows).toStrictEqual([]);
  });

  it('treats a missing or null list as empty', () => {
    for (const body of [{ trdDd: '20220602' }, { trdDd: '20220602', isuLists: null }]) {
      const r = normaliseBody(lists, body);
      expect(r.ok && r.value.rows).toStrictEqual([]);
      expect(r.ok && r.value.dropped).toBe(0);
    }
  });

  it('fails a body that is not an object, or whose list is not an array', () => {
    const bad: [ResponseSpec, unknown, string][] = [
      [lists, [1, 2], 'body is not a JSON object'],
      [lists, 'text', 'body is not a JSON object'],
      [lists, null, 'body is not a JSON object'],
      [lists, { isuLists: { isuSrtCd: '1' } }, 'isuLists is not an array'],
      [price, { jsonrpc: '2.0', result: { isulist: 'x' } }, 'isulist is not an array'],
    ];
    for (const [spec, body, reason] of bad) expect(normaliseBody(spec, body)).toStrictEqual({ ok: false, reason });
  });

  it('keeps at most 20 issues but counts every dropped row', () => {
    const rows = Array.from({ length: 30 }, () => ({ trdPrc: 1 }));
    const r = normaliseBody(lists, { isuLists: rows });
    expect(r.ok && r.value.dropped).toBe(30);
    expect(r.ok && r.value.issues.length).toBe(20);
  });

  it('keeps a scalar list (holidays) in data, dropping unusable values', () => {
    const r = normaliseBody(endpoint('v3.extra.holiday').response, { marketCd: 'KR', lists: ['20220606', 20220815, {}, ' -'] });
    expect(r.ok && r.value.data).toStrictEqual({ marketCd: 'KR', lists: ['20220606', '20220815'] });
    expect(r.ok && r.value.dropped).toBe(2);
  });
});
