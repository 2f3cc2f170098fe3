import { describe, expect, it } from 'vitest';
import { addressCount, sourceAddress } from '../../bench/lib/addresses.js';
import { feedsOf, listingTopics, marketOfSymbol, splitTopic, symbolsByMarket } from '../../bench/lib/listing.js';
import { SyntheticMarket } from '../../bench/lib/market.js';
import { msToQuietPhase } from '../../bench/lib/phase.js';
import { fieldOps } from '../../bench/server/e2e-socketio.js';

describe('sourceAddress', () => {
  it('puts perAddress clients on each loopback address from 127.0.0.2, carrying into the higher bytes', () => {
    expect([0, 99, 100, 199, 200].map((c) => sourceAddress(c, 100))).toEqual(['127.0.0.2', '127.0.0.2', '127.0.0.3', '127.0.0.3', '127.0.0.4']);
    expect(sourceAddress(17_999, 100)).toBe('127.0.0.181');
    expect(sourceAddress(253, 1)).toBe('127.0.0.255');
    expect(sourceAddress(254, 1)).toBe('127.0.1.0');
    expect(sourceAddress(0xff_ff_fe - 2, 1)).toBe('127.255.255.254');
  });

  it('refuses what it cannot place', () => {
    expect(() => sourceAddress(-1, 100)).toThrow(RangeError);
    expect(() => sourceAddress(0, 0)).toThrow(RangeError);
    expect(() => sourceAddress(0xff_ff_fe, 1)).toThrow(/more loopback addresses/);
  });

  it('counts the addresses a load uses', () => {
    expect(addressCount(18_000, 100)).toBe(180);
    expect(addressCount(1_501, 100)).toBe(16);
  });
});

describe('stand-in listing', () => {
  it('splits the synthetic market five to four over KOSPI and KOSDAQ, codes as the market has them', () => {
    const topics = listingTopics(4_500, 11);
    const market = new SyntheticMarket({ symbols: 4_500, seed: 11 });
    expect(topics.map((t) => splitTopic(t).code)).toEqual(market.codes);
    const by = symbolsByMarket(4_500);
    expect([by.kospi.length, by.kosdaq.length]).toEqual([2_500, 2_000]);
    expect(topics[0]).toBe(`quote.kospi.${market.codes[0]}`);
    expect(topics[5]).toBe(`quote.kosdaq.${market.codes[5]}`);
    expect(by.kosdaq.every((i) => marketOfSymbol(i) === 'kosdaq' && topics[i]!.startsWith('quote.kosdaq.'))).toBe(true);
    expect(new Set(topics).size).toBe(4_500);
  });

  it('splits a topic into channel, market and code', () => {
    expect(splitTopic('quote.kosdaq.A0001X')).toEqual({ channel: 'quote', market: 'kosdaq', code: 'A0001X' });
  });

  it('groups a client’s topics into one subscribe request per feed', () => {
    expect(feedsOf(['quote.kosdaq.000030', 'quote.kospi.000020', 'quote.kosdaq.000040'])).toEqual([
      { channel: 'quote', market: 'kosdaq', codes: ['000030', '000040'] },
      { channel: 'quote', market: 'kospi', codes: ['000020'] },
    ]);
  });
});

describe('msToQuietPhase', () => {
  it('waits for half a period after a single poller', () => {
    expect(msToQuietPhase([10_000], 10_000, 1_000)).toBe(500);
    expect(msToQuietPhase([10_000], 10_300, 1_000)).toBe(200);
    expect(msToQuietPhase([10_000], 10_700, 1_000)).toBe(800);
  });

  it('picks the middle of the largest gap between several pollers, wrapping around the period', () => {
    // Polls at phases 0 and 200: the largest gap runs 200 → 1000, its middle at 600.
    expect(msToQuietPhase([10_000, 10_200], 10_250, 1_000)).toBe(350);
    // Polls at phases 100 and 900: the largest gap runs 100 → 900.
    expect(msToQuietPhase([20_100, 19_900], 20_000, 1_000)).toBe(500);
  });

  it('ignores pollers that never polled', () => {
    expect(msToQuietPhase([0, 0], 5_000, 1_000)).toBe(0);
    expect(msToQuietPhase([0, 4_900], 5_000, 1_000)).toBe(400);
  });
});

describe('fieldOps', () => {
  it('replaces every field whose value differs, new fields included, in the row’s order', () => {
    expect(fieldOps({ a: 1, b: ' -', c: 3 }, { a: 1, b: 2, c: 4, d: 5 })).toEqual([
      { op: 'replace', path: '/b', value: 2 },
      { op: 'replace', path: '/c', value: 4 },
      { op: 'replace', path: '/d', value: 5 },
    ]);
    expect(fieldOps({ a: 1 }, { a: 1 })).toEqual([]);
  });
});
