import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';

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
  const extra = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  socket.once('finish', () => socket.destroy());
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n` +
      'Connection: close\r\n' +
      'Content-Type: application/json\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      extra +
      '\r\n' +
      body,
  );
}
