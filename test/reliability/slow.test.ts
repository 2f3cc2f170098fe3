import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { rowChecksum } from '../../src/protocol/crc32.js';
import { applyOps } from '../../src/protocol/patch.js';
import type { Row } from '../../src/upstream/normalise.js';
import { sleep, startBridge, until, type TestBridge } from '../bridge/helpers.js';
import { ProcessWatch, median, metric, percentile, rawClient, type RawClient } from './helpers.js';

/**
 * Slow consumers beside a crowd: clients that never read (bare TCP sockets
 * that did the WebSocket handshake and stopped reading) subscribe, one
 * after another, to the whole of a busy feed that 200 normal clients also
 * receive (ten topics each). The feed is driven synthetically through the
 * bridge's own store and bus (the poller is stopped): about 3 MB/s for the
 * whole market. Each slow client must fall behind (conflation) and be
 * closed with 4008; server memory must stay bounded although the bytes
 * owed to the slow clients grow without bound; and the normal clients' p99
 * latency (publish `ts` to receipt), in rounds interleaved with rounds
 * without a slow client, must stay within 2× of it.
 */

const NORMAL = 200;
const SYMBOLS = 1000;
const CODES_EACH = 10;
const TICK_MS = 200;
const CHANGE = 0.3;
const MEMO_BYTES = 2000;
const WINDOW_MS = 500;
const PHASE_MS = 2000;
const ROUNDS = 3;
/** Slow-consumer thresholds: the close threshold a quarter of the default, so each slow client is dealt with in a few seconds. */
const SLOW = { SLOW_CONFLATE_BYTES: 32 << 10, SLOW_CLOSE_BYTES: 4 << 20 };

/**
 * Drives the `quote.kospi` feed: on every tick a rotating CHANGE share of
 * the rows change price and carry a new MEMO_BYTES memo (an unknown field,
 * kept as the normaliser keeps unknown fields), so the whole market is
 * heavy while each normal client's share stays light.
 */
class Load {
  ticks = 0;
  bytes = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly rows: Row[];

  constructor(
    private readonly tb: TestBridge,
    codes: readonly string[],
  ) {
    this.rows = codes.map((code, i) => ({ isuSrtCd: code, trdPrc: 10_000 + i * 10, accTrdvol: 0, memo: '' }));
  }

  start(): void {
    this.timer = setInterval(() => this.tick(), TICK_MS);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  tick(): void {
    const t = ++this.ticks;
    const every = Math.round(1 / CHANGE);
    const filler = String(t % 10).repeat(MEMO_BYTES);
    for (let i = t % every; i < this.rows.length; i += every) {
      const r = this.rows[i]!;
      this.rows[i] = { ...r, trdPrc: 10_000 + ((t * 7 + i) % 997) * 10, accTrdvol: (r.accTrdvol as number) + 1, memo: `${t}:${filler}` };
    }
    const { store, bus } = this.tb.bridge;
    const batch = store.apply('quote', 'kospi', this.rows, Date.now());
    bus.publish(batch);
    for (const e of batch.events) this.bytes += e.frame.length;
  }
}

/** Node's `gc()`, exposed at run time (tests only). */
function exposeGc(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

/** Bytes of live JS heap and of buffers outside it. */
function liveBytes(): number {
  const u = process.memoryUsage();
  return u.heapUsed + u.external;
}

/**
 * `liveBytes()` once garbage is really gone: buffers' memory leaves
 * `external` when V8's sweeper gets to them, which may be after `gc()`
 * returns, so collect until two readings agree within 1 MB (at most 5 times).
 */
async function settledLiveBytes(gc: () => void): Promise<number> {
  let last = Infinity;
  for (let i = 0; i < 5; i++) {
    gc();
    await sleep(20);
    const now = liveBytes();
    if (Math.abs(now - last) < 2 ** 20) return now;
    last = now;
  }
  return last;
}

const mb = (bytes: number) => +(bytes / 2 ** 20).toFixed(1);

/**
 * A normal client that keeps no message history (so the test's own memory
 * does not hide the server's): it checks seq continuity and the checksum of
 * every topic and records the latency of every patch.
 */
class LeanClient {
  readonly ws: WebSocket;
  readonly rows = new Map<string, Row>();
  readonly seqs = new Map<string, number>();
  readonly problems: string[] = [];
  readonly replies = new Map<unknown, Record<string, unknown>>();
  closed: number | undefined;
  welcomed = false;

  constructor(
    url: string,
    private readonly latency: Samples,
  ) {
    this.ws = new WebSocket(url, { perMessageDeflate: false });
    this.ws.on('message', (data) => this.onFrame(String(data)));
    this.ws.on('close', (code) => (this.closed = code));
    this.ws.on('error', () => undefined);
  }

  private onFrame(text: string): void {
    const at = Date.now();
    const parsed = JSON.parse(text) as Msg | Msg[];
    for (const m of Array.isArray(parsed) ? parsed : [parsed]) {
      if (m.type === 'welcome') this.welcomed = true;
      else if (m.type === 'snapshot') this.apply(m.topic, m.seq, m.crc, { ...m.data });
      else if (m.type === 'patch') {
        this.latency.add(at, at - m.ts);
        const prev = this.rows.get(m.topic);
        if (!prev || m.seq !== (this.seqs.get(m.topic) ?? 0) + 1) this.problems.push(`${m.topic}: patch ${m.seq} after ${this.seqs.get(m.topic)}`);
        else {
          const next = applyOps(prev, m.ops);
          if (next) this.apply(m.topic, m.seq, m.crc, next);
          else this.problems.push(`${m.topic}: patch ${m.seq} does not apply`);
        }
      } else if (m.id !== undefined) this.replies.set(m.id, m);
    }
  }

  private apply(topic: string, seq: number, crc: number, row: Row): void {
    if (rowChecksum(row) !== crc) this.problems.push(`${topic}: crc mismatch at ${seq}`);
    this.rows.set(topic, row);
    this.seqs.set(topic, seq);
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Msg = Record<string, any>;

/** Latency samples in preallocated arrays: receipt time and ms after the message's ts. */
class Samples {
  private readonly at = new Float64Array(4_000_000);
  private readonly ms = new Float64Array(4_000_000);
  n = 0;

  add(at: number, ms: number): void {
    if (this.n >= this.at.length) return;
    this.at[this.n] = at;
    this.ms[this.n++] = ms;
  }

  /** p99 of each full window of WINDOW_MS between `from` and `to`. */
  windowP99s(from: number, to: number): number[] {
    const out: number[] = [];
    for (let t = from; t + WINDOW_MS <= to; t += WINDOW_MS) {
      const w: number[] = [];
      for (let i = 0; i < this.n; i++) if (this.at[i]! >= t && this.at[i]! < t + WINDOW_MS) w.push(this.ms[i]!);
      if (w.length > 0) out.push(percentile(w, 99));
    }
    return out;
  }
}

describe('slow consumers beside 200 normal clients', () => {
  let tb: TestBridge;
  let load: Load;
  let watch: ProcessWatch;
  const clients: LeanClient[] = [];
  const samples = new Samples();

  beforeAll(async () => {
    watch = new ProcessWatch();
    tb = await startBridge({ MAX_CONNECTIONS_PER_IP: 1000, RING_SIZE: 4, ...SLOW });
    // The poller stays out of it: this feed is driven by the test alone.
    tb.bridge.poller.stop();
    await until(() => tb.bridge.symbols.loaded('kospi'), 10_000, 'symbols');
    const codes = tb.bridge.symbols
      .list('kospi')
      .map((s) => s.code)
      .slice(0, SYMBOLS);
    load = new Load(tb, codes);
    load.tick();
    for (let i = 0; i < NORMAL; i++) clients.push(new LeanClient(tb.wsUrl, samples));
    await until(() => clients.every((c) => c.welcomed), 20_000, 'welcome');
    clients.forEach((c, i) => {
      const mine = Array.from({ length: CODES_EACH }, (_, k) => codes[(i * CODES_EACH + k) % codes.length]!);
      c.ws.send(JSON.stringify({ op: 'subscribe', id: 1, channel: 'quote', market: 'kospi', codes: mine }));
    });
    await until(() => clients.every((c) => c.rows.size === CODES_EACH), 20_000, 'snapshots');
  }, 60_000);

  afterAll(async () => {
    load?.stop();
    for (const c of clients) c.ws.close();
    await tb?.bridge.stop();
    watch?.dispose();
  });

  it('conflates and closes each with 4008; memory stays bounded; the others keep their latency', async () => {
    const m = tb.bridge.metrics;
    const closes = () => metric(m, 'krx_server_closes_total', { code: '4008' });
    const rss = { without: [] as number[], with: [] as number[] };
    let phase: keyof typeof rss = 'without';
    const sampler = setInterval(() => rss[phase].push(process.memoryUsage().rss), 100);
    const p99 = { without: [] as number[], with: [] as number[] };
    const attachedAt: number[] = [];
    let leastOwed = Infinity;

    /** Attaches a client that never reads to the whole market; resolves once the server closed it with 4008. */
    const slowClient = async (): Promise<RawClient> => {
      const before = await closes();
      const slow = await rawClient(tb.wsUrl);
      const from = load.bytes;
      attachedAt.push(from);
      slow.send({ op: 'subscribe', id: 1, channel: 'quote', market: 'kospi', codes: ['*'] });
      await until(async () => (await closes()) !== before, 15_000, 'the slow client closed', 50);
      expect(await closes()).toBe(before + 1);
      leastOwed = Math.min(leastOwed, load.bytes - from);
      return slow;
    };

    load.start();
    try {
      // A warm-up, not a wait: the first second of the load is not measured.
      await sleep(1000);
      // Rounds of the same load without and with a slow client, interleaved so that outside noise hits both alike.
      for (let round = 0; round < ROUNDS; round++) {
        phase = 'without';
        const a0 = Date.now();
        // Measuring windows, not waits.
        await sleep(PHASE_MS);
        p99.without.push(...samples.windowP99s(a0, Date.now()));
        phase = 'with';
        const b0 = Date.now();
        const slow = await slowClient();
        await sleep(Math.max(0, b0 + PHASE_MS - Date.now()));
        p99.with.push(...samples.windowP99s(b0, Date.now()));
        // ws cuts a socket that cannot take the close frame after closeTimeout; the test need not wait for it.
        slow.socket.destroy();
        await until(() => tb.bridge.gateway.clientCount === NORMAL, 5000, 'slow session gone');
      }
      // What the server holds for a slow client at its worst (as it is closed): live memory, load paused, with and without it.
      phase = 'without';
      const gc = exposeGc();
      const slow = await slowClient();
      load.stop();
      // The last tick delivered to the normal clients: what the server still holds is the slow client's.
      const caughtUp = () =>
        clients.every((c) => [...c.seqs].every(([topic, seq]) => tb.bridge.store.entry('quote', 'kospi', topic.split('.')[2]!)?.seq === seq));
      await until(caughtUp, 5000, 'the normal clients caught up');
      const held = await settledLiveBytes(gc);
      slow.socket.destroy();
      await until(() => tb.bridge.gateway.clientCount === NORMAL, 5000, 'slow session gone');
      const retained = held - (await settledLiveBytes(gc));
      const owedIfKept = attachedAt.reduce((a, from) => a + (load.bytes - from), 0);

      const figures = {
        slowClients: ROUNDS + 1,
        owedIfKeptMB: mb(owedIfKept),
        leastOwedAtCloseMB: mb(leastOwed),
        retainedAtCloseMB: mb(retained),
        rssMaxWithoutMB: mb(Math.max(...rss.without)),
        rssMaxWithMB: mb(Math.max(...rss.with)),
        p99WithoutMs: median(p99.without),
        p99WithMs: median(p99.with),
        windows: p99,
        patchesReceived: samples.n,
      };
      console.log('slow consumer figures', JSON.stringify(figures));

      expect(await metric(m, 'krx_slow_consumer_total', { step: 'conflate' })).toBeGreaterThanOrEqual(ROUNDS + 1);
      expect(await metric(m, 'krx_slow_consumer_total', { step: 'close' })).toBe(ROUNDS + 1);
      expect(await closes()).toBe(ROUNDS + 1);
      // Kept, the slow clients would have been owed far more than the server ever held for one.
      expect(leastOwed).toBeGreaterThan(SLOW.SLOW_CLOSE_BYTES);
      expect(owedIfKept).toBeGreaterThan(40 * 2 ** 20);
      expect(retained).toBeLessThan(SLOW.SLOW_CLOSE_BYTES + 16 * 2 ** 20);
      expect(Math.max(...rss.with) - Math.max(...rss.without)).toBeLessThan(100 * 2 ** 20);
      expect(p99.without.length).toBeGreaterThanOrEqual(ROUNDS * 3);
      expect(p99.with.length).toBeGreaterThanOrEqual(ROUNDS * 3);
      expect(figures.p99WithMs).toBeLessThanOrEqual(2 * Math.max(figures.p99WithoutMs, 10));
      for (const c of clients) {
        expect(c.problems).toEqual([]);
        expect(c.closed).toBeUndefined();
      }
      expect(watch.events).toEqual([]);
    } finally {
      clearInterval(sampler);
      load.stop();
    }
  }, 60_000);

  it('a client that never reads the answers to its own requests holds at most SLOW_REPLY_BYTES of them', async () => {
    const m = tb.bridge.metrics;
    const refusals = () => metric(m, 'krx_errors_out_total', { code: 'rate_limited' });
    const before = await refusals();
    const listBytes = (await (await fetch(`${tb.url}/api/v2/market/stocks/kospi/lists`)).text()).length;
    // No subscription at all: only replies (each a whole symbol list) pile up, within the message and get limits.
    const slow = await rawClient(tb.wsUrl);
    const requests = Math.ceil((3 * SLOW.SLOW_CLOSE_BYTES) / listBytes);
    expect(requests).toBeLessThan(90);
    for (let i = 0; i < requests; i++) slow.send({ op: 'get', id: i, resource: 'lists', market: 'kospi' });
    // Replies are written until the socket holds SLOW_REPLY_BYTES (here the close threshold); the rest are refused.
    await until(async () => (await refusals()) !== before, 5000, 'a refusal', 50);
    expect(await refusals()).toBeGreaterThan(before);
    const sessions = (tb.bridge.gateway as unknown as { sessions: Set<{ ws: WebSocket }> }).sessions;
    for (const sess of sessions) expect(sess.ws.bufferedAmount).toBeLessThanOrEqual(SLOW.SLOW_CLOSE_BYTES + listBytes);
    slow.socket.destroy();
    await until(() => tb.bridge.gateway.clientCount === NORMAL, 5000, 'slow session gone');
    for (const c of clients) expect(c.closed).toBeUndefined();
  }, 20_000);
});
