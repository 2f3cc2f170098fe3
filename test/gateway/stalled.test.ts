import { spawn, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { KrxClient } from '../../src/client/index.js';
import type { Session } from '../../src/gateway/session.js';
import { rowChecksum } from '../../src/protocol/crc32.js';
import type { Channel, Market } from '../../src/protocol/constants.js';
import { QuoteMarket } from '../client/helpers.js';
import { codes, counter, eventually, sleep, startHarness, type Harness } from './harness.js';

/**
 * Clients that stop reading while subscribed to whole markets (quote, ohlc
 * and top of KOSPI and KOSDAQ: 13,500 topics of a KRX-sized market, 30% of
 * them changing every round). What the server holds for each beyond its
 * kernel socket buffer must stay within 64 KB however long it stalls, and
 * one that reads again must end with exactly the server's rows (seq and
 * checksum) and be live.
 */

const KOSPI = 2_500;
const KOSDAQ = 2_000;
const CHANNELS: readonly Channel[] = ['quote', 'ohlc', 'top'];
const FEEDS: readonly (readonly [Channel, Market])[] = CHANNELS.flatMap((c) => [[c, 'kospi'] as const, [c, 'kosdaq'] as const]);
const TOPICS = CHANNELS.length * (KOSPI + KOSDAQ);
const STALLED = 24;
const ROUNDS = 12;
const HELD_MAX = 64 * 1024;

let h: Harness | undefined;
let staller: ChildProcess | undefined;
const clients: KrxClient[] = [];
afterEach(async () => {
  staller?.kill('SIGKILL');
  staller = undefined;
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await h?.close();
  h = undefined;
});

/** One market per feed, each moving 30% of its rows per step (prices, volumes, now and then a field added or removed). */
function markets(): Map<string, QuoteMarket> {
  const out = new Map<string, QuoteMarket>();
  FEEDS.forEach(([c, m], i) => out.set(`${c}.${m}`, new QuoteMarket(m === 'kospi' ? codes(KOSPI) : codes(KOSDAQ, 500000), i + 1)));
  return out;
}

/** Applies one step of every feed, yielding to I/O after each. */
async function round(hh: Harness, ms: Map<string, QuoteMarket>): Promise<void> {
  for (const [c, m] of FEEDS) {
    hh.tick(c, m, ms.get(`${c}.${m}`)!.step());
    await new Promise((r) => setImmediate(r));
  }
}

function sessionsOf(hh: Harness): Set<Session> {
  return (hh.gateway as unknown as { sessions: Set<Session> }).sessions;
}

/** What a session holds in userland for its socket: ws's bufferedAmount (the socket's write queue and ws's own). */
function userland(s: Session): number {
  return s.ws.bufferedAmount;
}

/** Node's `gc()`, exposed at run time (tests only). */
function exposeGc(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

/** Live JS heap plus buffers outside it, once two collections agree within 16 KB (at most 8 tries). */
async function liveBytes(gc: () => void): Promise<number> {
  let last = Infinity;
  for (let i = 0; i < 8; i++) {
    gc();
    await sleep(30);
    const u = process.memoryUsage();
    const now = u.heapUsed + u.external;
    if (Math.abs(now - last) < 16 * 1024) return now;
    last = now;
  }
  return last;
}

/** A WebSocket whose instances are kept, so a test can stop one from reading. */
const opened: WebSocket[] = [];
class KeptWebSocket extends WebSocket {
  constructor(...args: ConstructorParameters<typeof WebSocket>) {
    super(...args);
    opened.push(this);
  }
}

/**
 * Starts `n` clients in a process of their own (staller.mjs), each
 * subscribed to every feed whole and never reading; resolves once all are
 * connected and subscribed. Closing its stdin ends them.
 */
async function stallers(url: string, n: number): Promise<ChildProcess> {
  const script = fileURLToPath(new URL('./staller.mjs', import.meta.url));
  const subs = FEEDS.map(([channel, market], id) => JSON.stringify({ op: 'subscribe', id, channel, market, codes: ['*'] }));
  const child = spawn(process.execPath, [script, url, String(n), ...subs], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  await eventually(() => out.includes('ready'), 10_000, 'stalled clients');
  return child;
}

function socketOf(ws: WebSocket): Socket {
  return (ws as unknown as { _socket: Socket })._socket;
}

/** Topics whose row, seq or checksum differ between the client and the server's store. */
function differences(hh: Harness, c: KrxClient): string[] {
  const out: string[] = [];
  for (const [ch, m] of FEEDS) {
    for (const e of hh.store.entries(ch, m)) {
      const row = c.snapshot(e.topic) as Record<string, unknown> | undefined;
      if (row === undefined || c.seq(e.topic) !== e.seq || rowChecksum(row) !== e.crc || JSON.stringify(row) !== JSON.stringify(e.row)) out.push(e.topic);
    }
  }
  return out;
}

describe('stalled clients on a whole KRX-sized market', () => {
  it('hold at most 64 KB each beyond the kernel buffer, and one that reads again ends with the server rows, live', async () => {
    h = await startHarness({}, {}, KOSPI);
    const hh = h;
    const ms = markets();
    await round(hh, ms);
    // The SDK client that will stall and come back: every feed whole, checksums checked.
    const c = new KrxClient(hh.url, { WebSocket: KeptWebSocket as never, heartbeat: false });
    clients.push(c);
    const resyncs: string[] = [];
    const errors: string[] = [];
    c.on('resync', (t, why) => resyncs.push(`${t} ${why}`));
    c.on('error', (e) => errors.push(e.message));
    for (const [ch, m] of FEEDS) await c.subscribe(ch, m, '*');
    await eventually(() => c.topics().length === TOPICS, 10_000, 'every snapshot');
    const ws = opened.at(-1)!;
    // Clients that never read at all, subscribed to the same, in another process (what they hold is not the server's).
    staller = await stallers(hh.url, STALLED);
    await eventually(() => hh.gateway.clientCount === STALLED + 1, 5000, 'connections');
    socketOf(ws).pause();

    let maxHeld = 0;
    for (let i = 0; i < ROUNDS; i++) {
      await round(hh, ms);
      for (const s of sessionsOf(hh)) maxHeld = Math.max(maxHeld, userland(s));
    }
    expect(hh.gateway.stats().behind).toBe(STALLED + 1);
    expect(maxHeld).toBeLessThanOrEqual(HELD_MAX);
    expect(await counter(hh.metrics, 'krx_server_closes_total', { code: '4008' })).toBe(0);

    // Everything the process holds for the never-reading clients: live memory with them, then without.
    const gc = exposeGc();
    const withThem = await liveBytes(gc);
    staller.stdin!.end();
    await eventually(() => hh.gateway.clientCount === 1, 5000, 'stalled sessions gone');
    const without = await liveBytes(gc);
    const perClient = (withThem - without) / STALLED;
    console.log('stalled client figures', JSON.stringify({ maxHeldKB: +(maxHeld / 1024).toFixed(1), heldPerClientKB: +(perClient / 1024).toFixed(1) }));
    expect(perClient).toBeLessThanOrEqual(HELD_MAX);

    // Reading again: the client ends with the server's rows, checksums included, without a resync, and is live.
    socketOf(ws).resume();
    await eventually(() => hh.gateway.stats().behind === 0 && differences(hh, c).length === 0, 15_000, 'caught up');
    await round(hh, ms);
    await eventually(() => differences(hh, c).length === 0, 10_000, 'live again');
    expect(hh.gateway.stats().behind).toBe(0);
    expect(resyncs).toEqual([]);
    expect(errors).toEqual([]);
  }, 90_000);
});
