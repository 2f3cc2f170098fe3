import { randomBytes } from 'node:crypto';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import { connect as connectTcp, type AddressInfo, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import type { Metrics } from '../../src/metrics/metrics.js';
import type { ServerMsg, StatusMsg } from '../../src/protocol/messages.js';
import type { TestClient } from '../bridge/helpers.js';

/**
 * Shared pieces of the reliability suite: an in-memory log sink, a watch on
 * the process (it must never exit or throw), metric reads, feed-state
 * views of a TestClient, percentiles, and a mangling proxy in front of an
 * upstream.
 */

/** A writable stream that keeps every line written to it (a pino destination). */
export class MemoryLog extends Writable {
  readonly lines: string[] = [];

  constructor() {
    super({
      write: (chunk: Buffer | string, _enc, cb) => {
        for (const l of String(chunk).split('\n')) if (l) this.lines.push(l);
        cb();
      },
    });
  }

  /** Every line joined, for substring checks. */
  get text(): string {
    return this.lines.join('\n');
  }

  /** Parsed lines whose `msg` matches. */
  matching(msg: RegExp): Record<string, unknown>[] {
    return this.lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((o) => msg.test(String(o.msg)));
  }
}

/** Records `exit`, `uncaughtException` and `unhandledRejection` of this process until disposed. */
export class ProcessWatch {
  readonly events: string[] = [];
  private readonly onExit = (code: number) => void this.events.push(`exit ${code}`);
  private readonly onException = (err: Error) => void this.events.push(`uncaughtException ${err?.message}`);
  private readonly onRejection = (err: unknown) => void this.events.push(`unhandledRejection ${String(err)}`);

  constructor() {
    process.on('exit', this.onExit);
    process.on('uncaughtException', this.onException);
    process.on('unhandledRejection', this.onRejection);
  }

  /** Stops watching. */
  dispose(): void {
    process.off('exit', this.onExit);
    process.off('uncaughtException', this.onException);
    process.off('unhandledRejection', this.onRejection);
  }
}

/** Sum of a metric's values whose labels include `labels`. */
export async function metric(metrics: Metrics, name: string, labels: Record<string, string> = {}): Promise<number> {
  const m = metrics.registry.getSingleMetric(name);
  if (!m) throw new Error(`no metric ${name}`);
  const v = await m.get();
  return v.values
    .filter((x) => Object.entries(labels).every(([k, val]) => String((x.labels as Record<string, unknown>)[k]) === val))
    .reduce((a, x) => a + x.value, 0);
}

/** The `status` messages of one feed a client received, in order. */
export function statusesOf(c: TestClient, channel: string, market: string): StatusMsg[] {
  return c.ofType('status').filter((s) => s.channel === channel && s.market === market);
}

/** Index in `c.messages` of the first message at or after `from` matching `pred`, or -1. */
export function indexFrom(c: TestClient, from: number, pred: (m: ServerMsg) => boolean): number {
  for (let i = from; i < c.messages.length; i++) if (pred(c.messages[i]!)) return i;
  return -1;
}

/** The p-th percentile (0..100) of `values` (nearest rank); NaN when empty. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

/** The median of `values`. */
export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/** A body rewrite of the mangling proxy: gets the request path and the parsed JSON body, returns the body to send. */
export type Mangle = (path: string, body: unknown) => unknown;

/** A started proxy. */
export interface Proxy {
  readonly url: string;
  /** The rewrite in effect (undefined: pass through). */
  mangle: Mangle | undefined;
  close(): Promise<void>;
}

/**
 * An HTTP proxy in front of `target` that forwards every GET (headers
 * included) and passes 200 JSON bodies through `mangle` when one is set:
 * lets a test corrupt single rows of a real upstream answer.
 */
export async function startProxy(target: string): Promise<Proxy> {
  const t = new URL(target);
  const proxy: Proxy = { url: '', mangle: undefined, close: async () => undefined };
  const server: Server = createServer((req, res) => {
    const up = httpRequest({ host: t.hostname, port: t.port, path: req.url, method: 'GET', headers: { ...req.headers, host: t.host } }, (r) => {
      const chunks: Buffer[] = [];
      r.on('data', (d: Buffer) => chunks.push(d));
      r.on('end', () => {
        let body = Buffer.concat(chunks).toString('utf8');
        const m = proxy.mangle;
        if (m && r.statusCode === 200) body = JSON.stringify(m(req.url ?? '/', JSON.parse(body) as unknown));
        const headers: IncomingHttpHeaders = { ...r.headers, 'content-length': String(Buffer.byteLength(body)) };
        res.writeHead(r.statusCode ?? 502, headers);
        res.end(body);
      });
    });
    up.on('error', () => res.destroy());
    up.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  return Object.assign(proxy, {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  });
}

/** A masked client text frame (RFC 6455 §5.2) carrying `text`. */
export function clientFrame(text: string, opcode = 0x1): Buffer {
  const payload = Buffer.from(text);
  const n = payload.length;
  const head = n < 126 ? Buffer.alloc(2) : n < 65_536 ? Buffer.alloc(4) : Buffer.alloc(10);
  head[0] = 0x80 | opcode;
  if (n < 126) head[1] = 0x80 | n;
  else if (n < 65_536) {
    head[1] = 0x80 | 126;
    head.writeUInt16BE(n, 2);
  } else {
    head[1] = 0x80 | 127;
    head.writeBigUInt64BE(BigInt(n), 2);
  }
  const mask = randomBytes(4);
  const body = Buffer.allocUnsafe(n);
  for (let i = 0; i < n; i++) body[i] = payload[i]! ^ mask[i & 3]!;
  return Buffer.concat([head, mask, body]);
}

/** A WebSocket client on a bare TCP socket: it completes the handshake and then reads only when told to. */
export interface RawClient {
  readonly socket: Socket;
  /** Sends one message object as a masked text frame. */
  send(msg: unknown): void;
  /** Whether the socket has closed (from either side). */
  readonly closed: boolean;
}

/**
 * Opens a WebSocket on a bare TCP socket, completes the handshake and stops
 * reading at once (`pause`): a peer that never reads and never answers a
 * ping, whose kernel buffers stay small because nothing was ever read.
 */
export function rawClient(wsUrl: string, headers: Record<string, string> = {}): Promise<RawClient> {
  const u = new URL(wsUrl);
  return new Promise((resolve, reject) => {
    const socket = connectTcp({ host: u.hostname, port: Number(u.port) });
    let head = '';
    let closed = false;
    socket.on('close', () => (closed = true));
    socket.on('error', () => undefined);
    const extra = Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    socket.once('connect', () => {
      socket.write(
        `GET ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n${extra}\r\n`,
      );
    });
    const onData = (d: Buffer) => {
      head += d.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      socket.off('data', onData);
      socket.pause();
      if (!head.startsWith('HTTP/1.1 101')) return reject(new Error(head.split('\r\n')[0]));
      resolve({
        socket,
        send: (msg) => void socket.write(clientFrame(typeof msg === 'string' ? msg : JSON.stringify(msg))),
        get closed() {
          return closed;
        },
      });
    };
    socket.on('data', onData);
    socket.once('error', reject);
  });
}
