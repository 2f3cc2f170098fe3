import { KrxError } from './errors.js';

/**
 * Dates as the SDK takes them (`YYYYMMDD`, an ISO date, a `Date`) and as the
 * protocol carries them (`YYYYMMDD`), checked locally so a bad date or range
 * costs no request. Pure.
 */

/** A day: `YYYYMMDD` (string or number), an ISO date (`2026-11-20`, or a full ISO time), or a `Date` (its day in KST). */
export type DateLike = string | number | Date;

const KST_MS = 9 * 3600_000;

function valid(y: number, m: number, d: number): boolean {
  const t = new Date(Date.UTC(y, m - 1, d));
  return t.getUTCFullYear() === y && t.getUTCMonth() === m - 1 && t.getUTCDate() === d && y >= 1900 && y < 2100;
}

/** `YYYYMMDD` of a day; throws `invalid_params` naming `what` when it is not a real date. */
export function toDate8(value: DateLike, what: string): string {
  let y: number;
  let m: number;
  let d: number;
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) throw new KrxError('invalid_params', `${what}: not a valid Date`);
    const k = new Date(value.getTime() + KST_MS);
    [y, m, d] = [k.getUTCFullYear(), k.getUTCMonth() + 1, k.getUTCDate()];
  } else {
    const s = String(value).trim();
    const compact = /^(\d{4})(\d{2})(\d{2})$/.exec(s);
    const iso = /^(\d{4})-(\d{2})-(\d{2})(T.*)?$/.exec(s);
    if (iso?.[4]) return toDate8(new Date(s), what);
    const parts = compact ?? iso;
    if (!parts) throw new KrxError('invalid_params', `${what}: ${JSON.stringify(s.slice(0, 30))} is not a date (YYYYMMDD, YYYY-MM-DD or a Date)`);
    [y, m, d] = [Number(parts[1]), Number(parts[2]), Number(parts[3])];
  }
  if (!valid(y, m, d)) throw new KrxError('invalid_params', `${what}: ${y}-${m}-${d} is not a calendar date`);
  return `${y}${String(m).padStart(2, '0')}${String(d).padStart(2, '0')}`;
}

/** Checks `from` ≤ `to` (both `YYYYMMDD`); throws `invalid_params` otherwise. */
export function checkRange(from: string | undefined, to: string | undefined): void {
  if (from !== undefined && to !== undefined && from > to) throw new KrxError('invalid_params', `from (${from}) is after to (${to})`);
}

/** The `YYYYMMDD` day before `date8`. */
export function dayBefore(date8: string): string {
  const t = new Date(Date.UTC(Number(date8.slice(0, 4)), Number(date8.slice(4, 6)) - 1, Number(date8.slice(6, 8))) - 86_400_000);
  return `${t.getUTCFullYear()}${String(t.getUTCMonth() + 1).padStart(2, '0')}${String(t.getUTCDate()).padStart(2, '0')}`;
}
