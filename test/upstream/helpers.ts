import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request the test server received. */
export interface Seen {
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  /** Client port of the connection it came on (same port = same kept-alive connection). */
  readonly port: number | undefined;
}

/** A small HTTP server on 127.0.0.1:0 whose behaviour a test sets per request. */
export interface TestServer {
  readonly url: string;
  readonly seen: Seen[];
  /** Replaces the request handler. */
  handle(h: (req: IncomingMessage, res: ServerResponse, n: number) => void): void;
  close(): Promise<void>;
}

/** Starts a test server; by default every request gets 404. */
export async function startServer(): Promise<TestServer> {
  const seen: Seen[] = [];
  let handler: (req: IncomingMessage, res: ServerResponse, n: number) => void = (_req, res) => {
    res.writeHead(404).end();
  };
  const server = createServer((req, res) => {
    seen.push({ url: req.url ?? '', headers: req.headers, port: req.socket.remotePort });
    handler(req, res, seen.length);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    handle: (h) => {
      handler = h;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Sends `body` as JSON with `status` and extra headers. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers }).end(text);
}

/** Rate-limit headers as the upstream sends them. */
export function limits(limit: number, remaining: number): Record<string, string> {
  return { 'X-RateLimit-Limit-Day': String(limit), 'X-RateLimit-Remaining-Day': String(remaining) };
}
