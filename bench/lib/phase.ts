/**
 * Timing against periodic pollers: when several feeds each poll once a
 * period, the moment farthest from every poll is the middle of the largest
 * gap between their phases. The end-to-end scenario takes its marks there
 * (so a window holds whole poll cycles) and starts the stand-in's changes
 * there (so each poll carries one period's changes). Pure function.
 */

/**
 * Milliseconds from `now` until the middle of the largest gap between the
 * polls whose last times are `lastPolls` (ms, same clock as `now`; 0 for
 * a poller that has not polled, ignored), all repeating every `periodMs`.
 * 0 when nothing has polled.
 */
export function msToQuietPhase(lastPolls: readonly number[], now: number, periodMs: number): number {
  const next = lastPolls
    .filter((t) => t > 0)
    .map((t) => (((t - now) % periodMs) + periodMs) % periodMs)
    .sort((a, b) => a - b);
  if (next.length === 0) return 0;
  let best = 0;
  let at = 0;
  for (let i = 0; i < next.length; i++) {
    const from = next[i]!;
    const to = i + 1 < next.length ? next[i + 1]! : next[0]! + periodMs;
    if (to - from > best) {
      best = to - from;
      at = from + best / 2;
    }
  }
  return at % periodMs;
}
