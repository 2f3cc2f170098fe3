import { EventEmitter } from 'eventemitter3';
import type { Channel, ChannelState, Market } from '../protocol/constants.js';
import type { ChangeBatch } from '../state/store.js';

/**
 * The bus between the poller/state (publishers) and the gateways (fan-out).
 * In-process by default; a Redis implementation joins several processes.
 */

/** Upstream state of one feed (channel, market), as `status` messages carry it. */
export interface FeedStatus {
  readonly channel: Channel;
  readonly market: Market;
  readonly state: ChannelState;
  /** The poll interval the budget affords now, ms (0 when not polling). */
  readonly intervalMs: number;
  readonly reason?: string;
  /** When the state was entered (ms epoch). */
  readonly ts: number;
  /** While `closed`: when the market next opens (ms epoch). */
  readonly opensAt?: number;
  /** While `closed`: when the feed's data was last refreshed from the upstream (ms epoch), if it holds any. */
  readonly asOf?: number;
}

/** Events a bus delivers to its subscribers. */
export interface BusEvents {
  /** Changes of one feed from one upstream response. */
  batch: (batch: ChangeBatch) => void;
  /** A feed's state changed. */
  status: (status: FeedStatus) => void;
  /**
   * Every batch of one publish has been delivered: consumers that gather
   * batches (the gateway's fan-out, which writes each client once for all
   * of them) write now. Follows every publish that delivered a batch.
   */
  settled: () => void;
}

/** Publish/subscribe of change batches and feed states. */
export interface Bus {
  /** Delivers a batch to every subscriber (every process, for a shared bus). */
  publish(batch: ChangeBatch): void;
  /**
   * Delivers the batches of several feeds polled together (one poll round),
   * in order. Where delivery is in-process, `settled` follows the last of
   * them once, so a client of several feeds is written once for all.
   */
  publishAll(batches: readonly ChangeBatch[]): void;
  /**
   * Whether the batches of one `publishAll` reach subscribers as one
   * delivery (one `settled` after them all). Where they do not, a poller
   * gains nothing by holding one feed's changes for another's.
   */
  readonly mergesRounds: boolean;
  /** Delivers a feed state to every subscriber. */
  publishStatus(status: FeedStatus): void;
  /** Subscribes to an event; returns the function that unsubscribes. */
  subscribe<E extends keyof BusEvents>(event: E, handler: BusEvents[E]): () => void;
  /** Releases resources. */
  close(): Promise<void>;
}

/** The in-process bus: synchronous delivery through eventemitter3. */
export class LocalBus implements Bus {
  private readonly ee = new EventEmitter<BusEvents>();
  /** Delivered in-process: the batches of a `publishAll` are one delivery. */
  readonly mergesRounds = true;

  /** Delivers synchronously to every handler, then `settled`. */
  publish(batch: ChangeBatch): void {
    if (batch.events.length === 0) return;
    this.ee.emit('batch', batch);
    this.ee.emit('settled');
  }

  /** Delivers each non-empty batch synchronously to every handler, then `settled` once. */
  publishAll(batches: readonly ChangeBatch[]): void {
    let any = false;
    for (const b of batches) {
      if (b.events.length === 0) continue;
      this.ee.emit('batch', b);
      any = true;
    }
    if (any) this.ee.emit('settled');
  }

  /** Delivers synchronously to every handler. */
  publishStatus(status: FeedStatus): void {
    this.ee.emit('status', status);
  }

  /** Adds a handler; returns its remover. */
  subscribe<E extends keyof BusEvents>(event: E, handler: BusEvents[E]): () => void {
    this.ee.on(event, handler as never);
    return () => {
      this.ee.off(event, handler as never);
    };
  }

  /** Removes every handler. */
  async close(): Promise<void> {
    this.ee.removeAllListeners();
  }
}
