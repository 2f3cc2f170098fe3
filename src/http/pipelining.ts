import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * How deep one HTTP connection may pipeline. node:http runs every request
 * it has parsed, however many one read held, and queues their responses
 * behind the one being written: a connection that writes thousands of
 * requests and reads nothing would have all of them worked on and their
 * answers held in memory. Here each connection may have at most
 * `MAX_PIPELINED` responses outstanding (requests not yet answered, or
 * answered and not yet written); the next request is refused with a 429,
 * after which the connection closes, and nothing is done for any request
 * behind that one. See docs/OPERATIONS.md §5.1.
 */

/** Most responses one HTTP connection may have outstanding: pipelined requests not yet answered, or answered and not yet written. */
export const MAX_PIPELINED = 32;

/**
 * What becomes of a request: `serve` it; `refuse` it (the first past the
 * limit: answer 429 and close the connection after it); or `drop` it (it
 * came after the refusal on its connection, which closes once the refusal
 * is written: nothing is done for it, and it is never answered).
 */
export type Admission = 'serve' | 'refuse' | 'drop';

interface Connection {
  outstanding: number;
  refused: boolean;
}

/** Counts the responses outstanding on each connection of a server and admits its requests by that count. */
export class PipelineLimit {
  readonly #connections = new WeakMap<Socket, Connection>();

  /** A limit of `max` responses outstanding per connection (default `MAX_PIPELINED`). */
  constructor(readonly max = MAX_PIPELINED) {}

  /**
   * Admits a request on its connection, counting its response as
   * outstanding until it closes: written, or abandoned with the connection
   * (a response queued behind another never closes then, its request does).
   */
  admit(req: IncomingMessage, res: ServerResponse): Admission {
    const socket = req.socket;
    let conn = this.#connections.get(socket);
    if (conn === undefined) {
      conn = { outstanding: 0, refused: false };
      this.#connections.set(socket, conn);
    }
    if (conn.refused) return 'drop';
    const c = conn;
    c.outstanding++;
    let open = true;
    const settle = (): void => {
      if (!open) return;
      open = false;
      c.outstanding--;
    };
    res.once('close', settle);
    req.once('close', settle);
    if (c.outstanding <= this.max) return 'serve';
    c.refused = true;
    // Read no more of it (Node may resume reading when an earlier response is written; what comes is dropped).
    socket.pause();
    return 'refuse';
  }
}
