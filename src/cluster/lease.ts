/**
 * The poller lease as one process sees it: a pure state machine over a
 * clock, so the safety rules can be tested with a fake one. The Redis side
 * (SET NX PX, compare-and-extend) is in leadership.ts.
 *
 * Safety: Redis expires the lease no earlier than `leaseMs` after the
 * holder *sent* its last successful renewal, so the holder polls only
 * until `sent + leaseMs − marginMs` (self-fencing), and a new holder waits
 * `settleMs` (POLL_BASE_MS − marginMs) after acquiring before its first
 * call: any call of the previous holder started at least POLL_BASE_MS
 * earlier. When the generation counter was missing (Redis lost its data,
 * so the previous holder's lease vanished early), the new holder waits a
 * whole lease period more. See docs/DEPLOYMENT.md §Lease and fencing.
 */

/** Timing of a lease. */
export interface LeaseTiming {
  /** Lease period, ms (LEASE_MS). */
  readonly leaseMs: number;
  /** Safety margin before the lease may have expired, ms; default leaseMs / 5. */
  readonly marginMs?: number;
  /** The fastest poll interval, ms (POLL_BASE_MS); default 1000. */
  readonly baseMs?: number;
}

/** The lease state of this process. */
export type LeaseRole =
  | { readonly role: 'follower' }
  | {
      readonly role: 'leader';
      /** Fencing generation of this term. */
      readonly gen: number;
      /** Polling is allowed from this time (ms epoch). */
      readonly pollFrom: number;
      /** Polling must stop at this time unless renewed (ms epoch). */
      readonly validUntil: number;
    };

/** The lease state machine. */
export class LeaseState {
  /** The current state. */
  state: LeaseRole = { role: 'follower' };
  /** The highest generation this process has seen (its own or in messages). */
  maxGen = 0;
  /** Lease period, ms. */
  readonly leaseMs: number;
  /** Margin, ms. */
  readonly marginMs: number;
  /** Wait after acquiring before the first call, ms. */
  readonly settleMs: number;

  /** A follower with `timing`. */
  constructor(timing: LeaseTiming) {
    this.leaseMs = timing.leaseMs;
    this.marginMs = timing.marginMs ?? Math.floor(timing.leaseMs / 5);
    this.settleMs = Math.max(0, (timing.baseMs ?? 1000) - this.marginMs);
  }

  /** Whether this process holds the lease (polling or not). */
  get leader(): boolean {
    return this.state.role === 'leader';
  }

  /** The generation of the current term, or undefined as a follower. */
  get gen(): number | undefined {
    return this.state.role === 'leader' ? this.state.gen : undefined;
  }

  /**
   * The lease was acquired by a request sent at `sentAt` whose reply came
   * at `receivedAt`; `wiped` when Redis had lost its data.
   */
  acquired(gen: number, sentAt: number, receivedAt: number, wiped: boolean): void {
    this.seen(gen);
    const pollFrom = receivedAt + this.settleMs + (wiped ? this.leaseMs : 0);
    this.state = { role: 'leader', gen, pollFrom, validUntil: sentAt + this.leaseMs - this.marginMs };
  }

  /** A renewal sent at `sentAt` succeeded. */
  renewed(sentAt: number): void {
    const s = this.state;
    if (s.role !== 'leader') return;
    this.state = { ...s, validUntil: Math.max(s.validUntil, sentAt + this.leaseMs - this.marginMs) };
  }

  /** The lease is gone (renewal refused, a write fenced, or released). */
  lost(): void {
    this.state = { role: 'follower' };
  }

  /** Records a generation seen in a message. */
  seen(gen: number): void {
    if (gen > this.maxGen) this.maxGen = gen;
  }

  /** Whether a message of generation `gen` comes from a fenced-off leader. */
  stale(gen: number): boolean {
    return gen < this.maxGen;
  }

  /** Whether this process may call the upstream at `now`. */
  mayPoll(now: number): boolean {
    const s = this.state;
    return s.role === 'leader' && now >= s.pollFrom && now < s.validUntil;
  }

  /** Whether this process holds the lease but may no longer poll (renewals failed for too long). */
  selfFenced(now: number): boolean {
    return this.state.role === 'leader' && now >= this.state.validUntil;
  }

  /**
   * How long to wait before the next lease request, ms: a renewal every
   * third of the period as leader; as a follower, a third of the period
   * or just after the holder's lease would expire (`pttl`), if sooner.
   */
  nextDelay(pttl?: number): number {
    const third = Math.max(10, Math.floor(this.leaseMs / 3));
    if (this.leader || pttl === undefined || pttl < 0) return third;
    return Math.min(third, pttl + 5);
  }
}
