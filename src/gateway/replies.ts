import type { Session } from './session.js';

/**
 * The queue of `get` replies: replies are written a few at a time, up to
 * `bytesPerTurn` per turn of the event loop, so a burst of cache hits (a
 * hundred whole-market lists asked at once by many connections) is spread
 * over turns instead of copying hundreds of megabytes into sockets in one,
 * and health checks, patches and other clients go on being served between
 * them. A queued reply holds references to the answer's shared bytes, never
 * a copy. See docs/OPERATIONS.md §Slow consumers.
 */

interface Queued {
  readonly session: Session;
  readonly parts: readonly Buffer[];
  readonly bytes: number;
  /** Called when the reply was not written (the connection holds too much), so the client gets a refusal. */
  readonly refused: () => void;
  readonly written: () => void;
}

/** Most replies written or refused in one turn. */
const ITEMS_PER_TURN = 128;

/** Replies waiting to be written, fairly across turns. */
export class ReplyQueue {
  private readonly queue: Queued[] = [];
  private head = 0;
  private scheduled = false;

  /** A queue writing at most `bytesPerTurn` (default 1 MiB, at least one reply) per turn. */
  constructor(private readonly bytesPerTurn = 1 << 20) {}

  /** Replies waiting. */
  get size(): number {
    return this.queue.length - this.head;
  }

  /** Queues a reply of `session`; `written` or `refused` is called once it is dealt with. */
  push(session: Session, parts: readonly Buffer[], written: () => void, refused: () => void): void {
    let bytes = 0;
    for (const p of parts) bytes += p.length;
    session.queuedReplyBytes += bytes;
    this.queue.push({ session, parts, bytes, refused, written });
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.turn);
    }
  }

  private readonly turn = (): void => {
    this.scheduled = false;
    let spent = 0;
    let handled = 0;
    // Refusals cost a little too (an error frame each): at most ITEMS_PER_TURN replies are dealt with per turn.
    while (this.head < this.queue.length && spent < this.bytesPerTurn && handled++ < ITEMS_PER_TURN) {
      const r = this.queue[this.head++]!;
      r.session.queuedReplyBytes -= r.bytes;
      if (r.session.closing) continue;
      if (r.session.sendReply(r.parts)) {
        spent += r.bytes;
        r.written();
      } else if (!r.session.closing) r.refused();
    }
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
    if (this.head < this.queue.length) {
      this.scheduled = true;
      setImmediate(this.turn);
    } else {
      this.queue.length = 0;
      this.head = 0;
    }
  };
}
