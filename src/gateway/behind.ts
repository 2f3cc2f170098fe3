/**
 * What a connection that fell behind keeps: the tick it stopped at, the
 * bytes it skipped since, and the catch-up pass under way. Nothing per
 * topic: what it is owed is computed from the change clock (clock.ts) when
 * its socket drains. Made when it falls behind, dropped when it is live
 * again. See slow.ts and docs/PROTOCOL.md §7.
 */

/** Fresh snapshots of the connection's topics that changed in batch `since` or later, one by one. */
export type Owed = (since: number) => Iterator<string, unknown>;

/** The slow-consumer state of a connection while it is behind. */
export class Behind {
  /** Bytes of updates skipped since it fell behind. */
  skipped = 0;
  /** Snapshots made and not counted yet. */
  made = 0;
  private pass: Iterator<string, unknown> | undefined;
  /** The tick after the one the pass under way began at. */
  private passStart = 0;
  private passFound = 0;

  /** Behind since tick `since` (the first batch it may not have received in full), at `at` (ms, monotonic clock). */
  constructor(
    private since: number,
    readonly at: number,
    private readonly owed: Owed,
  ) {}

  /**
   * The next owed snapshot, `tick` being the clock's latest. A pass makes a
   * snapshot of each topic changed since `since`; the next pass covers what
   * changed since the previous one began (its own snapshots may predate
   * that); undefined when a pass finds nothing: the connection has caught up.
   */
  next(tick: number): string | undefined {
    for (;;) {
      if (this.pass === undefined) {
        this.passStart = tick + 1;
        this.passFound = 0;
        this.pass = this.owed(this.since);
      }
      const r = this.pass.next();
      if (r.done !== true) {
        this.passFound++;
        this.made++;
        return r.value;
      }
      this.pass = undefined;
      if (this.passFound === 0) return undefined;
      this.since = this.passStart;
    }
  }

  /** Ends the pass under way (the connection closed). */
  end(): void {
    this.pass?.return?.();
    this.pass = undefined;
  }
}
