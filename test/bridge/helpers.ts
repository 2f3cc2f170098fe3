import WebSocket from 'ws';
import { request } from 'undici';
import { createBridge, type Bridge, type BridgeOptions } from '../../src/bridge/bridge.js';
import { defaultConfig, type Config } from '../../src/config/config.js';
import { silentLogger } from '../../src/log.js';
import { applyOps } from '../../src/protocol/patch.js';
import { rowChecksum } from '../../src/protocol/crc32.js';
import type { PatchOp, ServerMsg } from '../../src/protocol/messages.js';
import { endpoint } from '../../src/upstream/catalogue.js';
import { normaliseBody, type Row } from '../../src/upstream/normalise.js';
import { renderPath } from '../../src/upstream/paths.js';

/** The built-in simulator's key in these tests (a secret: it must never reach a client). */
export const SIM_KEY = 'test-upstream-key-9f1c2e7a';

/** A started bridge with its built-in simulator. */
export interface TestBridge {
  readonly bridge: Bridge;
  readonly url: string;
  readonly wsUrl: string;
}

/** Starts a bridge on port 0 with the built-in simulator (clock open). */
export async function startBridge(over: Partial<Config> = {}, opts: BridgeOptions = {}): Promise<TestBridge> {
  const config = defaultConfig({
    PORT: 0,
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    IDLE_GRACE_MS: 1000,
    STATE: 'off',
    RECORD: 'off',
    NAMES_PER_DAY: 0,
    ...over,
  });
  const bridge = await createBridge(config, { logger: silentLogger(), ...opts, simulator: { apiKey: SIM_KEY, ...opts.simulator } });
  const addr = bridge.address;
  return { bridge, url: addr.url, wsUrl: addr.wsUrl };
}

/** One poll cycle as the upstream saw it: when its first call arrived and how many calls it made. */
export interface PollCycle {
  readonly at: number;
  readonly calls: number;
}

/**
 * A poller starts its cycles at least one interval (1 s) apart at its end; at
 * the upstream's end two cycles can arrive closer by the delivery jitter of
 * a loaded machine, never by this much.
 */
export const MIN_CYCLE_GAP_MS = 700;
/** A gap between cycles longer than this means a cycle was missed. */
export const MAX_CYCLE_GAP_MS = 1500;

/**
 * Groups an endpoint's call arrival times (epoch ms, oldest first) into poll
 * cycles: the calls of one cycle go out together, so calls less than
 * `joinMs` apart belong to one. Returns the cycles that began in `[from, to)`.
 */
export function pollCycles(times: readonly number[], from: number, to: number, joinMs = 250): PollCycle[] {
  const all: { at: number; calls: number; last: number }[] = [];
  for (const t of times) {
    const c = all.at(-1);
    if (c && t - c.last < joinMs) {
      c.calls++;
      c.last = t;
    } else all.push({ at: t, calls: 1, last: t });
  }
  return all.filter((c) => c.at >= from && c.at < to).map(({ at, calls }) => ({ at, calls }));
}

/** The gaps between consecutive cycles, ms. */
export function cycleGaps(cycles: readonly PollCycle[]): number[] {
  return cycles.slice(1).map((c, i) => c.at - cycles[i]!.at);
}

/** Resolves after `ms`. */
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until `pred` (sync or async) is true, asking every `everyMs` (default 20), or fails after `timeoutMs`. */
export async function until(pred: () => boolean | Promise<boolean>, timeoutMs = 10_000, what = 'condition', everyMs = 20): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await pred())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

/**
 * A protocol v1 test client on `ws`: keeps every message, the local row and
 * seq of each topic (snapshots replace, patches apply), and records any seq
 * gap, duplicate or checksum mismatch as a problem.
 */
export class TestClient {
  readonly ws: WebSocket;
  readonly messages: ServerMsg[] = [];
  readonly frames: string[] = [];
  readonly rows = new Map<string, Row>();
  readonly seqs = new Map<string, number>();
  readonly problems: string[] = [];
  closed: { code: number; reason: string } | undefined;
  private nextId = 1000;

  /** A client of `url`; `localAddress` picks the loopback source address (127.0.0.2 is another client to the server). */
  constructor(url: string, headers: Record<string, string> = {}, localAddress?: string) {
    this.ws = new WebSocket(url, { headers, perMessageDeflate: false, ...(localAddress ? { localAddress } : {}) });
    this.ws.on('message', (data) => this.onFrame(data.toString()));
    this.ws.on('close', (code, reason) => (this.closed = { code, reason: reason.toString() }));
    this.ws.on('error', () => undefined);
  }

  /** Resolves when the socket is open and `welcome` arrived. */
  async ready(): Promise<this> {
    await until(() => this.messages.some((m) => m.type === 'welcome') || this.closed !== undefined, 10_000, 'welcome');
    return this;
  }

  /** The epoch of `welcome`. */
  get epoch(): string {
    const w = this.messages.find((m) => m.type === 'welcome');
    return w && w.type === 'welcome' ? w.epoch : '';
  }

  /** Sends a message object. */
  send(msg: Record<string, unknown>): void {
    this.ws.send(JSON.stringify(msg));
  }

  /** Sends a message with a fresh `id` and resolves with the reply that echoes it. */
  async request(msg: Record<string, unknown>, timeoutMs = 10_000): Promise<ServerMsg> {
    const id = this.nextId++;
    this.send({ ...msg, id });
    let reply: ServerMsg | undefined;
    await until(() => (reply = this.messages.find((m) => 'id' in m && m.id === id)) !== undefined, timeoutMs, `reply to ${JSON.stringify(msg)}`);
    return reply!;
  }

  /** Messages of one type. */
  ofType<T extends ServerMsg['type']>(type: T): Extract<ServerMsg, { type: T }>[] {
    return this.messages.filter((m) => m.type === type) as Extract<ServerMsg, { type: T }>[];
  }

  /** Closes the socket. */
  close(): void {
    this.ws.close();
  }

  private onFrame(text: string): void {
    this.frames.push(text);
    const parsed = JSON.parse(text) as ServerMsg | ServerMsg[];
    for (const m of Array.isArray(parsed) ? parsed : [parsed]) {
      this.messages.push(m);
      if (m.type === 'snapshot') this.apply(m.topic, m.seq, m.crc, () => ({ ...(m.data as Row) }), true);
      else if (m.type === 'patch') this.apply(m.topic, m.seq, m.crc, (prev) => (prev ? applyOps(prev, m.ops as PatchOp[]) : undefined), false);
    }
  }

  private apply(topic: string, seq: number, crc: number, next: (prev: Row | undefined) => Row | undefined, snapshot: boolean): void {
    const have = this.seqs.get(topic);
    if (!snapshot) {
      if (have === undefined) return void this.problems.push(`${topic}: patch ${seq} before any snapshot`);
      if (seq !== have + 1) return void this.problems.push(`${topic}: patch ${seq} after ${have}`);
    }
    const row = next(this.rows.get(topic));
    if (!row) return void this.problems.push(`${topic}: patch ${seq} does not apply`);
    if (rowChecksum(row) !== crc) this.problems.push(`${topic}: crc mismatch at ${seq}`);
    this.rows.set(topic, row);
    this.seqs.set(topic, seq);
  }
}

/** Opens a client and waits for `welcome`. */
export async function connect(tb: TestBridge, headers: Record<string, string> = {}): Promise<TestClient> {
  return new TestClient(tb.wsUrl, headers).ready();
}

/** The simulator's current answer for an endpoint, normalised like the bridge does: rows by code. */
export async function truth(tb: TestBridge, endpointId: string, params: Record<string, unknown>): Promise<Map<string, Row>> {
  const e = endpoint(endpointId);
  const res = await request(`${tb.bridge.upstreamOrigin}${renderPath(e, e.params.parse(params))}`, { headers: { apikey: SIM_KEY } });
  const body = await res.body.json();
  const n = normaliseBody(e.response, body);
  if (!n.ok) throw new Error(n.reason);
  const rows = e.response.list ? n.value.rows : [n.value.data as Row];
  return new Map(rows.map((r) => [String(r.isuSrtCd ?? params.issuecode), r]));
}

/**
 * Freezes the simulator's market and waits until the bridge has polled the
 * frozen state: every live feed has had two answers since (the second was
 * asked for after the first arrived, so after the pause) and published them.
 */
export async function freeze(tb: TestBridge): Promise<void> {
  tb.bridge.sim!.pause();
  const poller = tb.bridge.poller;
  const feeds = poller
    .statuses()
    .filter((s) => s.state === 'live' && tb.bridge.demand.active(s.channel, s.market))
    .map((s) => poller.feed(s.channel, s.market)!);
  const answers = feeds.map((f) => [f.lastOkTs]);
  const polledTwice = () =>
    feeds.every((f, i) => {
      const seen = answers[i]!;
      if (seen.at(-1) !== f.lastOkTs) seen.push(f.lastOkTs);
      return seen.length >= 3;
    });
  await until(polledTwice, 15_000, 'two polls of the frozen market');
}
