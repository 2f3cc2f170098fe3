import type { FeedStatus } from '../bus/bus.js';
import type { Metrics } from '../metrics/metrics.js';
import type { Logger } from '../log.js';
import type { ChangeBatch } from '../state/store.js';
import { frameBytes } from '../state/change.js';
import { feedOf } from '../protocol/topics.js';
import { statusFrame } from '../protocol/encode.js';
import type { ChangeClock } from './clock.js';
import type { SubscriptionIndex } from './index.js';
import type { FlushTally, Session } from './session.js';

/**
 * Fan-out of change batches and feed states to sessions: each event's
 * frame is encoded once and appended to every recipient's pending list;
 * when the bus says the batches of a publish are all delivered
 * (`settled`), each touched session is flushed once for all of them (one
 * WebSocket frame, or a few for a large share). The batches of one
 * publish are one tick of the change clock, which records the topics they
 * changed: what a connection that fell behind is owed. See DESIGN.md §4.
 */

/** Delivers bus events to the sessions of a subscription index. */
export class Fanout {
  // Reused across ticks so a tick allocates no list of its own.
  private readonly touched: Session[] = [];
  private readonly tally: FlushTally = { frames: 0, bytes: 0 };
  /** Whether a tick is open: batches were delivered and `settled` has not come yet. */
  private open = false;
  private patches = 0;
  private snapshots = 0;

  /** A fan-out over `index`, counting into `metrics` and recording changes on `clock`. */
  constructor(
    private readonly index: SubscriptionIndex<Session>,
    private readonly clock: ChangeClock,
    private readonly metrics: Metrics,
    private readonly logger: Logger,
  ) {}

  /**
   * Queues one batch: every event to its topic's direct subscribers and
   * the feed's wildcard subscribers. The first batch after a flush opens
   * the next tick; `settled` writes them.
   */
  batch(batch: ChangeBatch): void {
    const touched = this.touched;
    if (!this.open) {
      this.clock.begin();
      this.open = true;
    }
    try {
      const wild = this.index.wildcard(feedOf(batch.channel, batch.market));
      const events = batch.events;
      for (let i = 0; i < events.length; i++) {
        const ev = events[i]!;
        const direct = this.index.direct(ev.topic);
        if (wild === undefined && direct === undefined) continue;
        this.clock.changed(ev.topic);
        // One Buffer per event, shared by every recipient (events from the store encode it once).
        const frame = frameBytes(ev);
        let n = 0;
        if (wild !== undefined) {
          for (let j = 0; j < wild.length; j++) {
            const s = wild[j]!;
            if (s.ahead !== undefined && s.alreadyHas(ev.topic, ev.seq, ev.kind)) continue;
            if (s.push(frame, touched)) n++;
          }
        }
        if (direct !== undefined) {
          for (let j = 0; j < direct.length; j++) {
            const s = direct[j]!;
            if (s.ahead !== undefined && s.alreadyHas(ev.topic, ev.seq, ev.kind)) continue;
            if (s.push(frame, touched)) n++;
          }
        }
        if (ev.kind === 'patch') this.patches += n;
        else this.snapshots += n;
      }
    } catch (err) {
      this.logger.error({ err }, 'fan-out of a batch failed');
    }
  }

  /** Ends the tick: flushes every touched session once, for every batch since the last flush. */
  settled(): void {
    this.open = false;
    const patches = this.patches;
    const snapshots = this.snapshots;
    this.patches = 0;
    this.snapshots = 0;
    this.flushTouched(patches, snapshots);
  }

  private flushTouched(patches: number, snapshots: number): void {
    const touched = this.touched;
    const tally = this.tally;
    tally.frames = 0;
    tally.bytes = 0;
    for (let i = 0; i < touched.length; i++) {
      try {
        touched[i]!.flush(tally);
      } catch (err) {
        this.logger.error({ err }, 'flush to a client failed');
      }
    }
    touched.length = 0;
    if (tally.frames > 0) {
      this.metrics.framesOut.inc(tally.frames);
      this.metrics.bytesOut.inc(tally.bytes);
    }
    if (patches > 0) this.metrics.messagesOut.inc({ type: 'patch' }, patches);
    if (snapshots > 0) this.metrics.messagesOut.inc({ type: 'snapshot' }, snapshots);
  }

  /** Sends a feed's new state to every session subscribed to that feed (explicitly or by wildcard), after the changes queued before it. */
  status(st: FeedStatus): void {
    if (this.open) this.settled();
    let frame: string | undefined;
    let n = 0;
    for (const s of this.index.subscribersOf(feedOf(st.channel, st.market))) {
      frame ??= statusFrame(st);
      s.sendNow(frame);
      n++;
    }
    if (n > 0) this.metrics.messagesOut.inc({ type: 'status' }, n);
  }
}
