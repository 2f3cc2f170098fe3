import type { Num, Str } from './rows.js';

/**
 * The readable view of a row: the same few names on every channel (`price`,
 * `change`, `changePct`, `direction`, `open`, `high`, `low`, `volume`,
 * `value`, `time`) in place of the upstream's abbreviations (`trdPrc`,
 * `cmpprevddPrc`, `accTrdvol`, intraday's `inddClsprc`, …), which stay on the
 * row itself, exact. A field the row does not carry is `undefined`. Pure.
 */

/** Which way the price moved against the previous close. */
export const Direction = { UpLimit: 'upLimit', Up: 'up', Flat: 'flat', DownLimit: 'downLimit', Down: 'down' } as const;
/** Which way the price moved against the previous close (type). */
export type Direction = (typeof Direction)[keyof typeof Direction];

/** The readable view of a row of any channel (or an intraday bar). */
export interface RowView {
  /** Last (or closing) price, KRW (points for an index). */
  readonly price: number | undefined;
  /** Change against the previous close. */
  readonly change: number | undefined;
  /** Change against the previous close, percent (2 decimals). */
  readonly changePct: number | undefined;
  readonly direction: Direction | undefined;
  readonly open: number | undefined;
  readonly high: number | undefined;
  readonly low: number | undefined;
  /** Volume: the day's cumulative (a bar's own for an intraday bar), shares. */
  readonly volume: number | undefined;
  /** Value traded, KRW, as `volume`. */
  readonly value: number | undefined;
  /** When the last trade (or the bar's end) happened; undefined when the row has no time. */
  readonly time: Date | undefined;
}

/** The fields a view is read from, whatever the channel. */
interface ViewSource {
  readonly trdPrc?: Num;
  readonly cmpprevddPrc?: Num;
  readonly cmpprevddTpCd?: Str;
  readonly opnprc?: Num;
  readonly hgprc?: Num;
  readonly lwprc?: Num;
  readonly accTrdvol?: Num;
  readonly accTrdval?: Num;
  readonly trdTm?: Str;
  readonly inddTm?: Str;
  readonly inddClsprc?: Num;
  readonly inddOpnprc?: Num;
  readonly inddHgprc?: Num;
  readonly inddLwprc?: Num;
  readonly inddTrdvol?: Num;
  readonly inddTrdval?: Num;
}

const DIRECTION_CODES: Readonly<Record<string, Direction>> = { '1': 'upLimit', '2': 'up', '3': 'flat', '4': 'downLimit', '5': 'down' };

const num = (v: Num | undefined): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/**
 * The KST time `hhmmssmm` (the upstream's `HHMMSSmm`, leading zero or not) on
 * the KST day of `dayOf` (ms epoch: when the row was observed).
 */
export function kstTime(hhmmssmm: string | null | undefined, dayOf: number): Date | undefined {
  if (typeof hhmmssmm !== 'string' || !/^\d{5,8}$/.test(hhmmssmm)) return undefined;
  const t = hhmmssmm.padStart(8, '0');
  const h = Number(t.slice(0, 2));
  const m = Number(t.slice(2, 4));
  const s = Number(t.slice(4, 6));
  const cs = Number(t.slice(6, 8));
  if (h > 23 || m > 59 || s > 59) return undefined;
  const KST = 9 * 3600_000;
  const midnight = Math.floor((dayOf + KST) / 86_400_000) * 86_400_000 - KST;
  return new Date(midnight + ((h * 60 + m) * 60 + s) * 1000 + cs * 10);
}

/**
 * The readable view of `row`. `observedAt` (ms epoch; the change's `ts`)
 * dates the row's time of day: the upstream sends times without a date.
 */
export function viewOf(row: object, observedAt: number): RowView {
  const r = row as ViewSource;
  const intraday = r.inddTm !== undefined;
  const price = num(intraday ? r.inddClsprc : r.trdPrc);
  const change = num(r.cmpprevddPrc);
  const base = price !== undefined && change !== undefined ? price - change : undefined;
  const code = typeof r.cmpprevddTpCd === 'string' ? DIRECTION_CODES[r.cmpprevddTpCd] : undefined;
  return {
    price,
    change,
    changePct: base !== undefined && base !== 0 ? Math.round((change! / base) * 10_000) / 100 : undefined,
    direction: code ?? (change === undefined ? undefined : change > 0 ? 'up' : change < 0 ? 'down' : 'flat'),
    open: num(intraday ? r.inddOpnprc : r.opnprc),
    high: num(intraday ? r.inddHgprc : r.hgprc),
    low: num(intraday ? r.inddLwprc : r.lwprc),
    volume: num(intraday ? r.inddTrdvol : r.accTrdvol),
    value: num(intraday ? r.inddTrdval : r.accTrdval),
    time: kstTime(intraday ? r.inddTm : r.trdTm, observedAt),
  };
}
