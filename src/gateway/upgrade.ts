import { STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocketServer } from 'ws';

/**
 * Helpers of the HTTP upgrade step: who is asking, and refusing with a
 * plain HTTP response and a short JSON body before any WebSocket exists.
 */

/** The path of a request URL, without the query string. */
export function pathOf(url: string | undefined): string {
  const u = url ?? '/';
  const q = u.indexOf('?');
  return q < 0 ? u : u.slice(0, q);
}

/** Why an upgrade is refused: the HTTP status, the error code and message, and headers to send. */
export interface UpgradeRefusal {
  readonly status: number;
  readonly code: string;
  readonly message: string;
  readonly headers?: Record<string, string>;
}

/** A `Sec-WebSocket-Key`: 16 bytes in base64 (RFC 6455 §4.1). */
const KEY = /^[+/0-9A-Za-z]{22}==$/;

/**
 * What is wrong with an upgrade request as a WebSocket opening handshake
 * (RFC 6455 §4.2.1), or undefined: checked before anything else, so that
 * every refusal is a coded one (the WebSocket library would answer some of
 * them itself, in plain text). Only version 13 is spoken: the draft
 * version 8 names its origin in another header, which the origin check
 * does not read.
 */
export function handshakeProblem(req: IncomingMessage): UpgradeRefusal | undefined {
  if (req.method !== 'GET') return { status: 405, code: 'method_not_allowed', message: 'a WebSocket opens with GET', headers: { Allow: 'GET' } };
  if (req.headers.upgrade?.toLowerCase() !== 'websocket') return { status: 400, code: 'bad_request', message: 'only an Upgrade to websocket is served' };
  const key = req.headers['sec-websocket-key'];
  if (key === undefined || !KEY.test(key)) return { status: 400, code: 'bad_request', message: 'missing or invalid Sec-WebSocket-Key header' };
  if (req.headers['sec-websocket-version'] !== '13')
    return { status: 400, code: 'bad_request', message: 'Sec-WebSocket-Version must be 13', headers: { 'Sec-WebSocket-Version': '13' } };
  return undefined;
}

/**
 * Makes the handshakes `wss` refuses after `handshakeProblem` passed them
 * (a malformed `Sec-WebSocket-Protocol` or `-Extensions` header) coded
 * refusals too: 400 `bad_request` with the library's reason, instead of
 * its plain-text answer.
 */
export function codedHandshakeErrors(wss: WebSocketServer): WebSocketServer {
  wss.on('wsClientError', (err: Error, socket: Duplex) => refuseUpgrade(socket, 400, 'bad_request', err.message));
  return wss;
}

/**
 * Answers an upgrade request with an HTTP error (`{"error":{code,message}}`)
 * and closes the socket.
 */
export function refuseUpgrade(socket: Duplex, status: number, code: string, message: string, headers: Record<string, string> = {}): void {
  if (!socket.writable || socket.destroyed) {
    socket.destroy();
    return;
  }
  const body = JSON.stringify({ error: { code, message } });
  // nosniff, as on every HTTP response (BASE_HEADERS in src/http/headers.ts, a layer above this one).
  const extra = Object.entries({ 'X-Content-Type-Options': 'nosniff', ...headers })
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  socket.once('finish', () => socket.destroy());
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n` +
      'Connection: close\r\n' +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      extra +
      '\r\n' +
      body,
  );
}
