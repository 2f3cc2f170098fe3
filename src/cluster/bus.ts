import { LocalBus, type Bus, type BusEvents, type FeedStatus } from '../bus/bus.js';
import type { ChangeBatch } from '../state/store.js';

/**
 * The bus of a cluster process. What the poller publishes goes to Redis
 * (through the leader's fenced writer) and nowhere else; subscribers (the
 * gateway, the status board) receive what comes back from Redis, and the
 * local `degraded` states, so every process, the leader included, fans out
 * the same events.
 */

/** Where published batches and states go (the cluster node). */
export interface BusWriter {
  /** Writes a batch to the shared state and publishes it (leader only; dropped otherwise). */
  writeBatch(batch: ChangeBatch): void;
  /** Writes a feed state and publishes it (leader only; dropped otherwise). */
  writeStatus(status: FeedStatus): void;
}

/** A Bus whose publishers write to Redis and whose subscribers hear Redis. */
export class ClusterBus implements Bus {
  private readonly local = new LocalBus();
  /** Each batch travels as a Redis message of its own: a round is not one delivery. */
  readonly mergesRounds = false;

  /** A bus writing through `writer`. */
  constructor(private readonly writer: BusWriter) {}

  /** Sends a batch to every process (empty batches are not sent). */
  publish(batch: ChangeBatch): void {
    if (batch.events.length > 0) this.writer.writeBatch(batch);
  }

  /**
   * Sends each batch to every process. They travel one message each, so
   * every process delivers (and its fan-out writes) them one by one.
   */
  publishAll(batches: readonly ChangeBatch[]): void {
    for (const b of batches) this.publish(b);
  }

  /** Sends a feed state to every process. */
  publishStatus(status: FeedStatus): void {
    this.writer.writeStatus(status);
  }

  /** Hands a batch received from the backplane to this process's subscribers. */
  deliver(batch: ChangeBatch): void {
    this.local.publish(batch);
  }

  /** Hands a feed state (received, or this process's `degraded`) to this process's subscribers. */
  deliverStatus(status: FeedStatus): void {
    this.local.publishStatus(status);
  }

  /** Adds a handler of delivered events; returns its remover. */
  subscribe<E extends keyof BusEvents>(event: E, handler: BusEvents[E]): () => void {
    return this.local.subscribe(event, handler);
  }

  /** Removes every handler (the node closes the Redis connections). */
  close(): Promise<void> {
    return this.local.close();
  }
}
