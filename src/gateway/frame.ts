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

/** Writes a FIN text-frame header for `len` payload bytes at the start of `buf`; returns the header length. */
export function writeTextHeader(buf: Buffer, len: number): number {
  buf[0] = 0x81;
  if (len < 126) {
    buf[1] = len;
    return 2;
  }
  if (len < 65_536) {
    buf[1] = 126;
    buf[2] = len >>> 8;
    buf[3] = len & 0xff;
    return 4;
  }
  buf[1] = 127;
  buf.writeUInt32BE(Math.floor(len / 2 ** 32), 2);
  buf.writeUInt32BE(len >>> 0, 6);
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
