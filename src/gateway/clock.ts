/**
 * The gateway's change clock: every batch fanned out gets the next number
 * (its tick), and each topic keeps the tick of its last change. A
 * connection that falls behind keeps only the tick it stopped at; what it
 * is owed is computed from the clock (its topics changed since), so it
 * costs the same whatever the market's size or how long it stalls.
 * See docs/PROTOCOL.md §7 and DESIGN.md §4.
 */

/** Ticks of batches and the tick of each topic's last change. */
export class ChangeClock {
  private now = 0;
  private readonly last = new Map<string, number>();

  /** The tick of the latest batch (0 before the first). */
  get tick(): number {
    return this.now;
  }

  /** Starts the next batch; returns its tick. */
  begin(): number {
    return ++this.now;
  }

  /** Records that `topic` changed in the current batch. */
  changed(topic: string): void {
    this.last.set(topic, this.now);
  }

  /** Whether `topic` changed in batch `tick` or later. */
  changedSince(topic: string, tick: number): boolean {
    const t = this.last.get(topic);
    return t !== undefined && t >= tick;
  }

  /** Topics recorded (each once). */
  get size(): number {
    return this.last.size;
  }
}
