import { WILDCARD } from '../../protocol/constants.js';
import type { ClientMsg, PatchMsg, SnapshotMsg } from '../../protocol/wire.js';
import { KrxError } from '../errors.js';
import { Subscriptions, type SubscribePlan } from '../subscriptions.js';
import { TopicTable, type Change, type LocalRow, type ResyncReason, type TopicTableOptions } from './state.js';

/**
 * The streamed side of the client: subscriptions, local rows, and the resync
 * of a single topic that went out of step (a gap, operations that do not
 * apply, a checksum mismatch), with its retry. It sends through, and
 * reports to, a narrow host. See docs/PROTOCOL.md §3 and §8 (resync).
 */

/** What the stream needs of its client. */
export interface StreamHost {
  /** Whether the connection is welcomed (messages can go out). */
  isLive(): boolean;
  /** A fresh request id. */
  nextId(): number;
  /** Queues a message for the server. */
  send(msg: ClientMsg): void;
  /** A row changed: tell the listeners. */
  deliver(row: LocalRow, change: Change): void;
  /** A topic went out of step and a snapshot was asked for. */
  resyncing(topic: string, reason: ResyncReason): void;
  /** Something went wrong that no promise reports. */
  error(e: KrxError): void;
  /** Runs `fn` after a pause, if the connection is still live then. */
  retryLater(fn: () => void): void;
}

/** Subscriptions and local topic state of one client. */
export class TopicStream {
  /** Local rows of every topic. */
  readonly table: TopicTable;
  /** What the application subscribed, restored after each reconnect. */
  readonly subs = new Subscriptions();
  /** Outstanding resyncs: topic to request id. */
  private readonly resyncs = new Map<string, number>();

  /** A stream with no subscriptions. */
  constructor(
    private readonly host: StreamHost,
    opts: TopicTableOptions = {},
  ) {
    this.table = new TopicTable(opts);
  }

  /** Applies a snapshot (for a subscribed topic) and delivers it. */
  snapshot(msg: SnapshotMsg): void {
    const parts = this.table.parts(msg.topic);
    if (parts === undefined) return this.host.error(new KrxError('protocol', `snapshot of an invalid topic ${msg.topic}`));
    // Late data of a topic unsubscribed meanwhile.
    if (!this.subs.covers(parts)) return;
    this.resyncs.delete(msg.topic);
    const out = this.table.snapshot(msg)!;
    if (!out.crcOk) {
      this.host.error(new KrxError('protocol', `snapshot of ${msg.topic} does not match its checksum`, { topic: msg.topic }));
    }
    this.host.deliver(out.row, out.change);
  }

  /** Applies a patch and delivers it, or resyncs its topic. */
  patch(msg: PatchMsg): void {
    const parts = this.table.parts(msg.topic);
    if (parts === undefined) return this.host.error(new KrxError('protocol', `patch of an invalid topic ${msg.topic}`));
    if (!this.subs.covers(parts)) return;
    const out = this.table.patch(msg)!;
    if (out.kind === 'applied') this.host.deliver(out.row, out.change);
    else if (out.kind === 'resync') {
      this.host.resyncing(msg.topic, out.reason);
      this.sendResync(msg.topic);
    }
  }

  /**
   * Handles an `error` answering a resync (by request id, else by topic);
   * false when it is about something else. A passing error is retried
   * later; otherwise the topic is dropped and the error reported.
   */
  resyncError(msg: { id?: unknown; topic?: unknown }, e: KrxError): boolean {
    const topic = this.resyncTopic(msg.id) ?? (typeof msg.topic === 'string' && this.resyncs.has(msg.topic) ? msg.topic : undefined);
    if (topic === undefined) return false;
    this.resyncs.delete(topic);
    if (e.retryable) this.host.retryLater(() => this.sendResync(topic));
    else {
      this.table.delete(topic);
      this.host.error(e);
    }
    return true;
  }

  /** The `subscribe` message of a plan, with `since` and `epoch` for the topics held. */
  subscribeMsg(plan: SubscribePlan, id: number, epoch: string | undefined): ClientMsg {
    const wild = plan.codes.includes(WILDCARD);
    const codes = new Set(plan.codes);
    const since = this.table.since((p) => p.channel === plan.channel && p.market === plan.market && (wild || codes.has(p.code)));
    const msg: ClientMsg = { op: 'subscribe', id, channel: plan.channel, market: plan.market, codes: [...plan.codes] };
    if (epoch !== undefined && Object.keys(since).length > 0) {
      msg.since = since;
      msg.epoch = epoch;
    }
    return msg;
  }

  /** Drops held topics of a feed that no subscription covers any more. */
  prune(channel: string, market: string): void {
    const gone = this.table.deleteWhere((p) => p.channel === channel && p.market === market && !this.subs.covers(p));
    for (const t of gone) this.resyncs.delete(t);
  }

  /**
   * The connection is gone: outstanding resyncs went with it. Their topics
   * stay out of `since`, so the restore's subscribe brings their snapshots.
   */
  disconnected(): void {
    this.resyncs.clear();
  }

  /** The server's epoch changed: every held seq is void until the server's snapshot arrives. */
  epochChanged(): void {
    for (const t of this.table.topics()) this.table.markResync(t);
  }

  private sendResync(topic: string): void {
    // Not welcomed: the restore's subscribe leaves the topic out of `since`, so a snapshot comes anyway.
    if (!this.host.isLive() || this.resyncs.has(topic) || !this.table.isResyncing(topic)) return;
    const id = this.host.nextId();
    this.resyncs.set(topic, id);
    this.host.send({ op: 'resync', id, topic });
  }

  private resyncTopic(id: unknown): string | undefined {
    if (typeof id !== 'number') return undefined;
    for (const [t, i] of this.resyncs) if (i === id) return t;
    return undefined;
  }
}
