import type { Provision } from './provision.js';
import { provided } from './provision.js';
import type { Phase, Sessions } from './session.js';

/**
 * The bridge's view of the market clock: `kst` follows the KRX schedule on
 * the KRX calendar; `always` treats the market as open at every hour (the
 * built-in simulator's `open` clock, and tests).
 */
export interface MarketClock {
  /** Current time, ms epoch. */
  now(): number;
  /** The phase now. */
  session(): Phase;
  /** When the current trading day's sessions end, ms epoch; undefined when closed. */
  windowEnd(): number | undefined;
  /** When the next regular session opens (09:00 KST, or the late open), ms epoch; undefined for an always-open clock. */
  opensAt(): number | undefined;
  /** When the market next leaves `closed` (the pre-market, or after-hours trading), ms epoch; undefined for an always-open clock. */
  resumesAt(): number | undefined;
  /** How long the market is open (not `closed`) from now until `end`, ms: the polling time left (an always-open clock: all of it). */
  openMsUntil(end: number): number;
  /** When the market last went to `closed`, while it is closed (see `Sessions.lastClose`); undefined while open, and for an always-open clock. */
  closedSince(): number | undefined;
  /** Whether the upstream provides data of `provision` now (an always-open clock: always). */
  provides(provision: Provision): boolean;
}

/** A market clock on `sessions` (mode `kst`), or always open. */
export function marketClock(mode: 'kst' | 'always', sessions: Sessions, now: () => number = Date.now): MarketClock {
  if (mode === 'always') {
    return {
      now,
      session: () => 'regular',
      windowEnd: () => undefined,
      opensAt: () => undefined,
      resumesAt: () => undefined,
      closedSince: () => undefined,
      openMsUntil: (end) => Math.max(0, end - now()),
      provides: () => true,
    };
  }
  return {
    now,
    session: () => sessions.phase(now()),
    windowEnd: () => (sessions.phase(now()) === 'closed' ? undefined : sessions.dayEnd(now())),
    opensAt: () => sessions.opensAt(now()),
    resumesAt: () => sessions.resumesAt(now()),
    closedSince: () => sessions.lastClose(now()),
    openMsUntil: (end) => sessions.openMs(now(), end),
    provides: (p) => provided(p, now(), sessions),
  };
}
