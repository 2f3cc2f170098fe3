import { STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocketServer } from 'ws';
import type { ErrorCode, RefusalCode } from '../protocol/errors.js';
import { parseTarget } from './target.js';

/**
 * Helpers of the HTTP upgrade step: who is asking, and refusing with a
 * plain HTTP response and a short JSON body before any WebSocket exists.
 */

/**
 * The query parameters of a request target, read as every route reads it
 * (`parseTarget`: the origin or the absolute form); none when it cannot be
 * read (the gateway refuses such a target before anything reads its query).
 */
export function searchOf(url: string | undefined): URLSearchParams {
  return parseTarget(url)?.searchParams ?? new URLSearchParams();
}

/**
 * Why an upgrade is refused: the HTTP status, the error code and message,
 * and headers to send. (`upgrade_required`, 426, is the answer to a plain
 * GET of the path when an upgrade would be accepted.)
 */
export interface UpgradeRefusal {
  readonly status: number;
  readonly code: ErrorCode | RefusalCode | 'method_not_allowed' | 'upgrade_required';
  readonly message: string;
  readonly headers?: Record<string, string>;
}

/**
 * Why a request can be no WebSocket handshake, whatever it holds: RFC 6455
 * §4.1 opens one with HTTP/1.1 (an HTTP/1.0 request is a 400); undefined
 * for HTTP/1.1. A plain GET of `/ws` answers it too, as the upgrade would.
 */
export function versionProblem(req: Pick<IncomingMessage, 'httpVersionMajor' | 'httpVersionMinor'>): UpgradeRefusal | undefined {
  if (req.httpVersionMajor === 1 && req.httpVersionMinor >= 1) return undefined;
  return { status: 400, code: 'bad_request', message: 'a WebSocket handshake needs HTTP/1.1' };
}

/**
 * What the WebSocket library would let through that is refused here, or
 * undefined: a request older than HTTP/1.1 (`versionProblem`), another
 * method than GET (the library says 400; every other route says 405), and
 * any version but 13 (the library also accepts the
 * draft version 8, which names its origin in a header the origin check
 * does not read). Everything else it checks (the `Upgrade` header, the
 * key, the subprotocols) it refuses itself, coded by `codedHandshakeErrors`.
 */
export function handshakeProblem(req: IncomingMessage): UpgradeRefusal | undefined {
  const version = versionProblem(req);
  if (version !== undefined) return version;
  if (req.method !== 'GET') return { status: 405, code: 'method_not_allowed', message: 'a WebSocket opens with GET', headers: { Allow: 'GET' } };
  if (req.headers['sec-websocket-version'] !== '13')
    return { status: 400, code: 'bad_request', message: 'Sec-WebSocket-Version must be 13', headers: { 'Sec-WebSocket-Version': '13' } };
  return undefined;
}

/**
 * Makes the handshakes `wss` refuses after `handshakeProblem` passed them
 * (a missing or malformed key, a malformed `Sec-WebSocket-Protocol` or
 * `-Extensions` header; a request not asking for `websocket` never comes
 * here, plain.ts serves it as HTTP) coded refusals too: 400 `bad_request`
 * with the library's reason, instead of its plain-text answer.
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
