/**
 * Call statistics of the simulator, for tests that check how a client
 * spends the upstream: totals, per endpoint, per wall-clock second, the
 * arrival times of recent calls, and the most requests in flight at once.
 */

/** Seconds of per-second history kept. */
export const PER_SECOND_WINDOW = 120;
/** Arrival times kept per endpoint (the most recent calls). */
export const CALL_TIMES_KEPT = 1000;

/** A JSON snapshot of the statistics. */
export interface StatsSnapshot {
  /** Requests on catalogue routes (any outcome). */
  readonly total: number;
  /** Requests that matched no route. */
  readonly notFound: number;
  /** Requests per catalogue endpoint id. */
  readonly byEndpoint: Record<string, number>;
  /** Responses per HTTP status (`0` for requests never answered). */
  readonly byStatus: Record<string, number>;
  /** Per endpoint id: `[epochSecond, count]` for the last 120 s, oldest first, seconds with calls only. */
  readonly perSecond: Record<string, [number, number][]>;
  /** Most requests in flight at once per request path (no query). */
  readonly maxInFlight: Record<string, number>;
  /** Most requests in flight at once over all paths. */
  readonly maxInFlightTotal: number;
  /** Requests in flight now. */
  readonly inFlight: number;
}

/** Mutable statistics. */
export class Stats {
  private total = 0;
  private notFound = 0;
  private readonly byEndpoint = new Map<string, number>();
  private readonly byStatus = new Map<number, number>();
  private readonly perSecond = new Map<string, Map<number, number>>();
  private readonly times = new Map<string, number[]>();
  private readonly inFlight = new Map<string, number>();
  private readonly maxInFlight = new Map<string, number>();
  private inFlightTotal = 0;
  private maxInFlightTotal = 0;

  /** A statistics keeper on the wall clock `now` (epoch ms). */
  constructor(private readonly now: () => number) {}

  /** Records the start of a request; `id` is undefined when no route matched. */
  begin(path: string, id: string | undefined): void {
    if (id === undefined) this.notFound++;
    else {
      this.total++;
      this.byEndpoint.set(id, (this.byEndpoint.get(id) ?? 0) + 1);
      const now = this.now();
      const sec = Math.floor(now / 1000);
      let t = this.times.get(id);
      if (!t) this.times.set(id, (t = []));
      t.push(now);
      if (t.length >= CALL_TIMES_KEPT * 2) t.splice(0, t.length - CALL_TIMES_KEPT);
      let m = this.perSecond.get(id);
      if (!m) this.perSecond.set(id, (m = new Map()));
      m.set(sec, (m.get(sec) ?? 0) + 1);
      if (m.size > PER_SECOND_WINDOW * 2) for (const s of m.keys()) if (s <= sec - PER_SECOND_WINDOW) m.delete(s);
    }
    const n = (this.inFlight.get(path) ?? 0) + 1;
    this.inFlight.set(path, n);
    this.maxInFlight.set(path, Math.max(n, this.maxInFlight.get(path) ?? 0));
    this.inFlightTotal++;
    this.maxInFlightTotal = Math.max(this.maxInFlightTotal, this.inFlightTotal);
  }

  /** Records the end of a request with its status (0 when never answered). */
  end(path: string, status: number): void {
    this.byStatus.set(status, (this.byStatus.get(status) ?? 0) + 1);
    const n = (this.inFlight.get(path) ?? 1) - 1;
    if (n <= 0) this.inFlight.delete(path);
    else this.inFlight.set(path, n);
    this.inFlightTotal = Math.max(0, this.inFlightTotal - 1);
  }

  /** Clears everything but the requests in flight. */
  reset(): void {
    this.total = 0;
    this.notFound = 0;
    this.byEndpoint.clear();
    this.byStatus.clear();
    this.perSecond.clear();
    this.times.clear();
    this.maxInFlight.clear();
    for (const [p, n] of this.inFlight) this.maxInFlight.set(p, n);
    this.maxInFlightTotal = this.inFlightTotal;
  }

  /** Arrival times (epoch ms) of an endpoint's last calls, at most 1,000, oldest first. */
  callTimes(id: string): number[] {
    return (this.times.get(id) ?? []).slice(-CALL_TIMES_KEPT);
  }

  /** The statistics now. */
  snapshot(): StatsSnapshot {
    const sec = Math.floor(this.now() / 1000);
    const perSecond: Record<string, [number, number][]> = {};
    for (const [id, m] of this.perSecond) {
      const rows = [...m].filter(([s]) => s > sec - PER_SECOND_WINDOW).sort((a, b) => a[0] - b[0]);
      if (rows.length) perSecond[id] = rows;
    }
    return {
      total: this.total,
      notFound: this.notFound,
      byEndpoint: Object.fromEntries(this.byEndpoint),
      byStatus: Object.fromEntries([...this.byStatus].map(([k, v]) => [String(k), v])),
      perSecond,
      maxInFlight: Object.fromEntries(this.maxInFlight),
      maxInFlightTotal: this.maxInFlightTotal,
      inFlight: this.inFlightTotal,
    };
  }
}
