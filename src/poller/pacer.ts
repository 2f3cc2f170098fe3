/**
 * Budget pacing: how often each feed may poll so that the day's remaining
 * upstream calls, less those kept for lookups, last through the polling
 * time left before the budget resets (the rest of the day's sessions and
 * the next morning's pre-market, which the same budget day pays for).
 * Pure. See DESIGN.md §2.
 */

/** A feed's demand on the budget. */
export interface FeedLoad {
  readonly key: string;
  /** Priority weight (higher polls more often under pressure). */
  readonly weight: number;
  /** Upstream calls one cycle makes. */
  readonly callsPerCycle: number;
}

/** Inputs of `planIntervals`. */
export interface PaceInput {
  readonly feeds: readonly FeedLoad[];
  /** Calls left today, or null when unknown (no response seen yet). */
  readonly remaining: number | null;
  /** Polling time left in which those calls must last, ms (the market's open hours until the budget resets). */
  readonly windowMs: number;
  /** Fastest interval, ms (the upstream refreshes once a second). */
  readonly baseMs: number;
  /** Calls of `remaining` kept for on-demand lookups: the poller spends none of them. */
  readonly reserved: number;
}

/**
 * The poll interval of each feed, ms. When the budget affords every feed at
 * the base interval, all get it. Otherwise the affordable call rate is split
 * by weight (feeds that need less than their share give the rest to the
 * others) and each feed's interval widens to what its share pays for.
 */
export function planIntervals(input: PaceInput): Map<string, number> {
  const out = new Map<string, number>();
  const active = input.feeds.filter((f) => f.callsPerCycle > 0);
  if (input.remaining === null || active.length === 0) {
    for (const f of input.feeds) out.set(f.key, input.baseMs);
    return out;
  }
  const windowS = Math.max(1, input.windowMs / 1000);
  const rate = Math.max(0, (input.remaining - input.reserved) / windowS);
  const need = new Map(active.map((f) => [f.key, f.callsPerCycle / (input.baseMs / 1000)]));
  const granted = new Map<string, number>();
  let left = rate;
  let open = [...active];
  // Water-filling: grant each open feed its weighted share, capped at its need.
  while (open.length > 0 && left > 1e-12) {
    const totalW = open.reduce((s, f) => s + f.weight, 0);
    const next: typeof open = [];
    let spent = 0;
    for (const f of open) {
      const share = (left * f.weight) / totalW;
      const want = need.get(f.key)! - (granted.get(f.key) ?? 0);
      const give = Math.min(share, want);
      granted.set(f.key, (granted.get(f.key) ?? 0) + give);
      spent += give;
      if (want - give > 1e-12) next.push(f);
    }
    left -= spent;
    if (next.length === open.length && spent < 1e-12) break;
    open = next;
  }
  for (const f of input.feeds) {
    if (f.callsPerCycle === 0) {
      out.set(f.key, input.baseMs);
      continue;
    }
    const g = granted.get(f.key) ?? 0;
    const interval = g > 0 ? (f.callsPerCycle / g) * 1000 : Number.POSITIVE_INFINITY;
    out.set(f.key, Math.max(input.baseMs, Math.ceil(interval)));
  }
  return out;
}
