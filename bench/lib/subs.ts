import { rng } from './market.js';

/**
 * Subscription sets of the load clients, derived from a seed so the load
 * generator and the server (which needs the expected delivery counts)
 * compute the same sets without exchanging them.
 */

/** Parameters of a subscription layout. */
export interface SubsLayout {
  readonly seed: number;
  readonly clients: number;
  readonly topicsPerClient: number;
  readonly symbols: number;
}

/** The distinct symbol indices client `client` subscribes to, ascending. */
export function clientSymbols(layout: SubsLayout, client: number): Int32Array {
  const k = Math.min(layout.topicsPerClient, layout.symbols);
  const r = rng((layout.seed ^ Math.imul(client + 1, 0x9e3779b1)) >>> 0);
  const picked = new Set<number>();
  while (picked.size < k) picked.add(Math.floor(r() * layout.symbols));
  return Int32Array.from(picked).sort();
}

/** Subscribers per symbol index over every client of a layout. */
export function subscriberCounts(layout: SubsLayout): Int32Array {
  const counts = new Int32Array(layout.symbols);
  for (let c = 0; c < layout.clients; c++) for (const s of clientSymbols(layout, c)) counts[s]!++;
  return counts;
}
