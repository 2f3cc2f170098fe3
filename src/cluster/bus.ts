import { LocalBus, type Bus, type BusEvents, type FeedStatus } from '../bus/bus.js';
import type { ChangeBatch } from '../state/store.js';

/**
 * The bus of a cluster process. What the poller publishes goes to Redis
 * (through the leader's fenced writer) and nowhere else; subscribers (the
 * gateway, the status board) receive what comes back from Redis, and the
 * local `degraded` states, so every process, the leader included, fans out
 * the same events. A poll round's batches are written by one script that
 * publishes them together, and the batches that arrive together are
 * delivered as one round: a client of both markets is written once a poll,
 * as on one process.
 */

/** Where published batches and states go (the cluster node). */
export interface BusWriter {
  /** Writes the batches of one poll round to the shared state and publishes them together (leader only; dropped otherwise). */
  writeRound(batches: readonly ChangeBatch[]): void;
  /** Writes a feed state and publishes it (leader only; dropped otherwise). */
  writeStatus(status: FeedStatus): void;
}

/** Turns of the event loop a received batch waits at most for the rest of its round. */
const MAX_TURNS = 4;

/** A Bus whose publishers write to Redis and whose subscribers hear Redis. */
export class ClusterBus implements Bus {
  private readonly local = new LocalBus();
  /** A round's batches travel together and are delivered together. */
  readonly mergesRounds = true;
  /** Batches received and not yet delivered. */
  private held: ChangeBatch[] = [];
  /** How many batches were held at the last check, and the checks made since the first was held. */
  private seen = 0;
  private turns = 0;
  /** Whether a check is pending (one at a time, whatever delivered the held batches meanwhile). */
  private checking = false;
  /**
   * Runs after each turn of the event loop while batches are held: once a
   * turn brought no further batch (or after `MAX_TURNS` turns), delivers
   * them. A round's messages come from Redis back to back, but a large
   * one spans several reads, and the first may be handled before the
   * second is read.
   */
  private readonly check = (): void => {
    if (this.held.length > this.seen && this.turns++ < MAX_TURNS) {
      this.seen = this.held.length;
      setImmediate(this.check);
      return;
    }
    this.checking = false;
    this.flush();
  };

  /** A bus writing through `writer`. */
  constructor(private readonly writer: BusWriter) {}

  /** Sends a batch to every process (empty batches are not sent). */
  publish(batch: ChangeBatch): void {
    if (batch.events.length > 0) this.writer.writeRound([batch]);
  }

  /** Sends the batches of one poll round to every process, in one write that publishes them together. */
  publishAll(batches: readonly ChangeBatch[]): void {
    const some = batches.filter((b) => b.events.length > 0);
    if (some.length > 0) this.writer.writeRound(some);
  }

  /** Sends a feed state to every process. */
  publishStatus(status: FeedStatus): void {
    this.writer.writeStatus(status);
  }

  /**
   * Hands a batch received from the backplane to this process's
   * subscribers, with the batches received with it (those of one poll
   * round), in order, once a turn of the event loop brings no more.
   */
  deliver(batch: ChangeBatch): void {
    if (batch.events.length === 0) return;
    this.held.push(batch);
    if (!this.checking) {
      this.checking = true;
      setImmediate(this.check);
    }
  }

  /** Delivers what is held now. */
  private flush(): void {
    const batches = this.held;
    this.held = [];
    this.seen = 0;
    this.turns = 0;
    if (batches.length > 0) this.local.publishAll(batches);
  }

  /** Hands a feed state (received, or this process's `degraded`) to this process's subscribers, after the batches received before it. */
  deliverStatus(status: FeedStatus): void {
    this.flush();
    this.local.publishStatus(status);
  }

  /** Adds a handler of delivered events; returns its remover. */
  subscribe<E extends keyof BusEvents>(event: E, handler: BusEvents[E]): () => void {
    return this.local.subscribe(event, handler);
  }

  /** Delivers what is held, then removes every handler (the node closes the Redis connections). */
  close(): Promise<void> {
    this.flush();
    return this.local.close();
  }
}
