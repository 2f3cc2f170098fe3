import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import type { Logger } from '../log.js';
import { kstSecondOfDay } from '../market/calendar.js';
import type { Limits } from '../protocol/constants.js';
import type { SlowPolicy } from '../gateway/slow.js';
import { recordedDay, type LiveSource } from '../recorder/catalog.js';
import { ReplayConnection } from './connection.js';
import { RecordedCodes } from './codes.js';
import { Turns } from './turns.js';
import type { SymbolLookup } from '../gateway/handlers.js';
import { codedHandshakeErrors, searchOf } from '../gateway/upgrade.js';
import { hhmmss, kstMs } from '../recorder/format.js';
import { REPLAY_PARAMS, ReplayQuery } from './query.js';
import { queryParams } from '../access/params.js';
import type { Damage } from '../recorder/reader.js';

export { ReplayQuery } from './query.js';

/**
 * Replay over WebSocket (`/ws/replay?date=YYYYMMDD&from=HHMMSS&to=HHMMSS&speed=N`):
 * protocol v1 unchanged, played from a recording. A subscribe gets each
 * topic's snapshot as it stood at the replay clock (recorded seq and ts);
 * then the recorded patches with `from` ≤ ts < `to` come in recorded order
 * at `speed` (1–1000, or `max`; the replay clock starts with the first
 * subscribe), byte for byte the frames live clients got, and the recorded
 * statuses too. At `to`, or at the end of the recording, each subscribed
 * feed gets `status` `closed` (`replay ended`) and the socket closes with
 * 1000. A day not recorded, or a window entirely before or after its
 * recording, is refused with `not_recorded`. See docs/REPLAY.md.
 */

/** Options of `ReplayServer`. */
export interface ReplayServerOptions {
  /** The recordings directory. */
  readonly dir: string;
  readonly logger: Logger;
  /** Largest client frame, bytes (as `/ws`). */
  readonly maxPayloadBytes: number;
  readonly heartbeatMs: number;
  /** `krx-bridge/<version>`. */
  readonly server: string;
  /** The slow-consumer thresholds of live connections. */
  readonly slow: SlowPolicy;
  /** Close with 1008 past this many times the message rate within one second; default 3 (as live). */
  readonly floodFactor?: number;
  /** The segment being recorded, for its summary (the recorder's `live`). */
  readonly live?: LiveSource;
  /** Damage found while replaying. */
  readonly onDamage?: (d: Damage) => void;
  /** Closes the server makes, by close code (as krx_server_closes_total). */
  readonly onClose?: (code: number) => void;
  /** Slow-consumer steps (as krx_slow_consumer_total). */
  readonly onSlow?: (step: 'conflate' | 'drain' | 'close') => void;
  /** Monotonic clock, ms, of every elapsed time of a replay (heartbeats, rate limits, time behind, pace); default `performance.now`. */
  readonly monotonic?: () => number;
  /** A replay that holds no subscription and has asked for none this long is closed (1000 `replay idle`), ms; default `REPLAY_IDLE_MS`. */
  readonly idleMs?: number;
}

/** A refusal of a replay: its wire code (sent in an `error` frame before close 4004) and the HTTP status it maps to. */
export interface ReplayRefusal {
  readonly status: number;
  readonly code: 'invalid_params' | 'not_recorded';
  readonly message: string;
}

/**
 * How long a replay may hold no subscription, with none asked for, before
 * it is closed, ms: a replay holds its day's state and one of the
 * server's `MAX_REPLAYS`, so one opened and left unused would keep both
 * from everyone else.
 */
export const REPLAY_IDLE_MS = 60_000;

/** The default monotonic clock (`performance.now` needs its object as `this`). */
const monotonicNow = (): number => performance.now();

/** Replay connections of one bridge. */
export class ReplayServer {
  private readonly wss: WebSocketServer;
  private readonly open = new Set<ReplayConnection>();
  /** The codes each day's recording holds, shared by the replays. */
  private readonly recorded: RecordedCodes;
  /** One replay at a time reads its recording up to its start (turns.ts). */
  private readonly prerolls = new Turns(1);

  /** A server of replays from `opts.dir`. */
  constructor(private readonly opts: ReplayServerOptions) {
    this.recorded = new RecordedCodes(opts.dir);
    // closeTimeout: a peer that stopped reading never answers the close frame; it is cut after 5 s, as on /ws.
    const extra = { closeTimeout: 5000 };
    this.wss = codedHandshakeErrors(
      new WebSocketServer({ noServer: true, maxPayload: opts.maxPayloadBytes, perMessageDeflate: false, clientTracking: false, ...extra }),
    );
  }

  /** Checks a replay request: a valid query and a recording that covers part of its window; the query, or why not. */
  async check(url: string | undefined): Promise<{ ok: true; query: ReplayQuery } | { ok: false; refusal: ReplayRefusal }> {
    const params = queryParams(searchOf(url), REPLAY_PARAMS);
    if (!params.ok) return { ok: false, refusal: { status: 400, code: 'invalid_params' as const, message: params.message } };
    const r = ReplayQuery.safeParse(params.params);
    if (!r.success) return { ok: false, refusal: { status: 400, code: 'invalid_params' as const, message: r.error.issues.map((i) => i.message).join('; ') } };
    const { date, from, to } = r.data;
    const held = (await recordedDay(this.opts.dir, date, this.opts.live))?.summary;
    const refuse = (message: string) => ({ ok: false as const, refusal: { status: 404, code: 'not_recorded' as const, message } });
    if (held === undefined) return refuse(`no recording of ${date}`);
    // The end as a query's `to` and /recordings say it: exclusive, the second after the last one recorded.
    const range = `${hhmmss(kstSecondOfDay(held.from))} to ${hhmmss(kstSecondOfDay(held.to) + 1)}`;
    if (kstMs(date, to) <= held.from) return refuse(`the recording of ${date} runs from ${range} (KST), after ${to}`);
    if (kstMs(date, from) > held.to) return refuse(`the recording of ${date} runs from ${range} (KST), before ${from}`);
    return { ok: true, query: r.data };
  }

  /**
   * Completes the upgrade of a checked request and plays the replay within
   * `limits` (the connection's, as on `/ws`); its subscribes take the stock
   * codes `listed` takes (the listing `/ws` checks) and those the day's
   * recording holds.
   */
  accept(req: IncomingMessage, socket: Duplex, head: Buffer, query: ReplayQuery, limits: Limits, listed: SymbolLookup): void {
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      const opts = {
        ...this.opts,
        floodFactor: this.opts.floodFactor ?? 3,
        idleMs: this.opts.idleMs ?? REPLAY_IDLE_MS,
        monotonic: this.opts.monotonic ?? monotonicNow,
        recorded: this.recorded,
        prerolls: this.prerolls,
      };
      const c = new ReplayConnection(ws, query, limits, listed, opts, () => this.open.delete(c));
      this.open.add(c);
      void c.run();
    });
  }

  /** Closes every replay (1001). */
  close(): void {
    for (const c of this.open) c.stop('goingAway');
  }

  /** Open replay connections. */
  get size(): number {
    return this.open.size;
  }
}
