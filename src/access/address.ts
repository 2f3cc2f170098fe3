import type { IncomingMessage } from 'node:http';

/**
 * The client address of a request: the socket's remote address, or with
 * `trustProxy` the first `X-Forwarded-For` entry (only behind a proxy that
 * sets it).
 */
export function clientAddress(req: IncomingMessage, trustProxy = false): string {
  if (trustProxy) {
    const xff = req.headers['x-forwarded-for'];
    const first = (Array.isArray(xff) ? xff[0] : xff)?.split(',')[0]?.trim();
    if (first) return first;
  }
  return req.socket.remoteAddress ?? 'unknown';
}
