import type { ClientMsg } from '../protocol/wire.js';
import { KrxError } from './errors.js';
import type { SubscribePlan } from './subscriptions.js';

/**
 * Requests awaiting their answer, by id: each knows how to build its message
 * (again, after a reconnect), when it was last sent, and how to settle. A
 * request has a deadline from the moment it is made, whether or not the
 * connection is up. See docs/PROTOCOL.md §4.
 */

/** Kinds of request; `resubscribe` is the client's own (the restore after a reconnect). */
export type RequestKind = 'subscribe' | 'unsubscribe' | 'get' | 'ping' | 'resubscribe';

/** One request in flight (or waiting for the connection). */
export interface PendingRequest {
  readonly id: number;
  readonly kind: RequestKind;
  /** Builds the message to send; called at every (re)send. */
  readonly build: (id: number) => ClientMsg;
  /** What a subscribe request subscribes (so a resubscribe does not repeat it). */
  readonly plan?: SubscribePlan;
  /** Whether it was sent on the current connection. */
  sent: boolean;
  /** When it was last sent (ms, `performance.now`). */
  sentAt: number;
  /** Settles with the server's reply message. */
  readonly resolve: (reply: unknown) => void;
  /** Settles with an error. */
  readonly reject: (error: KrxError) => void;
}

/** Per-request options of the public API. */
export interface RequestOptions {
  /** Time allowed for the answer, from the call (ms); default the client's `requestTimeoutMs`. */
  readonly timeoutMs?: number;
  /** Aborts the request; it then rejects with code `aborted`. */
  readonly signal?: AbortSignal;
}

interface Slot {
  readonly req: PendingRequest;
  timer?: ReturnType<typeof setTimeout>;
  cleanup?: () => void;
}

/** The table of pending requests. */
export class Requests {
  private nextId = 1;
  private readonly slots = new Map<number, Slot>();

  /** A fresh request id. */
  id(): number {
    return this.nextId++;
  }

  /**
   * Registers a request. With `timeoutMs` it rejects with `timeout` when no
   * answer came in time; with `signal` it rejects with `aborted` on abort.
   */
  add(req: PendingRequest, timeoutMs?: number, signal?: AbortSignal): void {
    const slot: Slot = { req };
    this.slots.set(req.id, slot);
    if (timeoutMs !== undefined && Number.isFinite(timeoutMs)) {
      slot.timer = setTimeout(
        () => {
          if (!this.take(req.id)) return;
          // Never sent: the connection never came (or never came back) within the timeout.
          if (!req.sent) req.reject(new KrxError('not_connected', `not connected to the bridge within ${timeoutMs} ms; ${req.kind} not sent`));
          else req.reject(new KrxError('timeout', `no answer to ${req.kind} within ${timeoutMs} ms`));
        },
        Math.max(0, timeoutMs),
      );
    }
    if (signal !== undefined) {
      const onAbort = () => {
        if (this.take(req.id)) req.reject(new KrxError('aborted', `${req.kind} aborted`, { cause: signal.reason }));
      };
      if (signal.aborted) {
        onAbort();
        return;
      }
      signal.addEventListener('abort', onAbort, { once: true });
      slot.cleanup = () => signal.removeEventListener('abort', onAbort);
    }
  }

  /** Removes and returns a request (stopping its timer); undefined when unknown. */
  take(id: unknown): PendingRequest | undefined {
    if (typeof id !== 'number') return undefined;
    const slot = this.slots.get(id);
    if (slot === undefined) return undefined;
    this.slots.delete(id);
    if (slot.timer !== undefined) clearTimeout(slot.timer);
    slot.cleanup?.();
    return slot.req;
  }

  /** A request without removing it. */
  peek(id: unknown): PendingRequest | undefined {
    return typeof id === 'number' ? this.slots.get(id)?.req : undefined;
  }

  /** Every pending request, oldest first. */
  all(): PendingRequest[] {
    return [...this.slots.values()].map((s) => s.req);
  }

  /** Rejects and removes every request. */
  rejectAll(error: (req: PendingRequest) => KrxError): void {
    for (const req of this.all()) {
      this.take(req.id);
      req.reject(error(req));
    }
  }
}
