import { mkdtempSync, readdirSync, readlinkSync, realpathSync, writeFileSync } from 'node:fs';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MAX_PIPELINED } from '../../src/http/pipelining.js';
import { eventually, sleep, startHarness, type Harness } from '../gateway/harness.js';

/**
 * Pipelined requests over raw TCP, as an attacker sends them: many requests
 * written back to back on one connection that reads nothing. Each must cost
 * the server a bounded amount of work, memory and open files.
 */

let h: Harness | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  vi.restoreAllMocks();
  await h?.close();
  h = undefined;
});

const portOf = (x: Harness): number => (x.server.address() as AddressInfo).port;

/** `n` GET requests of `path` written back to back (HTTP/1.1, kept alive). */
function pipelined(path: string, n: number): string {
  return `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`.repeat(n);
}

/** A raw connection to `port` that has written `bytes` and reads nothing yet. */
async function silent(port: number, bytes: string): Promise<Socket> {
  const s = connect({ port, host: '127.0.0.1' });
  sockets.push(s);
  s.pause();
  await new Promise<void>((resolve, reject) => s.once('connect', resolve).once('error', reject));
  s.write(bytes);
  return s;
}

/** One HTTP/1.1 response read off the wire. */
interface Response {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/**
 * Reads `s` until the server closes it (or `timeoutMs` passes): the
 * responses it sent, in order, and whether it closed the connection.
 */
function readAll(s: Socket, timeoutMs = 5000): Promise<{ responses: Response[]; closed: boolean }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const done = (closed: boolean): void => {
      clearTimeout(timer);
      s.removeAllListeners('data');
      resolve({ responses: parseResponses(Buffer.concat(chunks)), closed });
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    s.on('data', (d: Buffer) => chunks.push(d));
    s.once('close', () => done(true));
    s.resume();
  });
}

/** Reads `s` until `n` whole responses came (or `timeoutMs` passes), leaving it open. */
function readResponses(s: Socket, n: number, timeoutMs = 5000): Promise<Response[]> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => reject(new Error(`only ${parseResponses(Buffer.concat(chunks)).length} of ${n} responses came`)), timeoutMs);
    const onData = (d: Buffer): void => {
      chunks.push(d);
      const got = parseResponses(Buffer.concat(chunks));
      if (got.length < n) return;
      clearTimeout(timer);
      s.off('data', onData);
      s.pause();
      resolve(got);
    };
    s.on('data', onData);
    s.resume();
  });
}

/** The whole responses (each with a Content-Length) in `buf`, in order; a partial one at the end is left out. */
function parseResponses(buf: Buffer): Response[] {
  const out: Response[] = [];
  let at = 0;
  for (;;) {
    const end = buf.indexOf('\r\n\r\n', at);
    if (end < 0) return out;
    const [statusLine, ...lines] = buf.subarray(at, end).toString('latin1').split('\r\n');
    const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
    const length = Number(headers['content-length'] ?? 0);
    if (end + 4 + length > buf.length) return out;
    out.push({
      status: Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine ?? '')?.[1] ?? 0),
      headers,
      body: buf.subarray(end + 4, end + 4 + length).toString('utf8'),
    });
    at = end + 4 + length;
  }
}

/** File descriptors of this process open on `file`. */
function openOn(file: string): number {
  const target = realpathSync(file);
  let n = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`) === target) n++;
    } catch {
      // closed meanwhile (the directory's own descriptor, among others)
    }
  }
  return n;
}

describe('pipelined static files', () => {
  it('closes the file of every response, the queued ones too, when the connection goes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'krx-pipe-'));
    const file = join(dir, 'app.js');
    // Larger than the socket buffers take: the first response is still being written when the client goes.
    writeFileSync(file, Buffer.alloc(1 << 20, 'x'));
    h = await startHarness({}, { staticDir: dir });
    const s = await silent(portOf(h), pipelined('/app.js', 20));
    // The server opened the file for the response being written and for those queued behind it.
    await eventually(() => openOn(file) >= 5, 3000, 'files opened for the pipelined requests');
    await sleep(200);
    s.destroy();
    await eventually(() => openOn(file) === 0, 5000, 'every file closed');
    // And the server still serves the file whole.
    const r = await fetch(`${h.httpUrl}/app.js`);
    expect((await r.arrayBuffer()).byteLength).toBe(1 << 20);
    await eventually(() => openOn(file) === 0, 3000, 'the file closed after a whole answer');
  });
});

describe('pipelining depth', () => {
  it(`answers ${MAX_PIPELINED} requests outstanding on one connection, refuses the next with 429 rate_limited and closes it`, async () => {
    h = await startHarness();
    const s = await silent(portOf(h), pipelined('/healthz', MAX_PIPELINED + 8));
    const { responses, closed } = await readAll(s);
    expect(responses.map((r) => r.status)).toEqual([...Array<number>(MAX_PIPELINED).fill(200), 429]);
    const refusal = responses.at(-1)!;
    expect(JSON.parse(refusal.body)).toEqual({ error: { code: 'rate_limited', message: `at most ${MAX_PIPELINED} requests unanswered per connection` } });
    expect(refusal.headers.connection).toBe('close');
    expect(closed).toBe(true);
    expect((await fetch(`${h.httpUrl}/healthz`)).status).toBe(200);
  });

  it(`serves ${MAX_PIPELINED} pipelined requests, and as many again once they are answered, on the same connection`, async () => {
    h = await startHarness();
    const s = await silent(portOf(h), pipelined('/healthz', MAX_PIPELINED));
    expect((await readResponses(s, MAX_PIPELINED)).map((r) => r.status)).toEqual(Array<number>(MAX_PIPELINED).fill(200));
    await sleep(50);
    s.write(pipelined('/healthz', MAX_PIPELINED));
    expect((await readResponses(s, MAX_PIPELINED)).map((r) => r.status)).toEqual(Array<number>(MAX_PIPELINED).fill(200));
    expect(s.destroyed).toBe(false);
  });

  it('renders /metrics once for 2000 pipelined on a connection that reads nothing, and answers a health check meanwhile', async () => {
    h = await startHarness();
    const render = vi.spyOn(h.metrics.registry, 'metrics');
    const attackers = await Promise.all([0, 1, 2, 3, 4].map(() => silent(portOf(h!), pipelined('/metrics', 2000))));
    await sleep(300);
    const health = await fetch(`${h.httpUrl}/healthz`);
    expect(health.status).toBe(200);
    // A render per read of a connection's burst (one or two reads each), not one per request.
    expect(render.mock.calls.length).toBeLessThanOrEqual(2 * attackers.length);
    // What one of them gets when it reads at last: the requests up to the depth, then the refusal and the end of the connection.
    const { responses, closed } = await readAll(attackers[0]!);
    expect(responses.map((r) => r.status)).toEqual([...Array<number>(MAX_PIPELINED).fill(200), 429]);
    expect(closed).toBe(true);
  });
});

describe('/metrics', () => {
  it('renders once for the requests that come together, and afresh for the next', async () => {
    h = await startHarness();
    const render = vi.spyOn(h.metrics.registry, 'metrics');
    const s = await silent(portOf(h), pipelined('/metrics', 20));
    const batch = await readResponses(s, 20);
    expect(batch.map((r) => r.status)).toEqual(Array<number>(20).fill(200));
    expect(new Set(batch.map((r) => r.body)).size).toBe(1);
    expect(render).toHaveBeenCalledTimes(1);
    // A scraper's next request is rendered anew: it sees what changed since (here, the 20 answers counted).
    const next = await (await fetch(`${h.httpUrl}/metrics`)).text();
    expect(render).toHaveBeenCalledTimes(2);
    expect(next).toMatch(/^krx_http_requests_total\{route="metrics",status="200"\} 20$/m);
  });
});
