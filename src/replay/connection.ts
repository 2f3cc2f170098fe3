import type { RawData, WebSocket } from 'ws';
import type { Logger } from '../log.js';
import type { Channel, Limits, Market } from '../protocol/constants.js';
import { CLOSE_CODES, type CloseName } from '../protocol/errors.js';
import type { SubscribeMsg, UnsubscribeMsg } from '../protocol/messages.js';
import { wireError, type WireError } from '../protocol/errors.js';
import { type RequestId } from '../protocol/messages.js';
import { TokenBucket, WindowCounter, messageBucket } from '../access/limits.js';
import { checkFeed, parseClientFrame, peekRequestId, rateLimited, resolveTarget, wildcardTopic, type Target } from '../gateway/requests.js';
import type { SymbolLookup } from '../gateway/handlers.js';
import { heartbeatCheck, type SlowPolicy } from '../gateway/slow.js';
import { STOCK_CODE } from '../protocol/topics.js';
import type { RecordedCodes } from './codes.js';
import { encode, errorFrame, statusFrame, welcomeFrame } from '../protocol/encode.js';
import { ReplayOutbox } from './outbox.js';
import { ReplayState } from './state.js';
import { kstMs, type RecordLine } from '../recorder/format.js';
import { readDayLines, type Damage } from '../recorder/reader.js';
import type { ReplayQuery } from './query.js';
import type { Turns } from './turns.js';

/**
 * One replay connection: reads the recording from the segment `from` falls
 * in (the state then), and plays it to its subscriptions at the replay's
 * speed. Limits are those of a live connection with the same token: topics
 * and wildcards per connection, the message rate (a flood closes 1008), and
 * the slow-consumer policy (outbox.ts); at speed `max` the replay instead
 * goes as fast as the client reads, and one that reads nothing for
 * `maxBehindMs` is closed with 4008. See docs/REPLAY.md.
 */

/** What a replay connection needs of its server. */
export interface ConnectionOptions {
  /** The recordings directory. */
  readonly dir: string;
  readonly logger: Logger;
  readonly heartbeatMs: number;
  /** `krx-bridge/<version>`. */
  readonly server: string;
  /** The slow-consumer thresholds of live connections. */
  readonly slow: SlowPolicy;
  /** Close with 1008 past this many times the message rate within one second (as live). */
  readonly floodFactor: number;
  readonly onDamage?: (d: Damage) => void;
  /** A close the server made, by code. */
  readonly onClose?: (code: number) => void;
  /** A slow-consumer step (krx_slow_consumer_total). */
  readonly onSlow?: (step: 'conflate' | 'drain' | 'close') => void;
  /**
   * Monotonic clock, ms: every elapsed time of the replay (heartbeats, the
   * message rate, time behind, the pace of play), as on `/ws`; the wall
   * clock is only for times of day (`welcome.ts`, where a window into the
   * present ends).
   */
  readonly monotonic: () => number;
  /** The codes each day's recording holds (a subscribe's codes are checked against them and the bridge's listing). */
  readonly recorded: RecordedCodes;
  /** The turns to read a recording up to a replay's start, shared by the server's replays (turns.ts). */
  readonly prerolls: Turns;
  /** A replay that holds no subscription and has asked for none this long is closed (1000 `replay idle`), ms. */
  readonly idleMs: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A client frame's bytes (ws hands a text frame over as one Buffer unless told otherwise). */
function bytesOf(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  return Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
}

/** The reason of the `stale` status a replay gives each feed where the recording stops (the bridge stopped, crashed, or in a cluster no longer polled). */
export const NOT_RECORDED = 'not recorded: the bridge was not recording';

/** The `ts` of a recorded status frame; undefined when the frame is not JSON with a numeric `ts` (a recording's status is kept as text). */
function statusTs(frame: string): number | undefined {
  try {
    const ts = (JSON.parse(frame) as { ts?: unknown } | null)?.ts;
    return typeof ts === 'number' ? ts : undefined;
  } catch {
    return undefined;
  }
}

/** One replay connection. */
export class ReplayConnection {
  private readonly state = new ReplayState();
  private readonly outbox: ReplayOutbox;
  private readonly inbound: TokenBucket;
  private readonly flood: WindowCounter;
  private readonly violations: WindowCounter;
  private readonly ready: Promise<void>;
  private markReady!: () => void;
  private readonly subscribed: Promise<void>;
  private markSubscribed!: () => void;
  private ended = false;
  /** When the replay was opened (wall clock, ms epoch): the end of what it plays (a window into the present is the recording up to then). */
  private readonly openedAt = Date.now();
  /** When the peer was last heard from, on the monotonic clock. */
  private lastSeen: number;
  private readonly beat: NodeJS.Timeout;
  /** The client frames being answered, one after the other (a subscribe may wait for the recording's codes). */
  private turns: Promise<void> = Promise.resolve();
  /** Subscribes received and not yet answered (a subscribe waits for the state at `from`). */
  private subscribing = 0;
  /** Runs while the replay holds no subscription and has none asked for: it closes the replay (`idleMs`). */
  private idleTimer: NodeJS.Timeout | undefined;

  /**
   * Plays `q` to `ws` (call `run`), within `limits`; a subscribe's stock
   * codes must be `listed` (the bridge's listing, as on `/ws`) or held by
   * the day's recording.
   */
  constructor(
    private readonly ws: WebSocket,
    private readonly q: ReplayQuery,
    private readonly limits: Limits,
    private readonly listed: SymbolLookup,
    private readonly opts: ConnectionOptions,
    onGone: () => void,
  ) {
    this.state.clock = kstMs(q.date, q.from);
    this.ready = new Promise((r) => (this.markReady = r));
    this.subscribed = new Promise((r) => (this.markSubscribed = r));
    const now = opts.monotonic();
    this.lastSeen = now;
    this.inbound = messageBucket(limits.maxMessagesPerSecond, now);
    this.flood = new WindowCounter(Math.ceil(limits.maxMessagesPerSecond * opts.floodFactor), 1000);
    this.violations = new WindowCounter(Math.ceil(limits.maxMessagesPerSecond * 5), 10_000);
    this.outbox = new ReplayOutbox(ws, opts.slow, q.speed === 'max', {
      now: opts.monotonic,
      snapshots: (topics) => this.state.snapshots(topics),
      closeSlow: () => {
        opts.onSlow?.('close');
        this.stop('slowConsumer');
      },
      step: (step) => opts.onSlow?.(step),
    });
    ws.on('message', (data, isBinary) => this.onMessage(data, isBinary));
    ws.on('pong', () => (this.lastSeen = opts.monotonic()));
    ws.on('close', () => {
      this.ended = true;
      clearTimeout(this.idleTimer);
      this.outbox.stop();
      this.markSubscribed();
      clearInterval(this.beat);
      onGone();
    });
    ws.on('error', () => undefined);
    this.beat = setInterval(() => {
      // Held by the slow-consumer rules: behind, or waited for by a replay at `max`.
      const held = this.outbox.behind || this.ws.bufferedAmount > opts.slow.conflateBytes;
      const seen = heartbeatCheck(opts.monotonic(), this.lastSeen, opts.heartbeatMs, held);
      if (seen === undefined) return this.stop('heartbeatTimeout');
      this.lastSeen = seen;
      this.ws.ping();
    }, opts.heartbeatMs);
    this.beat.unref();
    this.outbox.send(
      welcomeFrame(opts.server, `replay-${q.date}`, opts.heartbeatMs, limits, Date.now(), { date: q.date, from: q.from, to: q.to, speed: q.speed }),
    );
    this.checkIdle();
  }

  /**
   * Starts the idle timer when the replay holds no subscription and no
   * subscribe waits for its answer; stops it otherwise. A replay left
   * so for `idleMs` is closed: it would hold its day's state and a replay
   * slot for nobody.
   */
  private checkIdle(): void {
    const idle = this.subscribing === 0 && this.state.topics.size === 0 && this.state.wildcards.size === 0;
    if (!idle || this.ended) {
      clearTimeout(this.idleTimer);
      this.idleTimer = undefined;
    } else if (this.idleTimer === undefined) {
      this.idleTimer = setTimeout(() => this.stop('replayIdle'), this.opts.idleMs);
      this.idleTimer.unref();
    }
  }

  /** Ends the replay with a server close code (a heartbeat timeout is cut without a handshake, as on /ws). */
  stop(name: CloseName, reason?: string): void {
    if (this.ended) return;
    this.ended = true;
    clearTimeout(this.idleTimer);
    this.outbox.stop();
    const c = CLOSE_CODES[name];
    this.opts.onClose?.(c.code);
    if (name === 'heartbeatTimeout') this.ws.terminate();
    else this.ws.close(c.code, reason ?? c.reason);
  }

  /** Reads the recording up to `from` (the state then), then plays it until `to` or its end. */
  async run(): Promise<void> {
    try {
      await this.play();
      this.markReady();
      this.outbox.flush();
      await this.finish();
    } catch (err) {
      this.opts.logger.error({ err: (err as Error).message }, 'replay failed');
      this.markReady();
      this.stop('internal');
    }
  }

  private async play(): Promise<void> {
    // Reading up to `from` is this replay's turn among the server's (turns.ts), given back once it plays or ends.
    const giveBack = await this.opts.prerolls.take();
    // Closed while it waited: the turn passes on without the recording being listed or opened.
    if (this.ended) return giveBack();
    try {
      await this.playFrom(giveBack);
    } finally {
      giveBack();
    }
  }

  private async playFrom(giveBack: () => void): Promise<void> {
    const from = kstMs(this.q.date, this.q.from);
    // A window that runs past the moment the replay was opened ends there: the reader takes each segment as it stands
    // when it gets to it, and what the recorder writes after that would be skipped while the clock went on.
    const to = Math.min(kstMs(this.q.date, this.q.to), this.openedAt);
    const st = this.state;
    let playing = false;
    let playStart = 0;
    let moment = -1;
    // Where the clock starts: `from`, or the recording's first moment when the recording starts after `from` (the
    // reader begins at the segment holding `from`, so `before` is false only then): hours before the first record are
    // not recorded quiet, and are not waited through.
    let start = from;
    let before = false;
    // The first moment after a keyframe: the keyframe holds its changes already (they triggered it).
    let keyMoment: number | undefined;
    // The last recorded moment read, and whether a stop line said the recording stopped after it.
    let last: number | undefined;
    let stopped = false;
    // Play begins: the reading's turn goes back, subscribes are answered, and the clock starts with the first of them (nothing plays to nobody).
    const begin = async (): Promise<boolean> => {
      playing = true;
      giveBack();
      this.markReady();
      await this.subscribed;
      if (this.ended) return false;
      playStart = this.opts.monotonic();
      return true;
    };
    // A window in which nothing was recorded (a quiet stretch, or inside a gap) still plays: the state at `from`, then its time to `to`.
    const quiet = async (end: number): Promise<boolean> => {
      if (playing) return true;
      if (!(await begin())) return false;
      this.outbox.flush();
      await this.pace(playStart, start, end);
      return !this.ended;
    };
    for await (const { line, message } of readDayLines(this.opts.dir, this.q.date, this.q.from, this.opts.onDamage)) {
      if (this.ended) return;
      // A process starts recording again without a stop line before it (a crash): nothing was recorded after the last moment read.
      if (line.k === 'K' && line.start === true && !stopped && last !== undefined) this.gap(last, playing);
      if (line.k === 'r' && st.keyframe(line, playing) && st.receives(line.topic)) this.outbox.update(line.topic, st.snapshotOf(line.topic)!);
      if (line.k === 'S') {
        const had = st.statuses.get(line.feed);
        st.statuses.set(line.feed, line.f);
        // A keyframe's status is news only where it differs (a process started again, or the replay starts at its keyframe).
        if (playing && had !== line.f && st.wantsFeed(line.feed)) this.outbox.send(line.f);
      }
      // A keyframe is timed too: what it holds is the state at its moment, not before.
      if (line.k !== 'c' && line.k !== 's' && line.k !== 'X' && line.k !== 'K') continue;
      if (line.t >= to) {
        this.settle();
        if (!(await quiet(to))) return;
        st.clock = to;
        return;
      }
      if (line.k !== 'K') {
        if (st.keyframePending && keyMoment !== undefined && line.t !== keyMoment) this.settle();
        keyMoment ??= line.t;
      }
      if (line.t < from) before = true;
      if (!playing && line.t >= from) {
        if (!before) start = st.clock = line.t;
        if (!(await begin())) return;
      }
      if (playing && line.t !== moment) {
        // The changes of one recorded moment go out together, as live clients got them in one tick.
        this.outbox.flush();
        await this.pace(playStart, start, line.t);
        if (this.ended) return;
        moment = line.t;
        st.clock = line.t;
      }
      if (line.k === 'K') {
        keyMoment = undefined;
        if (line.start === true) st.restart();
        stopped = false;
        continue;
      }
      last = line.t;
      if (line.k === 'X') stopped = true;
      this.playLine(line, playing, message);
    }
    this.settle();
    // The recording ends before `to`: the replay ends with it, its clock at `to` (never later than when it was opened);
    // a window after its last moment gets the state at its end.
    if (!(await quiet(start))) return;
    st.clock = Math.max(st.clock, to);
  }

  /** Applies a recorded change, status or stop, and sends it to the subscribers once playing. */
  private playLine(line: Extract<RecordLine, { k: 'c' | 's' | 'X' }>, playing: boolean, message: Readonly<Record<string, unknown>> | undefined): void {
    const st = this.state;
    if (line.k === 'X') return this.gap(line.t, playing);
    if (line.k === 'c') {
      // A change the state holds already (in a keyframe), or past a gap (damage), is not played.
      if (st.apply(line.topic, line.seq, line.f, message) && playing && st.receives(line.topic)) this.outbox.update(line.topic, line.f);
      return;
    }
    // The status a keyframe just gave (a process records its first status there and as a line of its own) is not sent twice.
    if (st.statuses.get(line.feed) === line.f) return;
    st.statuses.set(line.feed, line.f);
    if (playing && st.wantsFeed(line.feed)) this.outbox.send(line.f);
  }

  /**
   * The recording stops at `t` (a stop line, or the last moment before a
   * restart without one): every feed with a recorded status is `stale` from
   * then (`NOT_RECORDED`), as sent to its subscribers and to those who
   * subscribe before its next recorded status. Never from before the
   * status it follows: a status's `ts` is when its state began, on the
   * poller's clock, and can be a few ms past the last recorded moment.
   */
  private gap(t: number, playing: boolean): void {
    const st = this.state;
    for (const [feed, had] of st.statuses) {
      const [channel, market] = feed.split('.') as [Channel, Market];
      const since = statusTs(had);
      const ts = since !== undefined && since > t ? since : t;
      const frame = statusFrame({ market, channel, state: 'stale', intervalMs: 0, reason: NOT_RECORDED, ts });
      st.statuses.set(feed, frame);
      if (playing && st.wantsFeed(feed)) this.outbox.send(frame);
    }
  }

  /** A keyframe read while playing that differs from what its changes made (a restart, or a damaged stretch skipped): its topics' snapshots. */
  private settle(): void {
    for (const topic of this.state.settleKeyframe()) if (this.state.receives(topic)) this.outbox.update(topic, this.state.snapshotOf(topic)!);
  }

  /**
   * Waits until the recorded moment `t` is due at the replay's speed
   * (`playStart`: when play began, on the monotonic clock); at `max`, until
   * the client has read what it was sent.
   */
  private async pace(playStart: number, from: number, t: number): Promise<void> {
    const now = this.opts.monotonic;
    if (this.q.speed !== 'max') {
      const wait = playStart + (t - from) / this.q.speed - now();
      if (wait > 0) await sleep(wait);
      return;
    }
    const since = now();
    while (!this.ended && this.ws.bufferedAmount > this.opts.slow.conflateBytes) {
      if (now() - since > this.opts.slow.maxBehindMs) {
        this.opts.onSlow?.('close');
        return this.stop('slowConsumer');
      }
      await sleep(20);
    }
  }

  /** Every subscribed feed gets `status` `closed` (`replay ended`); once the client has read it, close 1000. */
  private async finish(): Promise<void> {
    // A client behind catches up first (its fresh snapshots), or is closed by the policy: the end comes last.
    while (!this.ended && this.outbox.behind) await sleep(20);
    for (const feed of this.state.subscribedFeeds()) {
      const [channel, market] = feed.split('.') as [Channel, Market];
      this.outbox.send(statusFrame({ market, channel, state: 'closed', intervalMs: 0, reason: 'replay ended', ts: this.state.clock }));
    }
    const now = this.opts.monotonic;
    const since = now();
    while (!this.ended && this.ws.bufferedAmount > 0 && now() - since < this.opts.slow.maxBehindMs) await sleep(10);
    this.stop('normal', 'replay ended');
  }

  private onMessage(data: RawData, isBinary: boolean): void {
    const now = this.opts.monotonic();
    this.lastSeen = now;
    if (this.ended) return;
    // The inbound limits of live connections (src/gateway/inbound.ts): a flood closes 1008, a faster sender is refused
    // (unparsed, with its id when a bounded read finds it for certain).
    if (this.flood.hit(now)) return this.stop('policy');
    if (!this.inbound.take(now)) {
      if (this.violations.hit(now)) return this.stop('policy');
      return this.error(rateLimited(this.limits.maxMessagesPerSecond), isBinary ? undefined : peekRequestId(bytesOf(data)));
    }
    if (isBinary) return this.error(wireError('bad_request', 'binary frames are not accepted; send JSON text'));
    const parsed = parseClientFrame(bytesOf(data).toString('utf8'));
    // Only a subscribe asks for something to play: pings and the rest keep the socket alive, not the replay.
    const subscribe = parsed.ok && parsed.msg.op === 'subscribe';
    if (subscribe) {
      this.subscribing++;
      this.checkIdle();
    }
    this.turns = this.turns
      .then(() => this.answer(parsed))
      .catch((err: unknown) => {
        this.opts.logger.error({ err: (err as Error).message }, 'replay request failed');
        this.error(wireError('internal', 'an unexpected server error occurred'));
      })
      .finally(() => {
        // An unsubscribe may have left nothing held; a running timer is never put back by this.
        if (subscribe) this.subscribing--;
        this.checkIdle();
      });
  }

  /** Answers one client frame, after the answers to the frames before it. */
  private async answer(parsed: ReturnType<typeof parseClientFrame>): Promise<void> {
    // Answers wait for the state at `from`: a subscribe gets the snapshots as they stood then.
    await this.ready;
    if (this.ended) return;
    if (!parsed.ok) return this.error(parsed.error, parsed.id);
    const m = parsed.msg;
    const st = this.state;
    if (m.op === 'ping') return this.outbox.send(encode({ type: 'pong', id: m.id, ts: st.clock }));
    if (m.op === 'get') return this.error(wireError('bad_request', 'lookups are not available in a replay'), m.id);
    if (m.op === 'resync') {
      const snap = st.receives(m.topic) ? st.snapshotOf(m.topic) : undefined;
      return snap ? this.outbox.send(snap) : this.error(wireError('not_subscribed', 'the topic is not subscribed on this connection', m.topic), m.id);
    }
    if (m.op === 'unsubscribe') return this.unsubscribe(m);
    return this.subscribe(m);
  }

  private unsubscribe(m: UnsubscribeMsg): void {
    const r = resolveTarget(m, () => true);
    if (!r.ok) return this.error(r.error, m.id);
    this.outbox.send(encode({ type: 'unsubscribed', id: m.id, topics: this.state.remove(r.value) }));
  }

  /**
   * Answers `subscribed`, then each topic's snapshot at the replay clock,
   * then the feed's status as recorded. Codes are checked as on `/ws`
   * (`resolveTarget`): a stock code must be listed, here on the bridge's
   * listing or in the day's recording (a code since delisted); else
   * `invalid_code`.
   */
  private async subscribe(m: SubscribeMsg): Promise<void> {
    if (m.codes.length > this.limits.maxTopics && new Set(m.codes).size > this.limits.maxTopics) {
      return this.error(wireError('too_many_topics', `at most ${this.limits.maxTopics} topics per connection`), m.id);
    }
    const recorded = await this.recordedUnlisted(m);
    if (this.ended) return;
    const r = resolveTarget(m, (market, code) => this.listed.has(market, code) || recorded.has(code));
    if (!r.ok) return this.error(r.error, m.id);
    const t = r.value;
    const over = this.overLimit(t);
    if (over) return this.error(over, m.id);
    const frames = [encode({ type: 'subscribed', id: m.id, topics: t.wildcard ? [wildcardTopic(t.feed)] : [...t.topics] })];
    frames.push(...this.state.add(t));
    const status = this.state.statuses.get(t.feed);
    if (status) frames.push(status);
    this.outbox.sendAll(frames);
    this.markSubscribed();
  }

  /**
   * The codes of `m` that the bridge's listing does not hold and the day's
   * recording does, in request order up to the first it does not hold
   * either (`resolveTarget` refuses there, or at a code before it).
   */
  private async recordedUnlisted(m: SubscribeMsg): Promise<Set<string>> {
    const found = new Set<string>();
    if (checkFeed(m.channel, m.market) !== undefined || m.channel === 'index') return found;
    for (const code of new Set(m.codes)) {
      if (!STOCK_CODE.test(code) || this.listed.has(m.market, code)) continue;
      if (!(await this.opts.recorded.has(this.q.date, m.market, code))) break;
      found.add(code);
    }
    return found;
  }

  private overLimit(t: Target): WireError | undefined {
    const st = this.state;
    if (t.wildcard) {
      return !st.wildcards.has(t.feed) && st.wildcards.size >= this.limits.maxWildcards
        ? wireError('too_many_topics', `at most ${this.limits.maxWildcards} wildcard subscriptions per connection`)
        : undefined;
    }
    const added = t.topics.filter((topic) => !st.topics.has(topic)).length;
    return st.topics.size + added > this.limits.maxTopics ? wireError('too_many_topics', `at most ${this.limits.maxTopics} topics per connection`) : undefined;
  }

  private error(err: WireError, id?: RequestId): void {
    this.outbox.send(errorFrame(err, id));
  }
}
