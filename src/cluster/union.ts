import { WILDCARD } from '../protocol/constants.js';
import { demandCode } from './codec.js';

/**
 * Cluster-wide demand of one feed: the union of every process's registered
 * codes and of this process's own. Pure functions.
 */

/** Codes and wildcard wanted on one feed. */
export interface FeedWant {
  readonly codes: ReadonlySet<string>;
  readonly wildcard: boolean;
}

/** No demand. */
export const NO_WANT: FeedWant = { codes: new Set(), wildcard: false };

/** The union of demand members (`code\tnode`) of every process and the local codes/wildcard. */
export function unionOf(members: readonly string[], local: FeedWant = NO_WANT): FeedWant {
  const codes = new Set(local.codes);
  let wildcard = local.wildcard;
  for (const m of members) {
    const code = demandCode(m);
    if (code === WILDCARD) wildcard = true;
    else if (code.length > 0) codes.add(code);
  }
  return { codes, wildcard };
}

/** Whether two wants are the same. */
export function sameWant(a: FeedWant, b: FeedWant): boolean {
  if (a.wildcard !== b.wildcard || a.codes.size !== b.codes.size) return false;
  for (const c of a.codes) if (!b.codes.has(c)) return false;
  return true;
}

/** What to change in Redis to go from the `registered` codes (with `*`) to the `wanted` ones. */
export function demandDelta(registered: ReadonlySet<string>, wanted: ReadonlySet<string>): { add: string[]; remove: string[] } {
  const add: string[] = [];
  const remove: string[] = [];
  for (const c of wanted) if (!registered.has(c)) add.push(c);
  for (const c of registered) if (!wanted.has(c)) remove.push(c);
  return { add, remove };
}
