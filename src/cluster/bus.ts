import { LocalBus, type Bus, type BusEvents, type FeedStatus } from '../bus/bus.js';
import type { ChangeBatch } from '../state/store.js';

/**
 * The bus of a cluster process. What the poller publishes goes to Redis
 * (through the leader's fenced writer) and nowhere else; subscribers (the
 * gateway, the status board) receive what comes back from Redis, and the
 * local `degraded` states, so every process, the leader included, fans out
 * the same events.
 *
 * A poll round's batches are written by one script that announces how
 * many batch messages the round has, then publishes them. The messages a
 * process receives wait in its inbox (`receive`), in the order they came,
 * until the announced round's last batch has come, and are then handled
 * in one go: the batches they deliver reach subscribers as one round, so
 * a client of both markets is written once a poll, as on one process.
 * Messages no round announced (from a leader of an earlier version) wait
 * until a turn of the event loop brings no more. A batch is applied to the
 * store and delivered in the same turn: the store never holds a change its
 * subscribers have not been sent, so a client that subscribes or resumes
 * meanwhile gets its state without a duplicate.
 */

/** Where published batches and states go (the cluster node). */
export interface BusWriter {
  /** Writes the batches of one poll round to the shared state and publishes them together (leader only; dropped otherwise). */
  writeRound(batches: readonly ChangeBatch[]): void;
  /** Writes a feed state and publishes it (leader only; dropped otherwise). */
  writeStatus(status: FeedStatus): void;
}

/** Turns of the event loop a message no round announced waits at most for more. */
const MAX_TURNS = 4;

/** Longest an announced round waits for its last batch message, ms (they come in one write; this is a guard). */
const ROUND_WAIT_MS = 250;

/** A Bus whose publishers write to Redis and whose subscribers hear Redis. */
export class ClusterBus implements Bus {
  private readonly local = new LocalBus();
  /** A round's batches travel together and are delivered together. */
  readonly mergesRounds = true;
  /** Handlers of received messages not yet run, in the order the messages came. */
  private inbox: (() => void)[] = [];
  /** How many messages were waiting at the last check, and the checks made since the first came. */
  private seen = 0;
  private turns = 0;
  /** Whether a check is pending (one at a time). */
  private checking = false;
  /** While the inbox's handlers run: the batches they delivered, sent together when they are done. */
  private round: ChangeBatch[] | undefined;
  /** Batch messages of the announced round still to come, and the guard that stops waiting for them. */
  private expected = 0;
  private guard: NodeJS.Timeout | undefined;
  /**
   * Runs after each turn of the event loop while messages wait: once a
   * turn brought no further message (or after `MAX_TURNS` turns), handles
   * them. A round's messages come from Redis back to back, but a large one
   * spans several reads, and the first may be read before the second.
   */
  private readonly check = (): void => {
    // An announced round is handled when its last batch comes (or its guard fires).
    if (this.expected > 0) return void (this.checking = false);
    if (this.inbox.length > this.seen && this.turns++ < MAX_TURNS) {
      this.seen = this.inbox.length;
      setImmediate(this.check);
      return;
    }
    this.checking = false;
    this.run();
  };

  /** A bus writing through `writer`; a message handler that throws is reported to `onError`. */
  constructor(
    private readonly writer: BusWriter,
    private readonly onError: (err: unknown) => void = () => undefined,
  ) {}

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
   * The next `batches` batch messages are one poll round: what is
   * received is handled once the last of them has come.
   */
  announce(batches: number): void {
    this.expected = batches;
    clearTimeout(this.guard);
    this.guard = setTimeout(() => this.handleReceived(), ROUND_WAIT_MS);
    this.guard.unref?.();
  }

  /**
   * Takes a message received from the backplane (`batch`: a feed's batch
   * message): `handle`, which applies it and delivers what it brings, runs
   * after the handlers of the messages before it, once the announced
   * round is complete, or, when none was announced, once a turn of the
   * event loop brings no more messages.
   */
  receive(handle: () => void, batch = false): void {
    this.inbox.push(handle);
    if (this.expected > 0) {
      if (batch && --this.expected === 0) this.handleReceived();
      return;
    }
    if (!this.checking) {
      this.checking = true;
      setImmediate(this.check);
    }
  }

  /** Handles every message received so far now (the round is complete, its guard fired, or the backplane went down). */
  handleReceived(): void {
    this.expected = 0;
    clearTimeout(this.guard);
    this.guard = undefined;
    this.run();
  }

  /**
   * Hands a batch (applied to the store just now) to this process's
   * subscribers: with the other batches of the messages being handled, or
   * at once when it comes from elsewhere (a resync).
   */
  deliver(batch: ChangeBatch): void {
    if (batch.events.length === 0) return;
    if (this.round !== undefined) this.round.push(batch);
    else this.local.publish(batch);
  }

  /**
   * Hands a feed state (received, or this process's own `degraded`) to
   * this process's subscribers, after the batches received before it.
   */
  deliverStatus(status: FeedStatus): void {
    if (this.round !== undefined) this.sendRound();
    else if (this.inbox.length > 0) this.handleReceived();
    this.local.publishStatus(status);
  }

  /** Adds a handler of delivered events; returns its remover. */
  subscribe<E extends keyof BusEvents>(event: E, handler: BusEvents[E]): () => void {
    return this.local.subscribe(event, handler);
  }

  /** Handles the messages received, then removes every handler (the node closes the Redis connections). */
  close(): Promise<void> {
    this.handleReceived();
    return this.local.close();
  }

  /** Runs the waiting messages' handlers, and delivers the batches they bring as one round. */
  private run(): void {
    // Handling already (a handler ended a round): the loop below takes what came meanwhile.
    if (this.round !== undefined) return;
    this.seen = 0;
    this.turns = 0;
    this.round = [];
    try {
      while (this.inbox.length > 0) {
        const inbox = this.inbox;
        this.inbox = [];
        for (const handle of inbox) {
          try {
            handle();
          } catch (err) {
            this.onError(err);
          }
        }
      }
    } finally {
      this.sendRound();
      this.round = undefined;
    }
  }

  /** Delivers the batches of the round under way so far. */
  private sendRound(): void {
    const r = this.round;
    if (r === undefined || r.length === 0) return;
    this.round = [];
    this.local.publishAll(r);
  }
}
