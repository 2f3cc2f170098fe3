import { maxHeaderSize } from 'node:http';
import type { Duplex } from 'node:stream';
import { BASE_HEADERS } from './headers.js';

/**
 * Requests Node's HTTP parser refuses before any route sees them (a
 * malformed request line or header, headers too large or too slow):
 * answered with a status and a coded JSON body saying what was wrong. Node keeps its strict
 * parser; one common case gets a clear word: a request target holding raw
 * UTF-8 (`curl 'localhost:8080/symbols?q=삼성'`), which must be
 * percent-encoded. See docs/OPERATIONS.md §1.
 */

/** Refusals other than a 400: the status, its text and what the coded body says. */
const STATUS: Readonly<Record<string, [number, string, string]>> = {
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large', `the request's headers pass the ${maxHeaderSize} bytes the server reads`],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout', "the request's headers did not all arrive in time"],
};

function answer(status: number, text: string, body?: { code: string; message: string }, headers: Record<string, string> = {}): string {
  const json = body ? JSON.stringify({ error: body }) : '';
  const extra = Object.entries({ ...BASE_HEADERS, ...headers })
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  return (
    `HTTP/1.1 ${status} ${text}\r\nConnection: close\r\n${extra}` +
    (body ? `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(json)}\r\n` : 'Content-Length: 0\r\n') +
    `\r\n${json}`
  );
}

/**
 * The `connect` listener of the HTTP server: a `CONNECT` request (a proxy
 * tunnel) is answered as any other method but GET and HEAD would be, a
 * 405 (or a 400 for its usual target, the authority form, as for any
 * method), instead of Node closing the socket without a word.
 */
export function onConnect(req: { url?: string }, socket: Duplex): void {
  if (!socket.writable || socket.destroyed) return void socket.destroy();
  const origin = req.url?.startsWith('/') === true;
  socket.end(
    origin
      ? answer(405, 'Method Not Allowed', { code: 'method_not_allowed', message: 'only GET and HEAD are served' }, { Allow: 'GET, HEAD' })
      : answer(400, 'Bad Request', { code: 'bad_request', message: 'the request target is not a valid path' }),
  );
}

/** The `clientError` listener of the HTTP server. */
export function onClientError(err: Error & { code?: string; rawPacket?: Buffer }, socket: Duplex): void {
  if (!socket.writable || socket.destroyed) return void socket.destroy();
  const [status, text, said] = STATUS[err.code ?? ''] ?? [400, 'Bad Request', 'the request could not be read as HTTP/1.1'];
  const line = err.rawPacket?.subarray(0, 8192).toString('latin1').split('\r\n', 1)[0] ?? '';
  const rawUtf8 = err.code === 'HPE_INVALID_URL' && /[\x80-\xff]/.test(line);
  const message = rawUtf8 ? 'the request target holds raw non-ASCII bytes: percent-encode them (e.g. ?q=%EC%82%BC%EC%84%B1 for 삼성)' : said;
  socket.end(answer(status, text, { code: 'bad_request', message }));
}
