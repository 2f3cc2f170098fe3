import type { Bus } from '../bus/bus.js';
import type { Logger } from '../log.js';
import type { ChangeBatch } from '../state/store.js';

/**
 * Poll rounds. Feeds polled at the base interval start their cycles on one
 * grid (one start per `baseMs`, at the same phase for every feed), so the
 * feeds of both markets call the upstream together. Their changes are then
 * published together: each cycle that succeeded holds its answer in the
 * round of its start until every cycle of that round has settled (or
 * `holdMs` has passed since the first held), and the round then applies
 * each held answer to the store and publishes all the batches through
 * `Bus.publishAll`, in the order they were held. The gateway then writes a
 * client of several feeds once per round instead of once per feed; a
 * cluster's bus writes them to Redis in one script and every process
 * delivers them together. The store takes a change only when it is
 * published, so a client that subscribes or resumes while a round waits
 * gets the state its next patches follow, without a duplicate. A cycle
 * that starts publishes every older round first, so a feed's changes go
 * out in the order they were polled. On a bus that would deliver a round's
 * batches one by one (`mergesRounds` false) the grid stays and the wait
 * goes: every cycle publishes as it settles. See docs/OPERATIONS.md §5.3.
 */

/** Applies a cycle's answers to the store; returns their batches. */
export type MakeBatches = () => readonly ChangeBatch[];

/** One held publish: what applies a cycle's answers, and what runs once they are published. */
interface Held {
  readonly make: MakeBatches;
  readonly after: (publishMs: number) => void;
}

/** A cycle's place in its round: it either holds its publish or leaves. */
export interface RoundTicket {
  /**
   * Holds the cycle's answers until the round is complete: `make` then
   * applies them to the store, and `after` runs once every batch of the
   * round is published, with the time that publish took.
   */
  hold(make: MakeBatches, after: (publishMs: number) => void): void;
  /** The cycle publishes on its own (or never): the round stops waiting for it. Idempotent, and a no-op after `hold`. */
  leave(): void;
}

/** Options of `Rounds`. */
export interface RoundsOptions {
  readonly bus: Bus;
  /** The grid's period, ms (the poller's base interval). */
  readonly baseMs: number;
  /** Longest a held publish waits for the rest of its round, ms. */
  readonly holdMs: number;
  /** A grid point, ms epoch (its phase is every feed's phase); default the start of the first cycle. */
  readonly origin?: number;
  /** Where a failure after a round's publish is reported. */
  readonly logger: Logger;
  /** Monotonic time, ms, for the publish figures; default `performance.now`. */
  readonly perfNow?: () => number;
}

/** The rounds of one poller. */
export class Rounds {
  private readonly open = new Map<number, Round>();
  private origin: number | undefined;

  /** No round open yet. */
  constructor(private readonly opts: RoundsOptions) {
    this.origin = opts.origin;
  }

  /**
   * When the next cycle of a feed that started at `started` (ms epoch)
   * with `interval` should start. An interval that is a whole number of
   * base periods lands on the grid point nearest to `started + interval`,
   * or the one after when the nearest is more than a quarter period
   * early: a feed joins the grid within one cycle of starting off it (its
   * first cycle runs at once, for its first subscriber), never polls less
   * than three quarters of a period after the last start, and a timer that
   * fires late does not move the grid. Other intervals are kept as they are.
   */
  next(started: number, interval: number): number {
    const { baseMs } = this.opts;
    const origin = this.origin ?? started;
    const target = started + interval;
    if (interval % baseMs !== 0) return target;
    let at = origin + Math.round((target - origin) / baseMs) * baseMs;
    if (at < target - baseMs / 4) at += baseMs;
    return at;
  }

  /** The round of a cycle starting at `at` (ms epoch): the one of the nearest grid point. */
  join(at: number): RoundTicket {
    this.origin ??= at;
    // No wait when there is none to make, or when the bus would deliver the round's batches one by one anyway.
    if (this.opts.holdMs <= 0 || !this.opts.bus.mergesRounds) return { hold: (make, after) => this.publishNow(make(), after), leave: () => {} };
    const slot = Math.round((at - this.origin) / this.opts.baseMs);
    // An older round still open (waiting for a slow cycle, or one that threw) publishes what it holds before anything of this one.
    for (const [s, r] of this.open) if (s < slot) r.release();
    let round = this.open.get(slot);
    if (round === undefined) {
      round = new Round(
        this.opts,
        () => this.open.delete(slot),
        (make, after) => this.publishNow(make(), after),
      );
      this.open.set(slot, round);
    }
    return round.ticket();
  }

  /**
   * Publishes a cycle's batches (already applied) at once, outside any
   * round (a cycle that failed, a closed-market fetch), after what the
   * open rounds hold.
   */
  publishNow(batches: readonly ChangeBatch[], after: (publishMs: number) => void): void {
    this.releaseAll();
    publish(this.opts, [{ make: () => batches, after }]);
  }

  /** Publishes everything held now (the poller stops). */
  releaseAll(): void {
    for (const r of [...this.open.values()]) r.release();
  }

  /** Rounds open (waiting for a cycle or holding a publish). */
  get size(): number {
    return this.open.size;
  }
}

/** The cycles that started at one grid point, and the publishes they hold. */
class Round {
  private waiting = 0;
  private readonly held: Held[] = [];
  private timer: NodeJS.Timeout | undefined;
  private done = false;

  constructor(
    private readonly opts: RoundsOptions,
    private readonly onDone: () => void,
    private readonly alone: (make: MakeBatches, after: (publishMs: number) => void) => void,
  ) {}

  ticket(): RoundTicket {
    if (this.done) return { hold: this.alone, leave: () => {} };
    this.waiting++;
    let settled = false;
    return {
      hold: (make, after) => {
        if (settled) throw new Error('a cycle holds its publish once');
        settled = true;
        if (this.done) return this.alone(make, after);
        this.held.push({ make, after });
        this.waiting--;
        if (this.waiting === 0) this.release();
        else this.timer ??= unref(setTimeout(() => this.release(), this.opts.holdMs));
      },
      leave: () => {
        if (settled) return;
        settled = true;
        if (this.done) return;
        this.waiting--;
        if (this.waiting === 0) this.release();
      },
    };
  }

  /** Publishes what is held, once; later tickets of this round publish alone. */
  release(): void {
    if (this.done) return;
    this.done = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.onDone();
    publish(this.opts, this.held);
    this.held.length = 0;
  }
}

/**
 * Applies every held cycle's answers, in the order held, and publishes
 * their batches at once; then tells each cycle how long the publish took.
 * A cycle whose answers fail to apply is reported and left out.
 */
function publish(opts: RoundsOptions, held: readonly Held[]): void {
  if (held.length === 0) return;
  const now = opts.perfNow ?? (() => performance.now());
  const batches: ChangeBatch[] = [];
  for (const h of held) {
    try {
      for (const b of h.make()) batches.push(b);
    } catch (err) {
      opts.logger.error({ err }, 'applying a poll cycle’s answers failed');
    }
  }
  const t0 = now();
  try {
    opts.bus.publishAll(batches);
  } finally {
    const ms = now() - t0;
    for (const h of held) {
      try {
        h.after(ms);
      } catch (err) {
        opts.logger.error({ err }, 'after a poll round was published');
      }
    }
  }
}

function unref(t: NodeJS.Timeout): NodeJS.Timeout {
  t.unref?.();
  return t;
}
