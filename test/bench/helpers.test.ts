import { createRequire } from 'node:module';
import type { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { arrayFrame } from '../../bench/lib/frame.js';
import { headerLength } from '../../src/gateway/frame.js';
import { SyntheticMarket, changedOps, listBody, marketTopics, tickSize } from '../../bench/lib/market.js';
import { busyCores, parseProcStat } from '../../bench/lib/procstat.js';
import { clientSymbols, subscriberCounts } from '../../bench/lib/subs.js';
import { num, table } from '../../bench/lib/table.js';
import { parseArgs } from '../../bench/config.js';
import { economyMix, minimumPerCycle } from '../../bench/lib/mix.js';
import { endpoint } from '../../src/upstream/catalogue.js';
import { normaliseBody } from '../../src/upstream/normalise.js';

// ws's frame parser is public at runtime but has no type declarations.
const { Receiver } = createRequire(import.meta.url)('ws') as {
  Receiver: new (opts: { isServer: boolean }) => EventEmitter & { write(chunk: Buffer): void };
};

/** Decodes one server-to-client frame with ws's own receiver. */
function decode(frame: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const r = new Receiver({ isServer: false });
    r.on('message', (data: Buffer) => resolve(data.toString()));
    r.on('error', reject);
    r.write(frame);
  });
}

describe('arrayFrame', () => {
  it.each([0, 100, 130, 70_000])('frames a JSON array with a payload near %i bytes', async (size) => {
    const parts = [Buffer.from(JSON.stringify({ a: 'x'.repeat(size) })), Buffer.from('{"b":2}')];
    const frame = arrayFrame(parts, parts[0]!.length + parts[1]!.length);
    const text = await decode(frame);
    expect(JSON.parse(text)).toEqual([{ a: 'x'.repeat(size) }, { b: 2 }]);
    expect(frame.length).toBe(headerLength(Buffer.byteLength(text)) + Buffer.byteLength(text));
  });

  it('uses 2, 4 and 10 header bytes at the RFC 6455 boundaries', () => {
    expect([125, 126, 65_535, 65_536].map(headerLength)).toEqual([2, 4, 4, 10]);
  });
});

describe('SyntheticMarket', () => {
  it('is deterministic for a seed', () => {
    const a = new SyntheticMarket({ symbols: 100, seed: 7 });
    const b = new SyntheticMarket({ symbols: 100, seed: 7 });
    expect(a.step().map((c) => [c.index, c.row])).toEqual(b.step().map((c) => [c.index, c.row]));
    expect(a.topics).toEqual(marketTopics(100, 7));
  });

  it('changes exactly its share of distinct symbols, each by a real difference, on the tick grid', () => {
    const m = new SyntheticMarket({ symbols: 1000, seed: 3, changeRatio: 0.3 });
    for (let s = 0; s < 5; s++) {
      const changes = m.step();
      expect(changes).toHaveLength(300);
      expect(new Set(changes.map((c) => c.index)).size).toBe(300);
      for (const c of changes) {
        expect(c.seq).toBe(m.seqs[c.index]);
        expect(c.row.accTrdvol as number).toBeGreaterThan(c.prev.accTrdvol as number);
        const p = c.row.trdPrc as number;
        expect(p % tickSize(p)).toBe(0);
        expect(changedOps(c.prev, c.row).length).toBeGreaterThanOrEqual(2);
      }
    }
    expect(Math.max(...m.seqs)).toBeLessThanOrEqual(6);
    expect(m.seqs.reduce((a, b) => a + b, 0)).toBe(1000 + 5 * 300);
  });

  it('makes list bodies the normaliser accepts, placeholders included', () => {
    const m = new SyntheticMarket({ symbols: 400, seed: 1 });
    const text = listBody(m, '20240603', '091500');
    const body = JSON.parse(text) as { trdTm: string; isuLists: Record<string, unknown>[] };
    expect(body.trdTm).toBe('091500');
    expect(body.isuLists[199]!.mktcap).toBe(' -');
    const r = normaliseBody(endpoint('v2.multiquote.lists').response, body);
    if (!r.ok) throw new Error(r.reason);
    expect(r.value.rows).toHaveLength(400);
    expect(r.value.dropped).toBe(0);
    expect(r.value.rows[199]!.mktcap).toBeNull();
  });
});

describe('subscription layout', () => {
  const layout = { seed: 5, clients: 50, topicsPerClient: 20, symbols: 300 };

  it('gives each client distinct sorted symbols, the same every time', () => {
    const a = clientSymbols(layout, 3);
    expect(a).toHaveLength(20);
    expect(new Set(a).size).toBe(20);
    expect([...a]).toEqual([...a].sort((x, y) => x - y));
    expect(clientSymbols(layout, 3)).toEqual(a);
    expect(clientSymbols(layout, 4)).not.toEqual(a);
  });

  it('counts subscribers per symbol consistently with the sets', () => {
    const counts = subscriberCounts(layout);
    expect(counts.reduce((x, y) => x + y, 0)).toBe(50 * 20);
  });
});

describe('procstat', () => {
  it('reads busy and total ticks from the aggregate cpu line', () => {
    const text = 'cpu  100 5 50 800 20 1 2 3 0 0\ncpu0 1 1 1 1 1 1 1 1\n';
    expect(parseProcStat(text)).toEqual({ busy: 161, total: 981 });
    expect(parseProcStat('intr 1 2')).toBeUndefined();
    expect(busyCores({ busy: 0, total: 0 }, { busy: 100, total: 200 }, 2)).toBe(1);
    expect(busyCores(undefined, { busy: 1, total: 2 }, 2)).toBeNaN();
  });
});

describe('table', () => {
  it('aligns the first column left and the rest right', () => {
    expect(
      table(
        ['peer', 'n'],
        [
          ['bridge', '1'],
          ['ws', '100'],
        ],
      ),
    ).toBe('peer      n\n------  ---\nbridge    1\nws      100');
    expect(num(12345.678, 1)).toBe('12,345.7');
    expect(num(NaN)).toBe('–');
  });
});

describe('parseArgs', () => {
  it('selects the quick settings and applies overrides', () => {
    const q = parseArgs(['--quick', '--only=fanout,cycle', '--peers=bridge,floor', '--clients=10']);
    expect(q.mode).toBe('quick');
    expect(q.only).toEqual(['fanout', 'cycle']);
    expect(q.peers).toEqual(['bridge', 'floor']);
    expect(q.fanout.clients).toBe(10);
    expect(parseArgs([]).fanout.clients).toBe(2000);
    // The end-to-end scenario runs the peers of --peers that poll.
    expect(q.e2e.peers).toEqual(['bridge']);
    expect(parseArgs([]).e2e.peers).toEqual(['bridge', 'socketio']);
    expect(parseArgs(['--connections=18000']).connections.count).toBe(18_000);
    expect(parseArgs(['--quick', '--e2e-clients=3000']).e2e).toMatchObject({ clients: 3_000, windows: 3 });
  });

  it('refuses unknown options, scenarios and peers', () => {
    expect(() => parseArgs(['--fast'])).toThrow(/unknown option/);
    expect(() => parseArgs(['--only=speed'])).toThrow(/unknown scenario/);
    expect(() => parseArgs(['--peers=uws'])).toThrow(/unknown peer/);
    expect(() => parseArgs(['--clients=0'])).toThrow(/positive integer/);
  });
});

describe('economy minimum', () => {
  it('counts one call per list feed and ⌈codes/20⌉ per batch feed, codes once across clients', () => {
    const kospi = Array.from({ length: 200 }, (_, i) => String(100_000 + i));
    const kosdaq = Array.from({ length: 200 }, (_, i) => String(200_000 + i));
    const m = minimumPerCycle(economyMix(kospi, kosdaq));
    expect(Object.fromEntries(m)).toEqual({
      'quote.kospi': { codes: '*', calls: 1 },
      'price.kospi': { codes: 45, calls: 3 },
      'book.kosdaq': { codes: 25, calls: 2 },
      'ohlc.kosdaq': { codes: 30, calls: 1 },
      'top.kospi': { codes: 10, calls: 1 },
    });
  });

  it('needs one call for exactly 20 codes and two for 21', () => {
    const codes = (n: number): string[] => Array.from({ length: n }, (_, i) => String(i).padStart(6, '0'));
    expect(minimumPerCycle([[{ channel: 'book', market: 'kospi', codes: codes(20) }]]).get('book.kospi')?.calls).toBe(1);
    expect(minimumPerCycle([[{ channel: 'book', market: 'kospi', codes: codes(21) }]]).get('book.kospi')?.calls).toBe(2);
  });
});

describe('parseArgs --wait-idle', () => {
  it('takes a number of seconds, 0 by default', () => {
    expect(parseArgs([]).waitIdleS).toBe(0);
    expect(parseArgs(['--wait-idle=90']).waitIdleS).toBe(90);
    expect(() => parseArgs(['--wait-idle=soon'])).toThrow(/positive integer/);
  });
});
