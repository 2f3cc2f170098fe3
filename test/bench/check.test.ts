import { describe, expect, it } from 'vitest';
import { checkResults, checkTable } from '../../bench/check.js';
import type { Results } from '../../bench/report.js';

const ALL = ['fanout', 'snapshot', 'e2e', 'connections', 'cycle', 'economy'];
const PEERS = ['bridge', 'socketio', 'naive', 'floor'];

function results(
  over: {
    cpuVsFloor?: number;
    lost?: number;
    rss?: number;
    economy?: number;
    snapshot?: unknown;
    cycle?: number;
    cycleAlone?: number;
    e2eRatio?: number | null;
    e2eLost?: number;
  } = {},
): Results {
  return {
    machine: {},
    mode: 'quick',
    startedAt: '2026-11-22T00:00:00Z',
    fanout: {
      bridge: { p99Ms: 20, lost: over.lost ?? 0, outOfOrder: 0, disconnects: 0 },
      ratios: { cpuVsFloor: over.cpuVsFloor ?? 1.2, cpuVsSocketio: 0.15, p99VsFloor: 1.1 },
    },
    snapshot: over.snapshot ?? { ms: 40 },
    e2e: {
      bridge: { p99Ms: 40, lost: over.e2eLost ?? 0, outOfOrder: 0, disconnects: 0 },
      socketio: { p99Ms: 300, lost: 0, outOfOrder: 0, disconnects: 0 },
      ratios: { cpuVsSocketio: over.e2eRatio === undefined ? 0.2 : over.e2eRatio },
    } as never,
    connections: { rssKbPerConn: over.rss ?? 7, snapshot: { ms: 20 } } as never,
    cycle: { ratioToJsonParse: over.cycle ?? 0.9, alone: { ratio: over.cycleAlone ?? 0.95 }, mismatches: 0, plainReads: 0 } as never,
    economy: { ratioToMinimum: over.economy ?? 1, idleRealtimeCalls: 0 } as never,
  };
}

describe('bench targets', () => {
  it('meets every target with figures inside them', () => {
    const out = checkResults(results(), ALL, PEERS);
    expect(out).toHaveLength(21);
    expect(out.every((o) => o.met && o.withinCi)).toBe(true);
  });

  it('separates a missed target from a figure past the CI limit', () => {
    const out = checkResults(results({ cpuVsFloor: 1.6, rss: 31 }), ALL, PEERS);
    const floor = out.find((o) => o.name === 'fanout cpu/update vs floor')!;
    expect(floor).toMatchObject({ value: 1.6, met: false, withinCi: true });
    const rss = out.find((o) => o.name === 'connections RSS KB/conn')!;
    expect(rss).toMatchObject({ value: 31, met: false, withinCi: false });
    expect(checkTable(out, true)).toContain('check: 1 figure(s) past the CI limit');
  });

  it('holds the cycle alone, garbage collections included, as well as its median', () => {
    const out = checkResults(results({ cycle: 1.4, cycleAlone: 4.5 }), ['cycle'], PEERS);
    expect(out.find((o) => o.name === 'cycle vs JSON.parse')).toMatchObject({ value: 1.4, met: false, withinCi: true });
    expect(out.find((o) => o.name === 'cycle alone vs JSON.parse, means')).toMatchObject({ value: 4.5, met: false, withinCi: false });
  });

  it('allows no loss at all, and the economy only its tolerance', () => {
    const out = checkResults(results({ lost: 1, economy: 1.05 }), ALL, PEERS);
    expect(out.find((o) => o.name === 'fanout lost')).toMatchObject({ met: false, withinCi: false });
    expect(out.find((o) => o.name === 'economy calls vs minimum')).toMatchObject({ met: false, withinCi: true });
    const worse = checkResults(results({ economy: 1.2 }), ALL, PEERS);
    expect(worse.find((o) => o.name === 'economy calls vs minimum')?.withinCi).toBe(false);
  });

  it('fails a figure that a scenario which ran did not produce', () => {
    const out = checkResults(results({ snapshot: { error: 'timeout' } }), ALL, PEERS);
    expect(out.find((o) => o.name === 'snapshot ms')).toMatchObject({ value: undefined, withinCi: false });
  });

  it('holds the recorder to its cost, its bytes per change and no drops', () => {
    const run = (rec: Record<string, number>) =>
      checkResults(
        { ...results(), recorder: { ratioToOff: 1.5, bytesPerChange: 420, storedBytesPerChange: 43, dropped: 0, ...rec } as never },
        ['recorder'],
        PEERS,
      );
    const good = run({});
    expect(good.map((o) => o.name)).toEqual(['recorder cycle on vs off', 'recorder bytes/change', 'recorder stored bytes/change', 'recorder dropped']);
    expect(good.every((o) => o.met && o.withinCi)).toBe(true);
    expect(run({ ratioToOff: 2.5 }).find((o) => o.name === 'recorder cycle on vs off')).toMatchObject({ met: false, withinCi: true });
    expect(run({ bytesPerChange: 520 }).find((o) => o.name === 'recorder bytes/change')).toMatchObject({ met: false, withinCi: false });
    expect(run({ dropped: 3 }).find((o) => o.name === 'recorder dropped')).toMatchObject({ met: false, withinCi: false });
    // Not run: no figure is asked of it.
    expect(checkResults(results(), ALL, PEERS).some((o) => o.name.startsWith('recorder'))).toBe(false);
  });

  it('holds the end-to-end ratio to its target and CI limit, and allows it no loss', () => {
    const out = checkResults(results({ e2eRatio: 0.4, e2eLost: 2 }), ALL, PEERS);
    expect(out.find((o) => o.name === 'e2e cpu/update vs socket.io')).toMatchObject({ value: 0.4, met: false, withinCi: true });
    expect(out.find((o) => o.name === 'e2e lost')).toMatchObject({ met: false, withinCi: false });
    const failed = checkResults(results({ e2eRatio: null }), ALL, PEERS);
    expect(failed.find((o) => o.name === 'e2e cpu/update vs socket.io')).toMatchObject({ value: undefined, withinCi: false });
    // Without socket.io among the peers, the ratio is not asked for.
    expect(checkResults(results(), ['e2e'], ['bridge']).map((o) => o.name)).toEqual(['e2e p99 ms', 'e2e lost', 'e2e out of order', 'e2e closed']);
  });

  it('holds a stalled client to kilobytes, and fails a stall the clients never caught up from', () => {
    const stalled = { rssKbPerStalled: 40, liveKbPerStalled: 35, normal: { p99Ms: 20, lost: 0 }, catchUpMs: 300 };
    const out = checkResults({ ...results(), stalled } as Results, ['stalled'], PEERS);
    expect(out.map((o) => o.name)).toEqual([
      'stalled RSS KB/client',
      'stalled live KB/client',
      'stalled normal p99 ms',
      'stalled normal lost',
      'stalled catch-up ms',
    ]);
    expect(out.every((o) => o.met && o.withinCi)).toBe(true);
    // Megabytes per stalled client, as when each kept a conflated queue of bytes, are past the CI limits.
    const before = checkResults(
      { ...results(), stalled: { ...stalled, rssKbPerStalled: 735, liveKbPerStalled: 1065, catchUpMs: undefined } } as Results,
      ['stalled'],
      PEERS,
    );
    expect(before.filter((o) => !o.withinCi).map((o) => o.name)).toEqual(['stalled RSS KB/client', 'stalled live KB/client', 'stalled catch-up ms']);
  });

  it('skips scenarios and peers that were not run', () => {
    const out = checkResults(results(), ['cycle', 'fanout'], ['bridge']);
    expect(out.map((o) => o.name)).toEqual([
      'fanout p99 ms',
      'fanout lost',
      'fanout out of order',
      'fanout closed',
      'cycle vs JSON.parse',
      'cycle alone vs JSON.parse, means',
      'cycle events differ from plain',
      'cycle bodies read plain',
    ]);
  });

  it('holds the cycle to JSON.parse of the same body, with the CI limit past it', () => {
    const at = (v: number) => checkResults(results({ cycle: v }), ['cycle'], []).find((o) => o.name === 'cycle vs JSON.parse')!;
    expect(at(0.95)).toMatchObject({ met: true, withinCi: true });
    expect(at(1.6)).toMatchObject({ met: false, withinCi: true });
    expect(at(2.6)).toMatchObject({ met: false, withinCi: false });
  });
});
