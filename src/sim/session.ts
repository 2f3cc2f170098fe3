import { secsOf } from './calendar.js';

/**
 * The KRX session schedule (KST), as seconds after midnight.
 */

/** Session boundaries in seconds after midnight (KST). */
export const SESSION = {
  preOpen: secsOf('0830'),
  open: secsOf('0900'),
  closingAuction: secsOf('1520'),
  close: secsOf('1530'),
  afterHoursClose: secsOf('1540'),
  afterHoursSingle: secsOf('1600'),
  end: secsOf('1800'),
} as const;

/** Trading phase of the market. */
export type Phase =
  | 'closed'
  | 'preopen'
  | 'regular'
  | 'closingAuction'
  | 'postClose'
  | 'afterHoursClose'
  | 'afterHoursSingle';

/** The phase at `secs` after midnight on a day that is (or is not) a trading day. */
export function phaseAt(secs: number, tradingDay: boolean): Phase {
  if (!tradingDay || secs < SESSION.preOpen || secs >= SESSION.end) return 'closed';
  if (secs < SESSION.open) return 'preopen';
  if (secs < SESSION.closingAuction) return 'regular';
  if (secs < SESSION.close) return 'closingAuction';
  if (secs < SESSION.afterHoursClose) return 'postClose';
  if (secs < SESSION.afterHoursSingle) return 'afterHoursClose';
  return 'afterHoursSingle';
}
