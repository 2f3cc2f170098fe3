import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { ERROR_CODES } from '../../src/protocol/errors.js';
import { RequestId, ServerFrame } from '../../src/protocol/messages.js';
import { startBridge, until, type TestBridge } from '../bridge/helpers.js';
import { fuzzFrames, type FuzzFrame } from './fuzz-frames.js';
import { ProcessWatch, metric, rawClient } from './helpers.js';

/**
 * Protocol fuzz: over ten thousand generated malformed and adversarial
 * client frames against a live bridge, over several connections. Every
 * frame must get a coded error or a valid answer (every server frame
 * validates against the protocol schema, and an error echoes a readable
 * id), or a documented close after which the client reconnects. The
 * server stays up, nothing is polluted, and per-address caps and
 * heartbeats hold against many and half-open connections.
 */

const FRAMES = 10_000;
const CONNECTIONS = 4;
const MAX_PAYLOAD = 262_144;
const SEED = 20261120;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Msg = Record<string, any>;

/** A fuzzing connection: every message kept, every frame checked against the schema. */
class FuzzConn {
  readonly ws: WebSocket;
  readonly msgs: Msg[] = [];
  readonly invalid: string[] = [];
  closed: { code: number; reason: string } | undefined;
  welcomed = false;
  private waiters: (() => void)[] = [];

  constructor(url: string) {
    this.ws = new WebSocket(url, { perMessageDeflate: false, maxPayload: 64 << 20 });
    this.ws.on('message', (data, isBinary) => {
      const t = String(data);
      let parsed: unknown;
      try {
        parsed = JSON.parse(t);
      } catch {
        this.invalid.push(`not JSON (binary ${isBinary}): ${t.slice(0, 80)}`);
        return;
      }
      const r = ServerFrame.safeParse(parsed);
      if (!r.success || isBinary) this.invalid.push(`not a protocol frame: ${t.slice(0, 200)}`);
      for (const m of Array.isArray(parsed) ? parsed : [parsed]) {
        if ((m as Msg).type === 'welcome') this.welcomed = true;
        this.msgs.push(m as Msg);
      }
      this.wake();
    });
    this.ws.on('close', (code, reason) => {
      this.closed = { code, reason: String(reason) };
      this.wake();
    });
    this.ws.on('error', () => undefined);
  }

  /** Resolves once `cond` holds (checked on every message and on close); rejects after `timeoutMs`. */
  async wait(cond: () => boolean, timeoutMs: number, what: string): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!cond()) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }
}

/** The id a server can read from a frame (a JSON object's valid `id`), if any. */
function readableId(f: FuzzFrame): { has: boolean; id?: unknown } {
  if (f.binary) return { has: false };
  try {
    const v = JSON.parse(f.data as string) as unknown;
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return { has: false };
    const id = (v as { id?: unknown }).id;
    return RequestId.safeParse(id).success ? { has: true, id } : { has: false };
  } catch {
    return { has: false };
  }
}

/** Whether a frame parses as a JSON object whose op is `op`. */
function opOf(f: FuzzFrame): unknown {
  if (f.binary) return undefined;
  try {
    const v = JSON.parse(f.data as string) as Msg;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? v.op : undefined;
  } catch {
    return undefined;
  }
}

const ANSWERS = new Set(['error', 'subscribed', 'unsubscribed', 'result', 'pong', 'snapshot']);

describe('protocol fuzz against a live bridge', () => {
  let tb: TestBridge;
  let watch: ProcessWatch;
  const failures: string[] = [];
  const counts = new Map<string, number>();
  const closes = new Map<number, number>();

  beforeAll(async () => {
    watch = new ProcessWatch();
    tb = await startBridge({
      MAX_MESSAGES_PER_SECOND: 10_000,
      GETS_PER_MINUTE: 100_000,
      MAX_TOPICS: 200,
      MAX_WILDCARDS: 1,
      HEARTBEAT_MS: 1000,
      MAX_CONNECTIONS_PER_IP: 8,
    });
    await until(() => tb.bridge.symbols.loaded('kospi') && tb.bridge.symbols.loaded('kosdaq'), 10_000, 'symbols');
  });
  afterAll(async () => {
    await tb?.bridge.stop();
    watch?.dispose();
  });

  async function open(): Promise<FuzzConn> {
    const c = new FuzzConn(tb.wsUrl);
    await c.wait(() => c.welcomed || c.closed !== undefined, 5000, 'welcome');
    return c;
  }

  /** Sends one frame and a sentinel ping; returns the answers (or the close) the frame got. */
  async function exchange(c: FuzzConn, f: FuzzFrame, n: number): Promise<void> {
    const from = c.msgs.length;
    const sentinel = `sentinel:${n}`;
    c.ws.send(f.data, { binary: f.binary });
    c.ws.send(JSON.stringify({ op: 'ping', id: sentinel }));
    let pongAt = -1;
    const answered = () => {
      for (let i = Math.max(from, pongAt + 1); i < c.msgs.length; i++) if (c.msgs[i]!.type === 'pong' && c.msgs[i]!.id === sentinel) pongAt = i;
      return pongAt >= 0 || c.closed !== undefined;
    };
    await c.wait(answered, 10_000, `answer to ${f.kind}`);
    const size = f.binary ? (f.data as Uint8Array).length : Buffer.byteLength(f.data as string);
    if (c.closed !== undefined) {
      closes.set(c.closed.code, (closes.get(c.closed.code) ?? 0) + 1);
      const allowed = size > MAX_PAYLOAD ? [1009] : f.closes.filter((code) => code !== 1009);
      if (!allowed.includes(c.closed.code))
        failures.push(`${f.kind} (${size} bytes): closed ${c.closed.code} ${c.closed.reason}: ${String(f.data).slice(0, 120)}`);
      return;
    }
    if (size > MAX_PAYLOAD) failures.push(`${f.kind}: ${size} bytes over maxPayload and not closed`);
    let answers = c.msgs.slice(from, pongAt).filter((m) => ANSWERS.has(m.type) && !(m.type === 'snapshot' && opOf(f) !== 'subscribe' && opOf(f) !== 'resync'));
    if (answers.length === 0 && opOf(f) === 'get') {
      // A get that passed validation is answered asynchronously, before anything else is sent on this connection.
      await c.wait(() => c.closed !== undefined || c.msgs.slice(pongAt).some((m) => m.type === 'result' || m.type === 'error'), 10_000, 'get answer');
      answers = c.msgs.slice(pongAt).filter((m) => m.type === 'result' || m.type === 'error');
    }
    if (answers.length === 0 && opOf(f) === 'resync' && answerlessResync(f)) answers = [{ type: 'none' }];
    if (answers.length === 0) return void failures.push(`${f.kind}: no answer to ${String(f.data).slice(0, 160)}`);
    const id = readableId(f);
    for (const a of answers) {
      if (a.type === 'error' && !Object.hasOwn(ERROR_CODES, a.code)) failures.push(`${f.kind}: unknown error code ${a.code}`);
      if (a.type === 'error' && id.has && a.id !== id.id) failures.push(`${f.kind}: error without the id ${JSON.stringify(id.id)}: ${JSON.stringify(a)}`);
    }
    const key = `${f.kind}:${answers[0]!.type === 'error' ? answers[0]!.code : answers[0]!.type}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
    if (f.binary && answers[0]!.code !== 'bad_request') failures.push(`binary: ${JSON.stringify(answers[0])}`);
  }

  /** A valid resync of a subscribed topic with no state yet has nothing to send (its first snapshot follows from the feed). */
  function answerlessResync(f: FuzzFrame): boolean {
    const topic = (JSON.parse(f.data as string) as { topic: string }).topic;
    const [channel, market, code] = topic.split('.');
    return tb.bridge.store.entry(channel as 'quote', market as 'kospi', code ?? '') === undefined;
  }

  it(`answers ${FRAMES} generated frames with coded errors, valid replies or documented closes`, async () => {
    const codes = tb.bridge.symbols
      .list('kospi')
      .slice(0, 60)
      .map((s) => s.code);
    const frames = fc.sample(fuzzFrames(codes, MAX_PAYLOAD), { numRuns: FRAMES, seed: SEED });
    const t0 = Date.now();
    let reconnects = 0;
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async (_, k) => {
        let c = await open();
        for (let i = k; i < frames.length; i += CONNECTIONS) {
          if (c.closed !== undefined) {
            failures.push(...c.invalid);
            c = await open();
            reconnects++;
          }
          await exchange(c, frames[i]!, i);
        }
        failures.push(...c.invalid);
        c.ws.close();
      }),
    );
    const kinds = [...counts].sort((a, b) => b[1] - a[1]);
    console.log(
      'fuzz figures',
      JSON.stringify({ frames: frames.length, ms: Date.now() - t0, reconnects, closes: Object.fromEntries(closes), answers: Object.fromEntries(kinds) }),
    );
    expect(failures.slice(0, 20)).toEqual([]);
    expect(closes.get(1009) ?? 0).toBeGreaterThan(0);
    expect([...closes.keys()].every((code) => code === 1009)).toBe(true);
    expect(await metric(tb.bridge.metrics, 'krx_server_closes_total', { code: '1009' })).toBe(closes.get(1009));
    // Nothing leaked onto shared prototypes.
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.keys(Object.prototype)).toEqual([]);
    expect(await metric(tb.bridge.metrics, 'krx_messages_in_total', { op: 'invalid' })).toBeGreaterThan(1000);
    expect((await fetch(`${tb.url}/healthz`)).status).toBe(200);
    expect(watch.events).toEqual([]);
  }, 120_000);

  it('floods past the per-address connection cap get HTTP 429; the first ones keep working', async () => {
    const open8 = await Promise.all(Array.from({ length: 8 }, () => open()));
    expect(open8.every((c) => c.welcomed)).toBe(true);
    const refused = await Promise.all(
      Array.from(
        { length: 20 },
        () =>
          new Promise<number>((resolve) => {
            const ws = new WebSocket(tb.wsUrl);
            ws.on('unexpected-response', (_q, res) => resolve(res.statusCode ?? 0));
            ws.on('open', () => resolve(101));
            ws.on('error', () => resolve(-1));
          }),
      ),
    );
    expect(refused.every((s) => s === 429)).toBe(true);
    const c = open8[0]!;
    c.ws.send(JSON.stringify({ op: 'ping', id: 'still' }));
    await until(() => c.msgs.some((m) => m.type === 'pong' && m.id === 'still'), 3000, 'pong');
    for (const x of open8) x.ws.close();
    await until(() => tb.bridge.gateway.clientCount === 0, 5000, 'all closed');
    expect(await metric(tb.bridge.metrics, 'krx_connections_total', { outcome: 'too_many' })).toBe(20);
  });

  it('drops half-open peers that stop answering pings (4002), and keeps serving', async () => {
    const before = await metric(tb.bridge.metrics, 'krx_server_closes_total', { code: '4002' });
    const silent = await Promise.all(Array.from({ length: 5 }, () => rawClient(tb.wsUrl)));
    const alive = await open();
    await until(() => tb.bridge.gateway.clientCount === 6, 3000, 'connected');
    // Two silent heartbeat intervals later the server has cut them (the paused sockets do not see it).
    await until(() => tb.bridge.gateway.clientCount === 1, 6000, 'half-open peers dropped');
    expect(await metric(tb.bridge.metrics, 'krx_server_closes_total', { code: '4002' })).toBe(before + 5);
    for (const s of silent) s.socket.destroy();
    expect(alive.closed).toBeUndefined();
    expect(tb.bridge.gateway.clientCount).toBe(1);
    alive.ws.close();
  });

  it('closes framing violations the way RFC 6455 says (1002, 1007), counts them, and keeps serving', async () => {
    const cases: { data: Buffer; code: number }[] = [
      // An unmasked client frame.
      { data: Buffer.from([0x81, 0x02, 0x7b, 0x7d]), code: 1002 },
      // A reserved opcode.
      { data: Buffer.concat([Buffer.from([0x83, 0x80]), Buffer.alloc(4)]), code: 1002 },
      // A text frame that is not UTF-8.
      { data: Buffer.concat([Buffer.from([0x81, 0x82]), Buffer.alloc(4), Buffer.from([0xc3, 0x28])]), code: 1007 },
    ];
    const counted = async (code: number) => metric(tb.bridge.metrics, 'krx_server_closes_total', { code: String(code) });
    const before = { 1002: await counted(1002), 1007: await counted(1007) };
    for (const k of cases) {
      const r = await rawClient(tb.wsUrl);
      r.socket.resume();
      let got = Buffer.alloc(0);
      r.socket.on('data', (d: Buffer) => (got = Buffer.concat([got, d])));
      r.socket.write(k.data);
      await until(() => r.closed, 3000, 'close');
      // The last frame on the wire is a close frame with the code.
      const at = got.lastIndexOf(0x88);
      expect(got.readUInt16BE(at + 2)).toBe(k.code);
    }
    // Counted with the closes the server makes itself (the count may follow the close frame out).
    await until(async () => (await counted(1002)) >= before[1002] + 2 && (await counted(1007)) >= before[1007] + 1, 3000, 'the closes counted');
    expect(await counted(1002)).toBe(before[1002] + 2);
    expect(await counted(1007)).toBe(before[1007] + 1);
    expect((await fetch(`${tb.url}/healthz`)).status).toBe(200);
  });
});
