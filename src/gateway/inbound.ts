import type { RawData } from 'ws';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics/metrics.js';
import type { CloseName } from '../protocol/errors.js';
import type { ClientMsg, RequestId } from '../protocol/messages.js';
import { wireError } from '../protocol/errors.js';
import { onGet, onPing, onResync, onSubscribe, onUnsubscribe, type HandlerContext } from './handlers.js';
import { parseClientFrame, peekRequestId, rateLimited } from './requests.js';
import type { Session } from './session.js';

/**
 * The inbound side of a connection: flood and rate limits, frame parsing,
 * dispatch to the op handlers. A bad frame becomes an error frame; only a
 * sustained flood closes the connection (1008). See docs/PROTOCOL.md §7.
 */

/** What inbound handling needs besides the handler context. */
export interface InboundDeps {
  readonly ctx: HandlerContext;
  readonly metrics: Metrics;
  readonly logger: Logger;
  /** Closes a session with a server close code. */
  close(s: Session, name: CloseName): void;
}

function rawBytes(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}

/** Most time spent handling client frames in one turn of the event loop before the rest wait for the next turn. */
const MS_PER_TURN = 4;

/** A frame over the rate limit, to be refused: all that is kept of it is its `id`, read without parsing it (`peekRequestId`). */
class Refusal {
  /** The refusal of a frame whose id is `id` (undefined: none could be read for certain). */
  constructor(readonly id: RequestId | undefined) {}
}

/** The refusal of a frame without a readable id (one object for all of them: a flood allocates nothing for it). */
const NO_ID = new Refusal(undefined);

/** What is done with a frame on arrival: handled (its bytes), refused (`Refusal`), the connection closed (`'close'`), or nothing (`false`). */
type Admitted = Buffer | Refusal | 'close' | false;

interface Pending {
  readonly s: Session;
  /**
   * The frame; or, in order with the answers before them, the refusal of a
   * frame over the rate limit, or the close (1008) of a connection past the
   * flood or violation limits (`'close'`).
   */
  readonly bytes: Buffer | Refusal | 'close';
  readonly isBinary: boolean;
}

/**
 * The client frames of every connection, handled in arrival order with at
 * most MS_PER_TURN of work per turn of the event loop. Sockets that turn
 * readable together are read in one turn, and a burst (sixty connections of
 * a hundred requests each) would otherwise be parsed and answered in one
 * stretch of 100 ms or more, with health checks and other clients waiting.
 * Accounting (flood and rate limits, `lastSeen`) is done on arrival; what
 * waits is parsing, dispatch, refusals and a flood's close, so a
 * connection's answers stay in the order of its frames. The frames of a
 * connection closed meanwhile (by the server or the peer) are dropped.
 */
export class InboundQueue {
  private readonly queue: Pending[] = [];
  private head = 0;
  private scheduled = false;
  /** When the current turn's handling began, or undefined when nothing was handled this turn. */
  private turnStart: number | undefined;

  /** A queue handing frames to `deps`. */
  constructor(private readonly deps: InboundDeps) {}

  /** Frames waiting. */
  get size(): number {
    return this.queue.length - this.head;
  }

  /** Takes one client frame of `s`: accounts for it now, and handles it now or, past this turn's budget, in a later turn. Never throws. */
  push(s: Session, data: RawData, isBinary: boolean): void {
    const bytes = admit(this.deps, s, data, isBinary);
    if (bytes === false) return;
    if (this.head === this.queue.length && this.withinTurn()) return handleFrame(this.deps, s, bytes, isBinary);
    if (bytes === 'close') s.condemned = true;
    this.queue.push({ s, bytes, isBinary });
    this.schedule();
  }

  /** Whether this turn has budget left; starts the turn's clock on its first frame. */
  private withinTurn(): boolean {
    const now = performance.now();
    if (this.turnStart === undefined) {
      this.turnStart = now;
      this.schedule();
      return true;
    }
    return now - this.turnStart < MS_PER_TURN;
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(this.turn);
  }

  private readonly turn = (): void => {
    this.scheduled = false;
    const start = performance.now();
    this.turnStart = start;
    while (this.head < this.queue.length && performance.now() - start < MS_PER_TURN) {
      const f = this.queue[this.head++]!;
      if (!f.s.closing) handleFrame(this.deps, f.s, f.bytes, f.isBinary);
    }
    if (this.head === this.queue.length) {
      this.queue.length = 0;
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
    // The next turn starts its own clock: frames arriving in the poll phase before it are handled at once if it has budget.
    this.turnStart = undefined;
    if (this.head < this.queue.length) this.schedule();
  };
}

/**
 * Accounts for a frame of `s` on arrival: its bytes, flood and rate limits.
 * The frame's bytes if it is to be handled, a `Refusal` (with the frame's
 * id when it can be read without parsing) if it is to be refused as over
 * the rate limit, `'close'` if the connection is to be closed (1008),
 * `false` if nothing is to be done.
 */
function admit(deps: InboundDeps, s: Session, data: RawData, isBinary: boolean): Admitted {
  const { ctx, metrics } = deps;
  // Elapsed time (liveness, the rate and flood windows) on the monotonic clock: a step of the wall clock moves none of it.
  const now = ctx.monotonic();
  s.lastSeen = now;
  const bytes = rawBytes(data);
  metrics.bytesIn.inc(bytes.length);
  if (s.closing || s.condemned) return false;
  if (s.flood.hit(now)) return 'close';
  if (!s.inbound.take(now)) {
    metrics.messagesIn.inc({ op: 'rate_limited' });
    if (s.violations.hit(now)) return 'close';
    // Not parsed (a flood costs no parse), but answered with its id when a bounded read finds it for certain: the client can match the refusal.
    const id = isBinary ? undefined : peekRequestId(bytes);
    return id === undefined ? NO_ID : new Refusal(id);
  }
  return bytes;
}

/** Parses and dispatches one admitted frame of `s` (or refuses one over the rate limit, or closes `s`). Never throws. */
function handleFrame(deps: InboundDeps, s: Session, bytes: Buffer | Refusal | 'close', isBinary: boolean): void {
  const { ctx, metrics } = deps;
  if (bytes === 'close') return deps.close(s, 'policy');
  if (bytes instanceof Refusal) return ctx.error(s, rateLimited(s.limits.maxMessagesPerSecond), bytes.id);
  if (isBinary) {
    metrics.messagesIn.inc({ op: 'binary' });
    return ctx.error(s, wireError('bad_request', 'binary frames are not accepted; send JSON text'));
  }
  const parsed = parseClientFrame(bytes.toString('utf8'));
  if (!parsed.ok) {
    metrics.messagesIn.inc({ op: 'invalid' });
    return ctx.error(s, parsed.error, parsed.id);
  }
  metrics.messagesIn.inc({ op: parsed.msg.op });
  try {
    dispatch(ctx, s, parsed.msg);
  } catch (err) {
    deps.logger.error({ err, session: s.id, op: parsed.msg.op }, 'request handler failed');
    ctx.error(s, wireError('internal', 'an unexpected server error occurred'), parsed.msg.id);
  }
}

function dispatch(ctx: HandlerContext, s: Session, msg: ClientMsg): void {
  switch (msg.op) {
    case 'subscribe':
      return onSubscribe(ctx, s, msg);
    case 'unsubscribe':
      return onUnsubscribe(ctx, s, msg);
    case 'get':
      return onGet(ctx, s, msg);
    case 'resync':
      return onResync(ctx, s, msg);
    case 'ping':
      return onPing(ctx, s, msg.id);
  }
}
