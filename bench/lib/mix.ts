import { BATCH_CHANNELS, LIST_CHANNELS, type Channel, type Market } from '../../src/protocol/constants.js';

/**
 * The economy scenario's subscription mix and the fewest upstream calls
 * per poll cycle it needs. Pure functions.
 */

/** One subscribe request. */
export interface Sub {
  readonly channel: Channel;
  readonly market: Market;
  readonly codes: readonly string[];
}

/** The two clients' subscriptions over the listed codes of each market (overlapping on purpose). */
export function economyMix(kospi: readonly string[], kosdaq: readonly string[]): Sub[][] {
  return [
    [
      { channel: 'quote', market: 'kospi', codes: ['*'] },
      { channel: 'price', market: 'kospi', codes: kospi.slice(0, 30) },
      { channel: 'book', market: 'kosdaq', codes: kosdaq.slice(0, 25) },
    ],
    [
      { channel: 'price', market: 'kospi', codes: kospi.slice(20, 45) },
      { channel: 'ohlc', market: 'kosdaq', codes: kosdaq.slice(0, 30) },
      { channel: 'top', market: 'kospi', codes: kospi.slice(100, 110) },
      { channel: 'book', market: 'kosdaq', codes: kosdaq.slice(10, 20) },
    ],
  ];
}

/** Calls per cycle the mix needs at least, per feed (codes counted once across clients). */
export function minimumPerCycle(mix: readonly (readonly Sub[])[]): Map<string, { codes: number | '*'; calls: number }> {
  const codes = new Map<string, Set<string>>();
  for (const client of mix) {
    for (const s of client) {
      const key = `${s.channel}.${s.market}`;
      let set = codes.get(key);
      if (!set) codes.set(key, (set = new Set()));
      for (const c of s.codes) set.add(c);
    }
  }
  const out = new Map<string, { codes: number | '*'; calls: number }>();
  for (const [feed, set] of codes) {
    const channel = feed.slice(0, feed.indexOf('.')) as Channel;
    const calls = (LIST_CHANNELS as readonly string[]).includes(channel)
      ? 1
      : (BATCH_CHANNELS as readonly string[]).includes(channel)
        ? Math.ceil(set.size / 20)
        : set.size;
    out.set(feed, { codes: set.has('*') ? '*' : set.size, calls });
  }
  return out;
}
