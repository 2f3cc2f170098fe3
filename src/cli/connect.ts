import { connect } from 'node:net';
import WebSocket from 'ws';
import { KrxClient, isKrxError } from '../client/index.js';
import type { KrxError } from '../client/index.js';
import { CliError } from './io.js';
import { wsUrlOption } from './options.js';

/**
 * Connecting `tail` and `get` to a running bridge through the SDK, or
 * saying in one line why not: the bridge's refusal (its code, message and
 * HTTP status), else what the network said (connection refused, no answer).
 * Once connected, it keeps what went wrong last, for the table's connection
 * line and for the line printed when the bridge refuses the client for good.
 */

/** Where and how to connect. */
export interface SessionOptions {
  /** The bridge's WebSocket URL (`ws://` or `wss://`); anything else is a `CliError` (exit 1). */
  readonly url: string;
  /** Access token, sent as `?token=`. */
  readonly token?: string | undefined;
  /** Time allowed to connect (ms); also the requests' timeout. */
  readonly timeoutMs: number;
}

/** Why a WebSocket URL does not answer: the TCP error (e.g. ECONNREFUSED), else what the client saw (`seen`). */
export async function whyNot(url: string, seen: string): Promise<string> {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return 'not a WebSocket URL';
  }
  const port = Number(u.port || (u.protocol === 'wss:' ? 443 : 80));
  const tcp = await new Promise<string | undefined>((resolve) => {
    const sock = connect({ host: u.hostname, port, timeout: 2000 });
    sock.once('connect', () => {
      sock.destroy();
      resolve(undefined);
    });
    sock.once('timeout', () => {
      sock.destroy();
      resolve('no answer (timed out)');
    });
    sock.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
  if (tcp !== undefined) return tcp === 'ECONNREFUSED' ? 'connection refused (is the bridge running there?)' : tcp;
  return seen && !seen.startsWith('closed 1006') ? seen : 'the server there does not speak the bridge protocol';
}

/** A client of a running bridge for one command, with what last went wrong on its connection. */
export class BridgeSession {
  /** The last close of a connection that was up (`closed 4001 token revoked`), '' before any. */
  private lastClose = '';
  /** The last error the client reported since that close, if any. */
  private lastError: KrxError | undefined;
  /** Which of the two came last. */
  private latest = '';
  /** Whether `close()` was called. */
  private closing = false;

  private constructor(
    /** The bridge's WebSocket URL. */
    readonly url: string,
    /** The SDK client, open once `open()` resolves. */
    readonly client: KrxClient,
  ) {
    client.on('disconnect', (code, reason) => {
      this.latest = this.lastClose = `closed ${code}${reason ? ` ${reason}` : ''}`;
      this.lastError = undefined;
    });
    client.on('error', (e) => {
      this.lastError = e;
      this.latest = e.message;
    });
  }

  /**
   * Connects and resolves once the client is open; rejects with a `CliError`:
   * exit 1 for a URL that is not a WebSocket URL, exit 2 with the bridge's
   * refusal or the network's error when it is not open within `timeoutMs`.
   */
  static async open(opts: SessionOptions): Promise<BridgeSession> {
    const url = wsUrlOption(opts.url);
    let client: KrxClient;
    try {
      client = new KrxClient(url, {
        WebSocket: WebSocket as never,
        connectTimeoutMs: opts.timeoutMs,
        requestTimeoutMs: opts.timeoutMs,
        ...(opts.token ? { token: opts.token } : {}),
      });
    } catch (err) {
      // The constructor throws a TypeError for an option or URL it cannot use: a usage error, not a crash.
      if (err instanceof TypeError) throw new CliError(`cannot connect to ${url}: ${err.message}`);
      throw err;
    }
    const session = new BridgeSession(url, client);
    try {
      await client.ready({ timeoutMs: opts.timeoutMs });
    } catch (err) {
      await client.close();
      // A refusal no retry changes (a token not valid, say) closes the client at once with the bridge's reason; else the time ran out.
      const refused = isKrxError(err) && err.code !== 'timeout' ? err.message : undefined;
      throw new CliError(`cannot connect to ${url}: ${refused ?? (await whyNot(url, session.latest))}`, 2);
    }
    return session;
  }

  /** What went wrong last: the bridge's refusal or error, or how the connection closed (`closed 1006`); '' when nothing did. */
  get problem(): string {
    return this.latest;
  }

  /**
   * Resolves with one line saying why, when the client closes for good
   * without `close()` being called (the bridge refused to take it back: a
   * revoked token, say). Never settles otherwise.
   */
  ended(): Promise<string> {
    return new Promise((resolve) => {
      const check = () => {
        if (this.client.state !== 'closed' || this.closing) return;
        this.client.off('state', check);
        resolve(this.why());
      };
      this.client.on('state', check);
      check();
    });
  }

  private why(): string {
    const why = this.lastError ? `${this.lastError.code}: ${this.lastError.message}` : 'the client closed';
    return this.lastClose ? `disconnected from ${this.url} (${this.lastClose}) and cannot reconnect: ${why}` : `the connection to ${this.url} ended: ${why}`;
  }

  /** Closes the client (which `ended()` does not report). */
  close(): Promise<void> {
    this.closing = true;
    return this.client.close();
  }
}
