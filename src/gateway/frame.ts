import type { Socket } from 'node:net';
import type { WebSocket } from 'ws';

/**
 * Pre-framed WebSocket text frames (RFC 6455 §5.2; server frames are not
 * masked) written straight to a connection's TCP socket: the header goes
 * into the same buffer as the payload, so a client's tick costs one
 * buffer and one write instead of ws's header buffer plus a two-buffer
 * write. Only done while ws's own sender is idle, so the socket never sees
 * one of our frames inside one of ws's; otherwise the caller uses
 * `ws.send`. See DESIGN.md §4.
 */

/** Bytes of the header of an unmasked frame with a payload of `len` bytes. */
export function headerLength(len: number): number {
  return len < 126 ? 2 : len < 65_536 ? 4 : 10;
}

/** Writes a FIN text-frame header for `len` payload bytes at `at` (default the start) of `buf`; returns the header length. */
export function writeTextHeader(buf: Buffer, len: number, at = 0): number {
  buf[at] = 0x81;
  if (len < 126) {
    buf[at + 1] = len;
    return 2;
  }
  if (len < 65_536) {
    buf[at + 1] = 126;
    buf[at + 2] = len >>> 8;
    buf[at + 3] = len & 0xff;
    return 4;
  }
  buf[at + 1] = 127;
  buf.writeUInt32BE(Math.floor(len / 2 ** 32), at + 2);
  buf.writeUInt32BE(len >>> 0, at + 6);
  return 10;
}

/** The parts of a ws 8 WebSocket this module reads. */
interface WsInternals {
  readonly _socket?: unknown;
  readonly _sender?: { readonly _state?: unknown; readonly _queue?: unknown };
  readonly _extensions?: Record<string, unknown>;
}

/**
 * The TCP socket under `ws` when frames may be written to it directly: a
 * server connection of ws 8 as this module knows it (socket, sender with
 * its state and queue), without permessage-deflate. Undefined otherwise;
 * then every frame goes through `ws.send`.
 */
export function directSocket(ws: WebSocket): Socket | undefined {
  const w = ws as unknown as WsInternals;
  const sender = w._sender;
  const socket = w._socket as Partial<Socket> | undefined;
  if (sender === undefined || sender === null || typeof sender._state !== 'number' || !Array.isArray(sender._queue)) return undefined;
  if (socket === undefined || socket === null || typeof socket.write !== 'function') return undefined;
  if (w._extensions === undefined || Object.keys(w._extensions).length > 0) return undefined;
  return socket as Socket;
}

/** Whether ws's sender of `ws` has no frame in progress or queued (its state is DEFAULT). */
export function senderIdle(ws: WebSocket): boolean {
  const sender = (ws as unknown as WsInternals)._sender as { _state: number; _queue: unknown[] };
  return sender._state === 0 && sender._queue.length === 0;
}

/** The TCP socket under a ws connection (also with permessage-deflate), if it has one. */
export function socketOf(ws: WebSocket): Socket | undefined {
  const s = (ws as unknown as WsInternals)._socket as Partial<Socket> | undefined | null;
  return s !== undefined && s !== null && typeof s.write === 'function' ? (s as Socket) : undefined;
}

/** Where a connection's frames go: straight to its TCP socket when `direct` is set and ws is idle, else through `ws.send`. */
export interface FrameTarget {
  readonly ws: WebSocket;
  readonly direct: Socket | undefined;
  readonly sendOptions: { readonly binary: false; readonly compress: boolean };
  /**
   * A heartbeat ping waits for the next frame written straight to the
   * socket, to go out in the same write (`writeMessages` clears it then).
   */
  pingDue?: boolean;
}

/** A WebSocket ping frame from a server: FIN and opcode 9, unmasked, no payload. */
const PING = Buffer.from([0x89, 0x00]);

/**
 * The buffer a frame is built in when it fits, for a direct write to a
 * socket whose queue is empty: the kernel usually takes such a write whole
 * at once, and then the same buffer serves the next frame. Only when the
 * kernel leaves part of it (the socket now holds it) is it given up and a
 * new one made. Frames written while the queue is not empty get their own
 * buffer of their exact size: the queue holds no more than its bytes.
 * Without this, every client's frame of every tick would be a buffer to
 * allocate and free, and the allocator keeps what a burst of them took.
 *
 * It holds a frame of the default `frameBytes` (16 KiB) with the message
 * that may take a frame of snapshots past it (they are gathered by
 * characters, up to the first past the limit), a header and a ping; a
 * larger frame, up to `SCRATCH_MAX`, makes it larger. Sized to the limit
 * alone, every frame of a subscribe's snapshots passed it by a few hundred
 * bytes and was a buffer of its own: 30 clients taking whole-market
 * snapshots made 75 MB of them in 5 s, and the allocator kept 4 MB of the
 * peak once they were freed (bench/HISTORY.md, "Stalled clients: the
 * frames of snapshots").
 */
const SCRATCH_BYTES = 20 << 10;
/** The largest frame built in the shared buffer; a larger one gets its own. */
const SCRATCH_MAX = 64 << 10;
let scratch = Buffer.allocUnsafeSlow(SCRATCH_BYTES);

/** A buffer of `size` bytes for a frame to `socket`: the shared one when it fits and the socket's queue is empty. */
function frameBuffer(socket: Socket, size: number): Buffer {
  if (size > SCRATCH_MAX || socket.writableLength !== 0) return Buffer.allocUnsafe(size);
  if (size > scratch.length) scratch = Buffer.allocUnsafeSlow(Math.min(SCRATCH_MAX, Math.max(size, 2 * scratch.length)));
  return scratch.subarray(0, size);
}

/** Writes a frame built by `frameBuffer`; gives up the shared buffer when the socket kept any of it (its successor is of the default size). */
function writeFrame(socket: Socket, data: Buffer): void {
  socket.write(data);
  if (data.buffer === scratch.buffer && socket.writableLength > 0) scratch = Buffer.allocUnsafeSlow(SCRATCH_BYTES);
}

const LBRACKET = 0x5b;
const COMMA = 0x2c;
const RBRACKET = 0x5d;

/**
 * A message's bytes as a buffer of their own when they are a view of one
 * larger than Node's pool slab (8 KiB): a frame the store wrote shares up
 * to 64 KiB with the rest of its batch's frames, and a socket that does
 * not drain holds what it was handed until it does; the copy keeps that to
 * the message. A pooled or smaller buffer goes as it is.
 */
function own(b: Buffer): Buffer {
  if (b.buffer.byteLength <= Buffer.poolSize || b.byteLength === b.buffer.byteLength) return b;
  const c = Buffer.allocUnsafeSlow(b.byteLength);
  b.copy(c);
  return c;
}

/**
 * Writes the serialised messages `list[from..to)` as one text frame: the
 * message itself when there is one, else the JSON array of them. `bytes` is
 * the sum of their lengths. Written straight to the socket, a ping that is
 * due (`t.pingDue`) goes in front of it. Returns the payload's length.
 */
export function writeMessages(t: FrameTarget, list: readonly Buffer[], from: number, to: number, bytes: number): number {
  const n = to - from;
  const len = n === 1 ? bytes : bytes + n + 1;
  const direct = t.direct !== undefined && senderIdle(t.ws);
  // Directly: header and payload in one buffer, one write. Otherwise ws frames the payload.
  if (n === 1 && !direct) {
    t.ws.send(own(list[from]!), t.sendOptions);
    return len;
  }
  // A ping due goes first, in the same write: one system call for both.
  const ping = direct && t.pingDue === true ? PING.length : 0;
  const at = direct ? ping + headerLength(len) : 0;
  const data = direct ? frameBuffer(t.direct!, at + len) : Buffer.allocUnsafe(len);
  if (ping > 0) {
    PING.copy(data, 0);
    t.pingDue = false;
  }
  if (direct) writeTextHeader(data, len, ping);
  if (n === 1) list[from]!.copy(data, at);
  else {
    data[at] = LBRACKET;
    let off = at + 1;
    for (let i = from; i < to; i++) {
      if (i > from) data[off++] = COMMA;
      off += list[i]!.copy(data, off);
    }
    data[off] = RBRACKET;
  }
  if (direct) writeFrame(t.direct!, data);
  else t.ws.send(data, t.sendOptions);
  return len;
}

/**
 * Writes one serialised payload (a message, or a JSON array of them) as one
 * text frame; returns its length in bytes. `sent` is called once ws has
 * handed a frame it queued (compressing) to the socket; not for a direct write.
 */
export function writeText(t: FrameTarget, payload: string, sent?: () => void): number {
  const len = Buffer.byteLength(payload);
  if (t.direct !== undefined && senderIdle(t.ws)) {
    const data = frameBuffer(t.direct, headerLength(len) + len);
    data.write(payload, writeTextHeader(data, len));
    writeFrame(t.direct, data);
  } else t.ws.send(Buffer.from(payload), t.sendOptions, sent);
  return len;
}

/**
 * Writes `parts` (of `len` bytes in all) as one text frame. Directly, the
 * parts go out as they are behind one header (a cached answer's bytes are
 * shared by every reply); otherwise they are joined for `ws.send`.
 */
export function writeParts(t: FrameTarget, parts: readonly Buffer[], len: number): void {
  if (t.direct !== undefined && senderIdle(t.ws)) {
    const head = Buffer.allocUnsafe(headerLength(len));
    writeTextHeader(head, len);
    t.direct.cork();
    t.direct.write(head);
    for (const p of parts) t.direct.write(p);
    t.direct.uncork();
  } else t.ws.send(Buffer.concat(parts, len), t.sendOptions);
}
