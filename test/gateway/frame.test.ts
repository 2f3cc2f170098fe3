import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { directSocket, headerLength, senderIdle, socketOf, writeMessages, writeText, writeTextHeader, type FrameTarget } from '../../src/gateway/frame.js';

// ws's frame writer is public at runtime but has no type declarations.
const { Sender } = createRequire(import.meta.url)('ws') as {
  Sender: { frame(data: Buffer, opts: Record<string, unknown>): Buffer[] };
};

const SIZES = [0, 1, 125, 126, 127, 65_535, 65_536, 70_000];

describe('pre-framed text frames', () => {
  it.each(SIZES)('write the header ws writes for a %i-byte payload', (len) => {
    const [wsHeader] = Sender.frame(Buffer.alloc(len), { fin: true, opcode: 1, mask: false, readOnly: true, rsv1: false });
    const buf = Buffer.alloc(headerLength(len));
    expect(writeTextHeader(buf, len)).toBe(buf.length);
    expect(buf).toEqual(wsHeader);
  });
});

describe('a message sent on its own through ws', () => {
  it('is a copy when it is a view of a larger buffer (a store-written frame), so a socket that does not drain holds only it', () => {
    const sent: Buffer[] = [];
    const t = { ws: { send: (b: Buffer) => void sent.push(b) }, sendOptions: { binary: false, compress: false } } as unknown as FrameTarget;
    const chunk = Buffer.alloc(64 << 10, 0x20);
    const view = chunk.subarray(1000, 1300);
    view.write('{"a":1}');
    writeMessages(t, [view], 0, 1, view.length);
    expect(sent[0]!.equals(view)).toBe(true);
    expect(sent[0]!.buffer).not.toBe(chunk.buffer);
    expect(sent[0]!.buffer.byteLength).toBe(300);
    // A buffer of its own goes as it is.
    const alone = Buffer.allocUnsafeSlow(7);
    alone.write('{"b":2}');
    writeMessages(t, [alone], 0, 1, 7);
    expect(sent[1]).toBe(alone);
  });
});

let server: Server | undefined;
let wss: WebSocketServer | undefined;
afterEach(async () => {
  for (const c of wss?.clients ?? []) c.terminate();
  await new Promise<void>((r) => (wss ? wss.close(() => r()) : r()));
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = wss = undefined;
});

/** A ws server on port 0 and one client of it; resolves both ends. */
async function pair(deflate: boolean): Promise<{ srv: WebSocket; cli: WebSocket }> {
  server = createServer();
  wss = new WebSocketServer({ server, perMessageDeflate: deflate });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  const accepted = new Promise<WebSocket>((r) => wss!.once('connection', r));
  const cli = new WebSocket(`ws://127.0.0.1:${port}`, { perMessageDeflate: deflate });
  await new Promise((r) => cli.once('open', r));
  return { srv: await accepted, cli };
}

function framed(text: string): Buffer {
  const len = Buffer.byteLength(text);
  const buf = Buffer.allocUnsafe(headerLength(len) + len);
  buf.write(text, writeTextHeader(buf, len));
  return buf;
}

describe('direct socket writes', () => {
  it('carry a heartbeat ping that is due in front of the next frame, in the same write, and the pong comes back', async () => {
    const { srv, cli } = await pair(false);
    const sock = directSocket(srv)!;
    const t: FrameTarget = { ws: srv, direct: sock, sendOptions: { binary: false, compress: false }, pingDue: true };
    const writes: number[] = [];
    const write = sock.write.bind(sock);
    sock.write = ((data: Buffer) => (writes.push(data.length), write(data))) as typeof sock.write;
    const events: string[] = [];
    cli.on('ping', () => events.push('ping'));
    cli.on('message', (d) => events.push(String(d)));
    const pong = new Promise<void>((r) => srv.once('pong', () => r()));
    const big = 'x'.repeat(200);
    writeMessages(t, [Buffer.from('{"a":1}')], 0, 1, 7);
    expect(t.pingDue).toBe(false);
    t.pingDue = true;
    writeMessages(t, [Buffer.from(`"${big}"`), Buffer.from('{"c":3}')], 0, 2, big.length + 9);
    writeMessages(t, [Buffer.from('{"d":4}')], 0, 1, 7);
    await pong;
    await new Promise<void>((r) => (events.length >= 5 ? r() : cli.on('message', () => events.length >= 5 && r())));
    expect(events).toEqual(['ping', '{"a":1}', 'ping', `["${big}",{"c":3}]`, '{"d":4}']);
    // Ping and frame in one write each time: 2 + 2 + 7, 2 + 4 + 212, then 2 + 7.
    expect(writes).toEqual([11, 218, 9]);
  });

  it('interleave with ws.send, pings and a close in order, at every frame size', async () => {
    const { srv, cli } = await pair(false);
    const sock = directSocket(srv);
    expect(sock).toBeDefined();
    const sent: string[] = [];
    const got: string[] = [];
    let pongs = 0;
    cli.on('message', (d, binary) => {
      expect(binary).toBe(false);
      got.push(String(d));
    });
    cli.on('ping', () => pongs++);
    const closed = new Promise<number>((r) => cli.once('close', (code) => r(code)));
    for (let i = 0; i < 300; i++) {
      const text = `${i}:` + '가'.repeat(SIZES[i % SIZES.length]! / 3);
      sent.push(text);
      if (i % 3 === 0) srv.send(text);
      else {
        expect(senderIdle(srv)).toBe(true);
        sock!.write(framed(text));
      }
      if (i % 50 === 0) srv.ping();
    }
    srv.close(1000, 'done');
    expect(await closed).toBe(1000);
    expect(got).toEqual(sent);
    expect(pongs).toBe(6);
  });

  it('count in bufferedAmount while the client does not read', async () => {
    const { srv, cli } = await pair(false);
    (cli as unknown as { _socket: { pause(): void } })._socket.pause();
    const chunk = framed('x'.repeat(1 << 20));
    for (let i = 0; i < 64; i++) directSocket(srv)!.write(chunk);
    expect(srv.bufferedAmount).toBeGreaterThan(16 << 20);
  });

  it('are not used on a connection with permessage-deflate', async () => {
    const { srv } = await pair(true);
    expect(directSocket(srv)).toBeUndefined();
  });
});

describe('frames of messages', () => {
  it.each([false, true])('one message as itself, several as a JSON array, a payload as is (deflate %s)', async (deflate) => {
    const { srv, cli } = await pair(deflate);
    const t: FrameTarget = { ws: srv, direct: directSocket(srv), sendOptions: { binary: false, compress: deflate } };
    const got: string[] = [];
    cli.on('message', (d) => got.push(String(d)));
    const list = ['{"a":1}', '{"b":"가"}', '{"c":3}'].map((x) => Buffer.from(x));
    const bytes = (from: number, to: number) => list.slice(from, to).reduce((n, b) => n + b.length, 0);
    expect(writeMessages(t, list, 1, 2, bytes(1, 2))).toBe(bytes(1, 2));
    expect(writeMessages(t, list, 0, 3, bytes(0, 3))).toBe(bytes(0, 3) + 4);
    expect(writeText(t, '[{"d":"가나"}]')).toBe(Buffer.byteLength('[{"d":"가나"}]'));
    await new Promise<void>((r) => {
      const check = () => (got.length === 3 ? r() : setTimeout(check, 5));
      check();
    });
    expect(got).toEqual(['{"b":"가"}', '[{"a":1},{"b":"가"},{"c":3}]', '[{"d":"가나"}]']);
  });

  it('leave nothing in the socket queue when the kernel takes them, and queue what it does not take', async () => {
    // What the slow-consumer policy rests on: a write the kernel takes whole completes at once.
    const { srv, cli } = await pair(false);
    const sock = socketOf(srv)!;
    directSocket(srv)!.write(framed('x'.repeat(1000)));
    expect(sock.writableLength).toBe(0);
    (cli as unknown as { _socket: { pause(): void } })._socket.pause();
    let writes = 0;
    while (sock.writableLength === 0 && writes < 10_000) {
      directSocket(srv)!.write(framed('y'.repeat(16 << 10)));
      writes++;
    }
    expect(writes).toBeLessThan(10_000);
    expect(sock.writableLength).toBeGreaterThan(0);
    expect(srv.bufferedAmount).toBe(sock.writableLength);
  });
});

describe('the shared frame buffer', () => {
  /** Writes `payloads` one at a time through `writeText`, each once the client has the one before; the buffers handed to the socket, and whether its queue was empty after each write. */
  async function writeEach(payloads: readonly string[]): Promise<{ buffers: ArrayBufferLike[]; emptied: boolean[] }> {
    const { srv, cli } = await pair(false);
    const sock = directSocket(srv)!;
    const t: FrameTarget = { ws: srv, direct: sock, sendOptions: { binary: false, compress: false } };
    const buffers: ArrayBufferLike[] = [];
    const emptied: boolean[] = [];
    const write = sock.write.bind(sock);
    sock.write = ((data: Buffer) => {
      buffers.push(data.buffer);
      const r = write(data);
      emptied.push(sock.writableLength === 0);
      return r;
    }) as typeof sock.write;
    const got: string[] = [];
    cli.on('message', (d) => got.push(String(d)));
    for (const p of payloads) {
      const n = got.length;
      writeText(t, p);
      await new Promise<void>((r) => {
        const check = () => (got.length > n ? r() : setTimeout(check, 1));
        check();
      });
    }
    expect(got).toEqual(payloads);
    return { buffers, emptied };
  }

  it('serves a frame of snapshots a message past the 16 KiB limit, and the next', async () => {
    // Snapshots are gathered up to the first message past frameBytes: such a frame was a buffer of its own, every one.
    const payloads = [16_800, 17_500, 16_400, 16_390].map((n, i) => `[${'"' + String(i).repeat(n) + '"'}]`);
    const { buffers, emptied } = await writeEach(payloads);
    const shared = buffers.filter((b, i) => i === 0 || emptied[i - 1]);
    expect(shared.length).toBeGreaterThanOrEqual(3);
    expect(new Set(shared).size).toBe(1);
  });

  it('grows for a larger frame up to 64 KiB, and a larger one gets a buffer of its own', async () => {
    const payloads = [40_000, 40_000, 100_000, 1_000].map((n) => `"${'z'.repeat(n)}"`);
    const { buffers, emptied } = await writeEach(payloads);
    expect(emptied.slice(0, 2)).toEqual([true, true]);
    expect(buffers[1]).toBe(buffers[0]);
    expect(buffers[2]).not.toBe(buffers[1]);
    expect(buffers[2]!.byteLength).toBeGreaterThanOrEqual(100_000);
    // The frame of its own left the shared one in place.
    expect(buffers[3]).toBe(buffers[1]);
  });
});

describe('WS_DIRECT_WRITE (the gateway option directWrite)', () => {
  it('off: no connection writes to its socket directly, and a subscriber still gets its snapshot and patches', async () => {
    const { Client, row, startHarness } = await import('./harness.js');
    const h = await startHarness({ directWrite: false });
    try {
      const c = await Client.connect(h.url);
      await c.request({ op: 'subscribe', id: 1, channel: 'quote', market: 'kospi', codes: ['000001'] });
      const sessions = (h.gateway as unknown as { sessions: Set<{ out: { direct: unknown } }> }).sessions;
      expect([...sessions].map((s) => s.out.direct)).toEqual([undefined]);
      h.tick('quote', 'kospi', [row('000001', 100)]);
      h.tick('quote', 'kospi', [row('000001', 101)]);
      await c.wait(() => c.of('patch').length === 1);
      expect(c.of('snapshot')).toHaveLength(1);
      c.close();
    } finally {
      await h.close();
    }
  });

  it('on (the default): connections without permessage-deflate write directly', async () => {
    const { Client, startHarness } = await import('./harness.js');
    const h = await startHarness();
    try {
      const c = await Client.connect(h.url);
      const sessions = (h.gateway as unknown as { sessions: Set<{ out: { direct: unknown } }> }).sessions;
      expect([...sessions].every((s) => s.out.direct !== undefined)).toBe(true);
      c.close();
    } finally {
      await h.close();
    }
  });
});
