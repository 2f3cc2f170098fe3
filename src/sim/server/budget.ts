/**
 * The daily call budget: a counter of authenticated calls that resets at
 * 00:00 GMT, reported in the rate-limit headers.
 */

/** The daily call counter. */
export class DailyBudget {
  private used = 0;
  private day: number;

  /** A budget of `limit` calls per GMT day, on the wall clock `now` (epoch ms). */
  constructor(
    readonly limit: number,
    private readonly now: () => number,
  ) {
    this.day = this.today();
  }

  private today(): number {
    return Math.floor(this.now() / 86_400_000);
  }

  private roll(): void {
    const d = this.today();
    if (d !== this.day) {
      this.day = d;
      this.used = 0;
    }
  }

  /** Calls left today. */
  remaining(): number {
    this.roll();
    return Math.max(0, this.limit - this.used);
  }

  /** Counts one call; false (and nothing counted) when the budget is spent. */
  take(): boolean {
    this.roll();
    if (this.used >= this.limit) return false;
    this.used++;
    return true;
  }

  /** Sets the calls left today (clamped to 0..limit). */
  setRemaining(n: number): void {
    this.roll();
    this.used = this.limit - Math.max(0, Math.min(this.limit, Math.floor(n)));
  }
}
