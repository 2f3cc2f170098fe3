import { EventEmitter } from 'eventemitter3';
import { LIMIT_HEADER, REMAINING_HEADER } from './wire.js';

/**
 * The upstream's daily call budget, as its rate-limit headers report it
 * (spec document 1, part 8; DESIGN.md §2). The day is counted from 00:00 GMT
 * (= 09:00 KST); a 429 means nothing is left until then.
 */

const DAY_MS = 86_400_000;

/**
 * The first daily reset strictly after `now`: the next 00:00 UTC
 * (09:00 KST), in ms since the epoch. At exactly 00:00 the reset has just
 * happened, so the answer is the following midnight.
 */
export function nextReset(now: number): number {
  return Math.floor(now / DAY_MS) * DAY_MS + DAY_MS;
}

/** A plain JSON copy of a budget; `null` where nothing is known yet. */
export interface BudgetSnapshot {
  /** Calls allowed per day. */
  readonly limit: number | null;
  /** Calls left until `resetAt`. */
  readonly remaining: number | null;
  /** When the day's count resets (ms epoch, a 00:00 UTC). */
  readonly resetAt: number | null;
  /** When the last response was observed (ms epoch). */
  readonly observedAt: number | null;
}

/** Events of a `Budget`. */
export interface BudgetEvents {
  /** Any value changed; carries the new snapshot. */
  change: (snapshot: BudgetSnapshot) => void;
}

/** Response headers as undici (lower-case record) or fetch (`Headers`) give them. */
export type HeaderSource = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

function header(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const rec = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
  let v = rec[name];
  if (v === undefined) {
    for (const k of Object.keys(rec)) {
      if (k.toLowerCase() === name) {
        v = rec[k];
        break;
      }
    }
  }
  return Array.isArray(v) ? (v as readonly string[])[0] : (v as string | undefined);
}

/** A non-negative integer header value, or undefined when absent or garbage. */
function count(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const t = v.trim();
  if (!/^\d{1,15}$/.test(t)) return undefined;
  return Number(t);
}

function validNumber(v: unknown): v is number | null {
  return v === null || (typeof v === 'number' && Number.isFinite(v) && v >= 0);
}

/**
 * Tracks the daily call budget from response headers. `update` after every
 * response, `exhaust` after a 429; `isExhausted` tells whether a call would
 * only burn a 429. `snapshot`/`restore` move the state between processes.
 *
 * Once the budget is seen at zero it stays at zero until the reset: a
 * response that was in flight before the 429 cannot revive it.
 */
export class Budget extends EventEmitter<BudgetEvents> {
  #limit: number | null = null;
  #remaining: number | null = null;
  #resetAt: number | null = null;
  #observedAt: number | null = null;

  /** Calls allowed per day, or `null` before the first header. */
  get limit(): number | null {
    return this.#limit;
  }
  /** Calls left until `resetAt`, or `null` when unknown. */
  get remaining(): number | null {
    return this.#remaining;
  }
  /** ms epoch of the next reset after the last observation, or `null`. */
  get resetAt(): number | null {
    return this.#resetAt;
  }
  /** ms epoch of the last observation, or `null`. */
  get observedAt(): number | null {
    return this.#observedAt;
  }

  /**
   * Reads `X-RateLimit-Limit-Day` and `X-RateLimit-Remaining-Day`
   * (case-insensitive) from one response observed at `now` (ms epoch).
   * Absent or garbage values leave the known value as it was. A response to
   * a request sent (`sentAt`) before the reset that `now` is past counts
   * the day before: its remainder is not the new day's, and is left out.
   */
  update(headers: HeaderSource, now: number, sentAt?: number): void {
    this.#roll(now);
    const limit = count(header(headers, LIMIT_HEADER));
    let remaining = count(header(headers, REMAINING_HEADER));
    if (sentAt !== undefined && nextReset(sentAt) <= now) remaining = undefined;
    if (limit === undefined && remaining === undefined) return;
    if (remaining !== undefined && this.#remaining === 0 && this.#resetAt !== null && now < this.#resetAt) {
      remaining = 0;
    }
    if (limit !== undefined) this.#limit = limit;
    if (remaining !== undefined) this.#remaining = remaining;
    this.#observedAt = now;
    this.#resetAt = nextReset(now);
    this.#emit();
  }

  /** Records a 429 at `now`: nothing is left until the next reset (unless its request was sent, at `sentAt`, before the reset `now` is past). */
  exhaust(now: number, sentAt?: number): void {
    if (sentAt !== undefined && nextReset(sentAt) <= now) return;
    this.#remaining = 0;
    this.#observedAt = now;
    this.#resetAt = nextReset(now);
    this.#emit();
  }

  /** True while nothing is left (`remaining <= 0`) and `now` is before `resetAt`. */
  isExhausted(now: number): boolean {
    this.#roll(now);
    return this.#remaining !== null && this.#remaining <= 0 && this.#resetAt !== null && now < this.#resetAt;
  }

  /**
   * Starts the new budget day when `now` is at or past the reset (the full
   * limit is left again), as a call would; for readers that make none (the
   * `/status` body and the metrics of a market closed for the weekend).
   */
  refresh(now: number): void {
    this.#roll(now);
  }

  /** A plain JSON copy of the current state. */
  snapshot(): BudgetSnapshot {
    return { limit: this.#limit, remaining: this.#remaining, resetAt: this.#resetAt, observedAt: this.#observedAt };
  }

  /**
   * Loads a snapshot (e.g. one another process shared). Throws a
   * `TypeError` when it is not a snapshot; nothing changes then.
   */
  restore(snapshot: BudgetSnapshot): void {
    const s = snapshot as unknown as Record<string, unknown> | null;
    if (s === null || typeof s !== 'object') throw new TypeError('budget snapshot must be an object');
    for (const k of ['limit', 'remaining', 'resetAt', 'observedAt'] as const) {
      if (!validNumber(s[k])) throw new TypeError(`budget snapshot: ${k} must be a non-negative number or null`);
    }
    this.#limit = snapshot.limit;
    this.#remaining = snapshot.remaining;
    this.#resetAt = snapshot.resetAt;
    this.#observedAt = snapshot.observedAt;
    this.#emit();
  }

  /** At or past the reset, a new day starts: the full limit (if known) is left. */
  #roll(now: number): void {
    if (this.#resetAt === null || now < this.#resetAt) return;
    this.#remaining = this.#limit;
    this.#resetAt = nextReset(now);
    this.#emit();
  }

  #emit(): void {
    const snap = this.snapshot();
    try {
      this.emit('change', snap);
    } catch {
      // A listener's failure must not undo or interrupt the bookkeeping above.
    }
  }
}
