import type { EventEmitter } from 'node:events';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';

/**
 * Requests that ask to switch to a protocol the bridge does not speak
 * (`Upgrade: h2c`, which curl's `--http2` and Java's HttpClient send on
 * `http://`, or any other but `websocket`), served as if they had no
 * `Upgrade` header, as RFC 9110 §7.8 lets a server do.
 *
 * node:http hands every request with `Connection: upgrade` and an `Upgrade`
 * header to the server's `upgrade` listeners (the gateway's), whatever its
 * path or protocol, and detaches the connection from its HTTP parser first.
 * Such a request is given back: its head is written again without the
 * `Upgrade` header, in front of what the client sent after it, and the
 * connection is handed to the server as a new one (the `connection` event,
 * which node:http documents for injecting connections). The server's own
 * parser reads it again, so the request meets every route, check and limit
 * a plain one meets, its answer says `keep-alive` or `close` as any other,
 * and requests pipelined behind it are served in their turn.
 */

/** A connection as node:http leaves it: the response it is still writing, when an earlier pipelined request's is. */
type HttpConnection = Duplex & {
  /** node:http's own field: the response being written on the connection (a later one waits its turn behind it). */
  _httpMessage?: EventEmitter | null;
  /** A TLS connection (an `https` server reads it as `secureConnection`). */
  encrypted?: boolean;
  setTimeout?(ms: number): unknown;
};

/** Whether a request asks to become a WebSocket: its `Upgrade` header offers `websocket` (alone or among others). */
export function wantsWebSocket(req: IncomingMessage): boolean {
  const u = req.headers.upgrade;
  return typeof u === 'string' && u.split(',').some((p) => p.trim().toLowerCase() === 'websocket');
}

/**
 * The head of `req` as the client sent it, less its `Upgrade` header. Each
 * header is written `name:value` (no space), so the head is never longer
 * than it came and still fits the parser's size limit; bytes are written
 * back as node:http read them (latin1).
 */
export function headWithoutUpgrade(req: IncomingMessage): Buffer {
  let text = `${req.method ?? 'GET'} ${req.url ?? '/'} HTTP/${req.httpVersion}\r\n`;
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i]!.toLowerCase() !== 'upgrade') text += `${raw[i]}:${raw[i + 1]}\r\n`;
  }
  return Buffer.from(`${text}\r\n`, 'latin1');
}

/** Until the connection is given back, a socket error ends it (`this` is the socket). */
function destroyOnError(this: Duplex): void {
  this.destroy();
}

/**
 * Serves an upgrade request the gateway does not take as a plain request of
 * `server`: `req`'s head less `Upgrade`, then `head` (what followed it on the
 * connection), read again by the server's HTTP parser. When earlier
 * pipelined requests of the connection are still being answered, it waits
 * for their responses, which the detached parser still writes, so that
 * the answers keep their order.
 */
export function servePlain(server: EventEmitter, req: IncomingMessage, socket: Duplex, head: Buffer): void {
  const conn = socket as HttpConnection;
  const bytes = Buffer.concat([headWithoutUpgrade(req), head]);
  conn.on('error', destroyOnError);
  const giveBack = (): void => {
    if (conn.destroyed) return;
    const busy = conn._httpMessage;
    // The response in flight closes once written (or with the connection); node:http hands the connection to the next by then.
    if (busy) return void busy.once('close', giveBack);
    conn.removeListener('error', destroyOnError);
    // No timer of the parser that let go of it runs on (a keep-alive timeout, set once its last answer was written).
    conn.setTimeout?.(0);
    conn.unshift(bytes);
    server.emit(conn.encrypted === true ? 'secureConnection' : 'connection', conn);
  };
  giveBack();
}
