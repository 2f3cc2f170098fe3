/**
 * Pure formatting and conversion helpers of the demo page: numbers with
 * thousands separators, the Korean up/down colour convention, and KRX time
 * strings (`HHMMSSmm`) to chart times. No DOM access, so they are unit-tested
 * in Node (test/demo/format.test.ts).
 */

/** Direction of a price against the previous close, as the page colours it. */
export type Direction = 'up' | 'down' | 'flat';

const INT = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const DEC1 = new Intl.NumberFormat('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1 });
const DEC2 = new Intl.NumberFormat('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });

/** A number with thousands separators and no decimals (`1234567` → `1,234,567`); `–` when absent. */
export function fmtInt(n: number | null | undefined): string {
  return typeof n === 'number' && Number.isFinite(n) ? INT.format(n) : '–';
}

/** A signed number with separators (`+1,200`, `-300`, `0`); `–` when absent. */
export function fmtSigned(n: number | null | undefined): string {
  if (typeof n !== 'number' || !Number.isFinite(n)) return '–';
  return n > 0 ? `+${INT.format(n)}` : INT.format(n);
}

/** A signed percentage with two decimals (`+1.23%`); `–` when absent. */
export function fmtPct(p: number | null | undefined): string {
  if (typeof p !== 'number' || !Number.isFinite(p)) return '–';
  return `${p > 0 ? '+' : ''}${DEC2.format(p)}%`;
}

/**
 * A large amount in compact units with one decimal: T (10^12), B (10^9),
 * M (10^6) (`143,841,595,300` → `143.8B`); smaller amounts with separators.
 */
export function fmtCompact(n: number | null | undefined): string {
  if (typeof n !== 'number' || !Number.isFinite(n)) return '–';
  const abs = Math.abs(n);
  for (const [unit, size] of [
    ['T', 1e12],
    ['B', 1e9],
    ['M', 1e6],
  ] as const) {
    if (abs >= size) return `${DEC1.format(n / size)}${unit}`;
  }
  return INT.format(n);
}

/**
 * The direction of a `cmpprevddTpCd` (1 upper limit, 2 up, 3 unchanged,
 * 4 lower limit, 5 down); unknown codes fall back to the sign of `change`.
 */
export function direction(tpCd: string | null | undefined, change?: number | null): Direction {
  if (tpCd === '1' || tpCd === '2') return 'up';
  if (tpCd === '4' || tpCd === '5') return 'down';
  if (tpCd === '3') return 'flat';
  if (typeof change === 'number' && change !== 0) return change > 0 ? 'up' : 'down';
  return 'flat';
}

/** Whether a `cmpprevddTpCd` is a daily limit move (1 upper, 4 lower). */
export function isLimit(tpCd: string | null | undefined): boolean {
  return tpCd === '1' || tpCd === '4';
}

/**
 * The change in percent against the previous close, from the last price and
 * the change in KRW (previous close = price − change); undefined when either
 * is missing or the previous close is not positive.
 */
export function changePct(price: number | null | undefined, change: number | null | undefined): number | undefined {
  if (typeof price !== 'number' || typeof change !== 'number') return undefined;
  const prev = price - change;
  return prev > 0 ? (change / prev) * 100 : undefined;
}

/**
 * Seconds after midnight of a KRX time string `HHMMSSmm` (also `HHMMSS` or
 * `HHMM`; a leading zero may be missing, as in `9544500`); undefined when it
 * is not one.
 */
export function secsOfTime(t: string | number | null | undefined): number | undefined {
  if (t === null || t === undefined) return undefined;
  const s = String(t).trim();
  if (!/^\d{3,8}$/.test(s)) return undefined;
  const padded = s.length === 3 || s.length === 5 || s.length === 7 ? `0${s}` : s;
  const hh = Number(padded.slice(0, 2));
  const mm = Number(padded.slice(2, 4));
  const ss = padded.length >= 6 ? Number(padded.slice(4, 6)) : 0;
  if (hh > 23 || mm > 59 || ss > 59) return undefined;
  return hh * 3600 + mm * 60 + ss;
}

/** `HH:MM:SS` of a KRX time string; `–` when it is not one. */
export function fmtTime(t: string | number | null | undefined): string {
  const secs = secsOfTime(t);
  if (secs === undefined) return '–';
  return clock(secs, true);
}

/** `HH:MM` (or `HH:MM:SS`) of seconds after midnight. */
export function clock(secs: number, withSeconds = false): string {
  const h = Math.floor(secs / 3600) % 24;
  const m = Math.floor((secs % 3600) / 60);
  const s = Math.floor(secs % 60);
  const two = (n: number) => String(n).padStart(2, '0');
  return withSeconds ? `${two(h)}:${two(m)}:${two(s)}` : `${two(h)}:${two(m)}`;
}

/** A duration in words: `850 ms`, `1.5 s`, `4 min`, `2 h 5 min`. */
export function fmtDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '–';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  const min = Math.round(ms / 60_000);
  if (min < 60) return `${min} min`;
  return `${Math.floor(min / 60)} h ${min % 60} min`;
}

/** The KST calendar date (`YYYYMMDD`) of an epoch time in ms. */
export function kstDate(epochMs: number): string {
  const d = new Date(epochMs + 9 * 3600_000);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${d.getUTCFullYear()}${two(d.getUTCMonth() + 1)}${two(d.getUTCDate())}`;
}

/** The KST wall-clock time of an epoch time in ms, `HH:MM`. */
export function kstClock(epochMs: number): string {
  return kstClockOnly(epochMs);
}

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];

/** The KST weekday and time of a moment, e.g. `Mon 09:00`. */
export function kstWeekdayTime(epochMs: number): string {
  const d = new Date(epochMs + 9 * 3600_000);
  return `${WEEKDAYS[d.getUTCDay()]} ${String(d.getUTCHours()).padStart(2, '0')}:${String(d.getUTCMinutes()).padStart(2, '0')}`;
}

/** When every feed is closed: the time of their newest data (0 when none says); undefined when some feed is not closed, or none is shown. */
function closedAsOf(feeds: readonly { state: string; asOf?: number | undefined }[]): number | undefined {
  if (feeds.length === 0 || feeds.some((f) => f.state !== 'closed')) return undefined;
  return Math.max(...feeds.map((f) => f.asOf ?? 0));
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** The KST weekday and date of a moment, e.g. `Fri 27 Nov`. */
export function kstWeekdayDate(epochMs: number): string {
  const d = new Date(epochMs + 9 * 3600_000);
  return `${WEEKDAYS[d.getUTCDay()]} ${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]}`;
}

/**
 * The chart's caption, which says whose day its candles are: the last
 * session's, dated, when every feed is closed and their data is of another
 * day than `now` (`asOf`: the weekend, say); the last session's when the
 * shown symbol's row says it has not traded today (`trdTm` 0 or 00:00:00, as
 * in the pre-market: the upstream still answers with the last session's bars);
 * else today's.
 */
export function chartCaption(now: number, feeds: readonly { state: string; asOf?: number | undefined }[], trdTm?: string | null): string {
  const asOf = closedAsOf(feeds) ?? 0;
  if (asOf > 0 && kstDate(asOf) !== kstDate(now)) return `1-minute candles · last session, ${kstWeekdayDate(asOf)} · KST`;
  if (trdTm !== undefined && trdTm !== null && /^0+$/.test(String(trdTm).trim())) return '1-minute candles · last session, until the day’s first trade · KST';
  return '1-minute candles · today · KST';
}

/**
 * What the market marker says of the feeds' states: `Closed · opens Mon 09:00`
 * (with `· as of Fri 18:00` when the data's time is known) when every feed
 * shown is closed, undefined otherwise.
 */
export function marketMarker(feeds: readonly { state: string; opensAt?: number | undefined; asOf?: number | undefined }[]): string | undefined {
  const asOf = closedAsOf(feeds);
  if (asOf === undefined) return undefined;
  const opens = Math.min(...feeds.map((f) => f.opensAt ?? Infinity));
  return `Closed${Number.isFinite(opens) ? ` · opens ${kstWeekdayTime(opens)}` : ''}${asOf > 0 ? ` · as of ${kstWeekdayTime(asOf)}` : ''}`;
}

function kstClockOnly(epochMs: number): string {
  const secs = Math.floor((((epochMs / 1000 + 9 * 3600) % 86_400) + 86_400) % 86_400);
  return clock(secs);
}

/**
 * A chart time (seconds) for a KST day and a time of day: KST wall time
 * written as if it were UTC, so the chart's axis, which shows UTC, reads KST.
 */
export function chartTime(date8: string, secsOfDay: number): number {
  const y = Number(date8.slice(0, 4));
  const m = Number(date8.slice(4, 6));
  const d = Number(date8.slice(6, 8));
  return Date.UTC(y, m - 1, d) / 1000 + secsOfDay;
}

/** `YYYY-MM-DD` of a `YYYYMMDD` date; the input when it is not one. */
export function isoDate(date8: string): string {
  return /^\d{8}$/.test(date8) ? `${date8.slice(0, 4)}-${date8.slice(4, 6)}-${date8.slice(6, 8)}` : date8;
}
