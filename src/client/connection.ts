/**
 * One WebSocket of the client: opens it with whatever WebSocket constructor
 * the platform offers (the browser's, Node 22's global, or an injected one
 * such as the `ws` package's), turns its events into three callbacks, and
 * decodes text frames. It knows nothing of the protocol. See
 * docs/PROTOCOL.md §1.
 */

/**
 * The part of the WebSocket API the client uses: the WHATWG interface that
 * browsers, Node 22+ and the `ws` package all implement.
 */
export interface WebSocketLike {
  readonly readyState: number;
  readonly bufferedAmount: number;
  binaryType?: string;
  /* eslint-disable @typescript-eslint/no-explicit-any -- the DOM, undici and `ws` each declare their
     own event classes, and a narrower type would make their sockets unassignable. */
  onopen: ((ev: any) => unknown) | null;
  onmessage: ((ev: any) => unknown) | null;
  onclose: ((ev: any) => unknown) | null;
  onerror: ((ev: any) => unknown) | null;
  /* eslint-enable @typescript-eslint/no-explicit-any */
  send(data: string): void;
  close(code?: number, reason?: string): void;
}

/** A WebSocket constructor: `globalThis.WebSocket` or e.g. `import { WebSocket } from 'ws'`. */
export type WebSocketConstructor = new (url: string) => WebSocketLike;

/** The readyState of an open socket. */
const OPEN = 1;

/** Callbacks of a `Connection`; none is called after `abort()`. */
export interface ConnectionHandlers {
  /** The socket opened. */
  open(): void;
  /** A text frame arrived (binary frames arrive decoded as UTF-8). */
  message(text: string): void;
  /** The socket closed (or failed to open); `code` 1006 when there was no close frame. */
  close(code: number, reason: string): void;
}

const decoder = new TextDecoder();

/** One socket; create a new one for every (re)connect. */
export class Connection {
  private ws: WebSocketLike | undefined;
  private handlers: ConnectionHandlers | undefined;

  /** Opens a socket to `url`; throws what the constructor throws (e.g. for a bad URL). */
  constructor(ctor: WebSocketConstructor, url: string, handlers: ConnectionHandlers) {
    this.handlers = handlers;
    const ws = new ctor(url);
    this.ws = ws;
    if ('binaryType' in ws) ws.binaryType = 'arraybuffer';
    ws.onopen = () => this.handlers?.open();
    ws.onmessage = (ev: { data: unknown }) => {
      const text = decode(ev.data);
      if (text !== undefined) this.handlers?.message(text);
    };
    // An error is always followed by a close event, which carries the outcome.
    ws.onerror = () => undefined;
    ws.onclose = (ev: { code?: number; reason?: string }) => {
      const h = this.handlers;
      this.detach();
      h?.close(typeof ev.code === 'number' ? ev.code : 1006, typeof ev.reason === 'string' ? ev.reason : '');
    };
  }

  /** Whether the socket is open for sending. */
  get isOpen(): boolean {
    return this.ws !== undefined && this.ws.readyState === OPEN;
  }

  /** Bytes queued in the socket but not yet sent (0 when closed). */
  get bufferedAmount(): number {
    return this.ws?.bufferedAmount ?? 0;
  }

  /** Sends one text frame; false when the socket is not open. */
  send(text: string): boolean {
    if (!this.isOpen) return false;
    this.ws!.send(text);
    return true;
  }

  /** Starts a closing handshake; the `close` callback follows when it completes. */
  close(code = 1000, reason = ''): void {
    try {
      this.ws?.close(code, reason);
    } catch {
      // close() only throws for a code the caller chose badly; the socket is dropped below anyway.
      this.abort();
    }
  }

  /**
   * Drops the socket at once: no callback fires any more (a dead peer may
   * never complete a close handshake, so the caller does not wait for one).
   */
  abort(code = 1000, reason = ''): void {
    const ws = this.ws;
    this.detach();
    try {
      ws?.close(code, reason);
    } catch {
      // Already closing or closed: nothing left to release.
    }
  }

  private detach(): void {
    const ws = this.ws;
    this.handlers = undefined;
    this.ws = undefined;
    if (ws === undefined) return;
    ws.onopen = null;
    ws.onmessage = null;
    // Keep a no-op error handler: `ws` throws an unhandled 'error' without one.
    ws.onerror = () => undefined;
    ws.onclose = null;
  }
}

function decode(data: unknown): string | undefined {
  if (typeof data === 'string') return data;
  if (data instanceof ArrayBuffer) return decoder.decode(data);
  if (ArrayBuffer.isView(data)) return decoder.decode(data);
  return undefined;
}
