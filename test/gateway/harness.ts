import { createServer, type Server, type ServerOptions } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Socket } from 'node:net';
import fastJsonPatch from 'fast-json-patch';
import { WebSocket, type ClientOptions } from 'ws';
import { LocalBus, type FeedStatus } from '../../src/bus/bus.js';
import { Gateway } from '../../src/gateway/gateway.js';
import type { GatewayOptions } from '../../src/gateway/options.js';
import { createHttpHandler, type HttpDeps } from '../../src/http/handler.js';
import { Metrics } from '../../src/metrics/metrics.js';
import { Demand } from '../../src/poller/demand.js';
import type { Channel, Market } from '../../src/protocol/constants.js';
import { StateStore } from '../../src/state/store.js';
import { SymbolDirectory } from '../../src/state/symbols.js';
import type { OnDemandResult } from '../../src/upstream/cache.js';
import type { Row } from '../../src/upstream/normalise.js';

/** A recorded on-demand call. */
export interface Call {
  readonly id: string;
  readonly params: Record<string, unknown>;
}

/** A fake on-demand cache: records calls, answers with `respond` (default: echo). */
export class FakeOnDemand {
  readonly calls: Call[] = [];
  respond: (id: string, params: Record<string, unknown>) => Promise<OnDemandResult> = async (id, params) => ({
    data: { endpoint: id, params },
    receivedAt: 1_700_000_000_000,
    cached: false,
  });

  get(id: string, params: Record<string, unknown>): Promise<OnDemandResult> {
    this.calls.push({ id, params });
    return this.respond(id, params);
  }
}

/** Codes `000001`… for `n` symbols. */
export function codes(n: number, offset = 0): string[] {
  return Array.from({ length: n }, (_, i) => String(i + 1 + offset).padStart(6, '0'));
}

/** A row of a quote-like feed for `code` at price `p`. */
export function row(code: string, p: number, extra: Record<string, unknown> = {}): Row {
  return { isuSrtCd: code, isuKorAbbrv: `종목${code}`, trdPrc: p, accTrdvol: p * 10, cmpprevddPrc: p % 7, ...extra } as Row;
}

/** Everything a gateway test needs, on a real HTTP server at port 0. */
export interface Harness {
  readonly server: Server;
  readonly url: string;
  readonly httpUrl: string;
  readonly gateway: Gateway;
  readonly store: StateStore;
  readonly bus: LocalBus;
  readonly demand: Demand;
  readonly symbols: SymbolDirectory;
  readonly metrics: Metrics;
  readonly onDemand: FakeOnDemand;
  readonly statuses: FeedStatus[];
  /** Applies rows to a feed and publishes the batch; returns it. */
  tick(channel: Channel, market: Market, rows: readonly Row[], ts?: number): ReturnType<StateStore['apply']>;
  close(): Promise<void>;
}

/**
 * Starts a gateway (and the HTTP handler) with `symbolCount` symbols listed on KOSPI and KOSDAQ, on an HTTP
 * server made with `serverOptions` (the bridge's own passes `requireHostHeader: false`, src/bridge/bridge.ts).
 */
export async function startHarness(
  opts: Partial<GatewayOptions> = {},
  http: Partial<HttpDeps> = {},
  symbolCount = 50,
  serverOptions: ServerOptions = {},
): Promise<Harness> {
  const store = new StateStore({ ringSize: 8 });
  const bus = new LocalBus();
  const demand = new Demand();
  const symbols = new SymbolDirectory();
  // Numbered codes, plus the large caps the REST passthrough tests ask for.
  symbols.load(
    'kospi',
    [...codes(symbolCount), '005930', '000660'].map((c) => ({ isuSrtCd: c, isuCd: `KR7${c}003`, isuKorNm: `코스피${c}` })),
  );
  symbols.load(
    'kosdaq',
    [...codes(symbolCount, 500000), '247540'].map((c) => ({ isuSrtCd: c, isuCd: `KR7${c}008`, isuKorNm: `코스닥${c}` })),
  );
  const metrics = new Metrics({ defaults: false });
  const onDemand = new FakeOnDemand();
  const statuses: FeedStatus[] = [];
  const server = createServer(serverOptions);
  const gateway = new Gateway({
    server,
    store,
    bus,
    demand,
    symbols,
    onDemand,
    metrics,
    statuses: () => statuses,
    version: 'test',
    ...opts,
  });
  server.on('request', createHttpHandler({ metrics, symbols, onDemand, gateway, ...http }));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    server,
    url: `ws://127.0.0.1:${port}/ws`,
    httpUrl: `http://127.0.0.1:${port}`,
    gateway,
    store,
    bus,
    demand,
    symbols,
    metrics,
    onDemand,
    statuses,
    tick(channel, market, rows, ts = Date.now()) {
      const b = store.apply(channel, market, rows, ts);
      bus.publish(b);
      return b;
    },
    async close() {
      await gateway.close(1000);
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/**
 * The HTTP answer to an upgrade of `url` with `headers` (and `opts`, such
 * as the `localAddress` to come from), read by the `ws` package (which sees
 * what a browser's WebSocket hides): 101 and no body when it opened, else
 * the refusal's status and body.
 */
export function upgrade(url: string, headers: Record<string, string> = {}, opts: ClientOptions = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { ...opts, headers });
    ws.on('open', () => {
      ws.close();
      resolve({ status: 101, body: '' });
    });
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += String(d)));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    ws.on('error', reject);
  });
}

/** A server message as a plain object. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the tests read each message by the shape its type implies.
export type Msg = Record<string, any>;

/** A test client: records every message (batches flattened) and frame. */
export class Client {
  readonly msgs: Msg[] = [];
  frames = 0;
  closed: { code: number; reason: string } | undefined;
  private waiters: (() => void)[] = [];

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      this.frames++;
      const parsed = JSON.parse(String(data)) as Msg | Msg[];
      for (const m of Array.isArray(parsed) ? parsed : [parsed]) this.msgs.push(m);
      this.wake();
    });
    ws.on('close', (code, reason) => {
      this.closed = { code, reason: String(reason) };
      this.wake();
    });
    ws.on('error', () => undefined);
  }

  /** Connects and waits for `welcome`. */
  static async connect(url: string, opts: ClientOptions = {}): Promise<Client> {
    const c = new Client(new WebSocket(url, opts));
    await c.until((m) => m.type === 'welcome');
    return c;
  }

  /** Sends a message (an object is JSON-encoded). */
  send(m: unknown): void {
    this.ws.send(typeof m === 'string' ? m : JSON.stringify(m));
  }

  /** Messages of a type. */
  of(type: string): Msg[] {
    return this.msgs.filter((m) => m.type === type);
  }

  /** Waits until a message matching `pred` arrived (searching from `from`); returns it. */
  async until(pred: (m: Msg) => boolean, timeoutMs = 3000, from = 0): Promise<Msg> {
    const found = (): Msg | undefined => this.msgs.slice(from).find(pred);
    return this.wait(found, timeoutMs, 'message');
  }

  /** Sends a request with an id and waits for the reply carrying that id. */
  async request(m: Record<string, unknown>, timeoutMs = 3000): Promise<Msg> {
    const from = this.msgs.length;
    this.send(m);
    return this.until((x) => x.id === m.id, timeoutMs, from);
  }

  /** Waits for the connection to close; returns code and reason. */
  async closedWith(timeoutMs = 3000): Promise<{ code: number; reason: string }> {
    return this.wait(() => this.closed, timeoutMs, 'close');
  }

  /** Waits until `cond` holds. */
  async wait<T>(cond: () => T | undefined | false, timeoutMs = 3000, what = 'condition'): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const v = cond();
      if (v instanceof Promise) throw new Error('wait() takes a synchronous condition; use eventually()');
      if (v) return v;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}; last messages: ${JSON.stringify(this.msgs.slice(-3)).slice(0, 500)}`);
      await new Promise<void>((r) => {
        const t = setTimeout(r, Math.min(left, 50));
        this.waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
  }

  close(): void {
    this.ws.close();
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }
}

/** Resolves after `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Value of a counter (with labels) in a Metrics registry. */
export async function counter(metrics: Metrics, name: string, labels: Record<string, string> = {}): Promise<number> {
  const m = metrics.registry.getSingleMetric(name);
  if (!m) throw new Error(`no metric ${name}`);
  const v = await m.get();
  return v.values
    .filter((x) => Object.entries(labels).every(([k, val]) => String((x.labels as Record<string, unknown>)[k]) === val))
    .reduce((a, x) => a + x.value, 0);
}

/** Polls `pred` (sync or async) until it holds; throws after `timeoutMs`. */
export async function eventually(pred: () => boolean | Promise<boolean>, timeoutMs = 3000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await pred())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** The TCP socket under a test client (to pause its reading). */
export function socketOf(c: Client): Socket {
  return (c.ws as unknown as { _socket: Socket })._socket;
}

/**
 * Replays a client's messages: snapshots replace, patches apply in seq order.
 * Throws on a patch before its topic's snapshot or after a gap, and when a
 * row's checksum is not the message's.
 */
export function rebuild(msgs: readonly Msg[]): Map<string, { seq: number; data: Record<string, unknown> }> {
  const local = new Map<string, { seq: number; data: Record<string, unknown> }>();
  for (const m of msgs) {
    if (m.type === 'snapshot') local.set(m.topic, { seq: m.seq, data: fastJsonPatch.deepClone(m.data) });
    else if (m.type === 'patch') {
      const cur = local.get(m.topic);
      if (cur === undefined) throw new Error(`patch before snapshot for ${m.topic}`);
      if (m.seq <= cur.seq) continue;
      if (m.seq !== cur.seq + 1) throw new Error(`gap on ${m.topic}: ${cur.seq} -> ${m.seq}`);
      cur.data = fastJsonPatch.applyPatch(cur.data, m.ops, true, false).newDocument;
      cur.seq = m.seq;
    }
  }
  return local;
}
