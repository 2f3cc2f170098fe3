/**
 * A drift-free periodic timer for the tick source: tick k runs at
 * start + k × period. A tick that comes due while an earlier one is still
 * late is skipped and counted, so a saturated server shows up as skipped
 * ticks and lag rather than as an ever-growing backlog.
 */
export class Ticker {
  /** Ticks run. */
  ticks = 0;
  /** Ticks skipped because the process was behind by a whole period or more. */
  skipped = 0;
  /** Largest delay of a tick behind its due time since the last `takeMaxLag()`, ms. */
  private maxLag = 0;
  private timer: NodeJS.Timeout | undefined;
  private start0 = 0;
  private k = 0;

  /** A stopped ticker calling `onTick` every `periodMs`. */
  constructor(
    private readonly periodMs: number,
    private readonly onTick: () => void,
  ) {}

  /** Starts ticking one period from now. */
  start(): void {
    this.stop();
    this.start0 = performance.now();
    this.k = 0;
    this.schedule();
  }

  /** Stops; a tick already running completes. */
  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** The largest lag since the previous call, ms; resets it. */
  takeMaxLag(): number {
    const m = this.maxLag;
    this.maxLag = 0;
    return m;
  }

  private schedule(): void {
    this.k++;
    const due = this.start0 + this.k * this.periodMs;
    this.timer = setTimeout(() => this.fire(due), Math.max(0, due - performance.now()));
  }

  private fire(due: number): void {
    const now = performance.now();
    const lag = now - due;
    if (lag > this.maxLag) this.maxLag = lag;
    if (lag >= this.periodMs) {
      const behind = Math.floor(lag / this.periodMs);
      this.skipped += behind;
      this.k += behind;
    }
    this.ticks++;
    this.onTick();
    if (this.timer !== undefined) this.schedule();
  }
}
