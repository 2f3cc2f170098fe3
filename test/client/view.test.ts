import { describe, expect, expectTypeOf, it } from 'vitest';
import { Direction, viewOf, type Change, type RowView } from '../../src/client/index.js';
import type {
  AhtRow,
  AnyRow,
  BookRow,
  ExtraFields,
  HistoryRow,
  IndexRow,
  IntradayRow,
  MasterData,
  OhlcRow,
  PriceRow,
  QuoteRow,
  TopRow,
} from '../../src/client/rows.js';
import type { ChannelListener } from '../../src/client/types.js';

/** The readable view of rows, and the row types' exactness (type tests run by vitest's typecheck of this file through tsc). */

const NOON = Date.parse('2026-11-24T12:00:00+09:00');

describe('viewOf', () => {
  it('a price row', () => {
    const row: PriceRow = {
      isuSrtCd: '005930',
      trdPrc: 90_300,
      cmpprevddPrc: 200,
      cmpprevddTpCd: '2',
      opnprc: 90_100,
      hgprc: 90_600,
      lwprc: 89_400,
      accTrdvol: 1_494_436,
      accTrdval: 134_494_983_300,
      trdTm: '09300422',
    };
    expect(viewOf(row, NOON)).toEqual({
      price: 90_300,
      change: 200,
      changePct: 0.22,
      direction: Direction.Up,
      open: 90_100,
      high: 90_600,
      low: 89_400,
      volume: 1_494_436,
      value: 134_494_983_300,
      time: new Date('2026-11-24T09:30:04.220+09:00'),
    });
  });

  it('an intraday bar, read under the same names', () => {
    const bar: IntradayRow = { inddTm: '9100000', inddOpnprc: 10, inddHgprc: 12, inddLwprc: 9, inddClsprc: 11, inddTrdvol: 5, inddTrdval: 55 };
    expect(viewOf(bar, NOON)).toMatchObject({ price: 11, open: 10, high: 12, low: 9, volume: 5, value: 55, time: new Date('2026-11-24T09:10:00+09:00') });
  });

  it('the direction from the upstream code, else from the sign; what a row lacks is undefined', () => {
    expect(viewOf({ isuSrtCd: 'x', trdPrc: 130, cmpprevddPrc: 30, cmpprevddTpCd: '1' }, NOON).direction).toBe('upLimit');
    expect(viewOf({ isuSrtCd: 'x', trdPrc: 90, cmpprevddPrc: -10 }, NOON)).toMatchObject({ direction: 'down', changePct: -10 });
    expect(viewOf({ isuSrtCd: 'x', trdPrc: 100, mktcap: 1 } satisfies QuoteRow, NOON)).toMatchObject({
      price: 100,
      change: undefined,
      direction: undefined,
      time: undefined,
    });
    expect(viewOf({ isuSrtCd: 'x', trdPrc: null }, NOON).price).toBeUndefined();
  });
});

describe('types', () => {
  it('one readable view for every channel and for intraday bars', () => {
    expectTypeOf(viewOf).returns.toEqualTypeOf<RowView>();
    expectTypeOf<RowView['price']>().toEqualTypeOf<number | undefined>();
    expectTypeOf<RowView['direction']>().toEqualTypeOf<'upLimit' | 'up' | 'flat' | 'downLimit' | 'down' | undefined>();
    expectTypeOf<RowView['time']>().toEqualTypeOf<Date | undefined>();
    expectTypeOf<Change['view']>().toEqualTypeOf<RowView>();
    expectTypeOf<Parameters<ChannelListener<'price'>>[1]>().toEqualTypeOf<PriceRow>();
    expectTypeOf<Parameters<ChannelListener<'quote'>>[1]>().toEqualTypeOf<QuoteRow>();
  });

  it('a field the tables do not declare is read as the README says, on every row type', () => {
    const extra = <R extends AnyRow | HistoryRow | MasterData>(row: R): unknown => (row as R & ExtraFields).name;
    expect(extra({ isuSrtCd: '005930', name: 'x' } as QuoteRow)).toBe('x');
    const rows: [QuoteRow, PriceRow, BookRow, IndexRow, OhlcRow, TopRow, AhtRow, HistoryRow, MasterData, AnyRow] = [
      {},
      {},
      {},
      {},
      {},
      {},
      {},
      {},
      {},
      {},
    ] as never;
    expect(rows.map((r) => (r as (typeof rows)[number] & ExtraFields).name)).toEqual(Array(10).fill(undefined));
    expectTypeOf((rows[0] as QuoteRow & ExtraFields).name).toEqualTypeOf<unknown>();
    expectTypeOf((rows[2] as BookRow & ExtraFields).name).toEqualTypeOf<unknown>();
  });

  it('raw fields are exact: a misspelt field does not compile', () => {
    const price = { isuSrtCd: '005930', trdPrc: 1 } as PriceRow;
    expectTypeOf(price.trdPrc).toEqualTypeOf<number | null | undefined>();
    // @ts-expect-error `trdprc` is not a field of a price row (the field is trdPrc)
    void price.trdprc;
    const quote = { isuSrtCd: '005930' } as QuoteRow;
    // @ts-expect-error `mktCap` is not a field (the field is mktcap)
    void quote.mktCap;
    const ohlc = { isuSrtCd: '005930' } as OhlcRow;
    // @ts-expect-error an ohlc row has no trade time
    void ohlc.trdTm;
    const top = { isuSrtCd: '005930' } as TopRow;
    // @ts-expect-error misspelt best ask
    void top.askStep1BstOrdPrc;
    const index = { isuSrtCd: 'K1' } as IndexRow;
    expectTypeOf(index.trdPrc).toEqualTypeOf<number | null | undefined>();
    const view = viewOf(price, 0);
    // @ts-expect-error the view's names are price, change, changePct, …
    void view.prce;
  });
});
