/**
 * Turns taken one after another: at most `max` held at once, the others
 * waiting in the order they asked. A replay takes one to read its way to
 * its start (every change of its segment before `from`, parsed and applied:
 * seconds of CPU for a whole market late in a segment), so replays opened
 * together read one after another instead of all at once on the event
 * loop live clients are served from.
 */
export class Turns {
  private held = 0;
  private readonly waiting: (() => void)[] = [];

  /** Turns of which at most `max` (at least 1) are held at once. */
  constructor(private readonly max: number) {}

  /** Waits for a turn; resolves to the function that gives it back (once; later calls do nothing). */
  async take(): Promise<() => void> {
    if (this.held < Math.max(1, this.max)) this.held++;
    // A turn given back passes straight to the first waiting: `held` stays as it is.
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const next = this.waiting.shift();
      if (next !== undefined) next();
      else this.held--;
    };
  }

  /** Turns held now. */
  get busy(): number {
    return this.held;
  }

  /** Takers waiting for a turn. */
  get queued(): number {
    return this.waiting.length;
  }
}
