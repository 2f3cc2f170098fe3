import type { Provision } from './provision.js';
import { provided } from './provision.js';
import type { Phase, Sessions } from './session.js';

/**
 * The bridge's view of the market clock: `kst` follows the KRX schedule on
 * the KRX calendar; `always` treats the market as open at every hour (the
 * built-in simulator's `open` clock, and tests). Each question takes the
 * instant it is of (`at`, ms epoch; default `now()`): a caller that asks
 * several must ask them of one instant, or a boundary (08:30, 15:30) may
 * fall between two of its answers.
 */
export interface MarketClock {
  /** Current time, ms epoch. */
  now(): number;
  /** The phase at `at`. */
  session(at?: number): Phase;
  /** When the current trading day's sessions end, ms epoch; undefined when closed. */
  windowEnd(at?: number): number | undefined;
  /** When the next regular session opens (09:00 KST, or the late open), ms epoch; undefined for an always-open clock. */
  opensAt(at?: number): number | undefined;
  /** When the market next leaves `closed` (the pre-market, or after-hours trading), ms epoch; undefined for an always-open clock. */
  resumesAt(at?: number): number | undefined;
  /** How long the market is open (not `closed`) from now until `end`, ms: the polling time left (an always-open clock: all of it). */
  openMsUntil(end: number): number;
  /** When the market last went to `closed`, while it is closed (see `Sessions.lastClose`); undefined while open, and for an always-open clock. */
  closedSince(at?: number): number | undefined;
  /** Whether the upstream provides data of `provision` at `at` (an always-open clock: always). */
  provides(provision: Provision, at?: number): boolean;
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
    session: (at = now()) => sessions.phase(at),
    windowEnd: (at = now()) => (sessions.phase(at) === 'closed' ? undefined : sessions.dayEnd(at)),
    opensAt: (at = now()) => sessions.opensAt(at),
    resumesAt: (at = now()) => sessions.resumesAt(at),
    closedSince: (at = now()) => sessions.lastClose(at),
    openMsUntil: (end) => sessions.openMs(now(), end),
    provides: (p, at = now()) => provided(p, at, sessions),
  };
}
