import { join } from 'node:path';
import type { Bus } from '../bus/bus.js';
import type { Config } from '../config/config.js';
import { slowPolicy } from '../gateway/slow.js';
import type { RecordingsSource } from '../http/recordings.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics/metrics.js';
import type { Damage } from '../recorder/reader.js';
import { Recorder } from '../recorder/recorder.js';
import { ReplayServer } from '../replay/server.js';
import type { StateStore } from '../state/store.js';
import { packageVersion } from '../version.js';

/** The recorder and what serves its recordings. */
export interface Recording {
  readonly recorder: Recorder;
  /** Replays at `/ws/replay`. */
  readonly replay: ReplayServer;
  /** The source of `/recordings`. */
  readonly source: RecordingsSource;
}

/** What recording needs. */
export interface RecordingDeps {
  readonly store: StateStore;
  readonly bus: Bus;
  readonly metrics: Metrics;
  readonly logger: Logger;
  /** Whether this process writes now (in a cluster, the poller's process only). */
  readonly enabled: () => boolean;
  /** Clock, ms epoch. */
  readonly now: () => number;
}

/**
 * Starts the recorder under DATA_DIR/recordings and makes what serves its
 * recordings: the replay server (`/ws/replay`) and the source of
 * `/recordings`. With RECORD=off there is none, and both answer
 * `recording_off`.
 */
export function startRecording(config: Config, deps: RecordingDeps): Recording | undefined {
  if (config.RECORD !== 'on') return undefined;
  const dir = join(config.DATA_DIR, 'recordings');
  const m = deps.metrics;
  const recorder = new Recorder(
    {
      dir,
      store: deps.store,
      logger: deps.logger.child({ component: 'recorder' }),
      keepDays: config.RECORD_DAYS,
      now: deps.now,
      onWrite: (bytes) => m.recordedBytes.inc(bytes),
      onDrop: (reason, n) => m.recordDropped.inc({ reason }, n),
      enabled: deps.enabled,
    },
    deps.bus,
  );
  recorder.start();
  const log = deps.logger.child({ component: 'replay' });
  const onDamage = (d: Damage) => {
    m.recordDamage.inc();
    log.warn({ file: d.file, line: d.line, reason: d.reason }, 'recording damaged; read up to the damage');
  };
  const replay = new ReplayServer({
    dir,
    logger: log,
    maxPayloadBytes: config.MAX_PAYLOAD_BYTES,
    heartbeatMs: config.HEARTBEAT_MS,
    server: `krx-bridge/${packageVersion()}`,
    slow: slowPolicy({ conflateBytes: config.SLOW_CONFLATE_BYTES, closeBytes: config.SLOW_CLOSE_BYTES, replyBytes: config.SLOW_REPLY_BYTES }),
    live: recorder.live,
    onDamage,
    onClose: (code) => m.closes.inc({ code: String(code) }),
    onSlow: (step) => m.slowConsumer.inc({ step }),
  });
  return { recorder, replay, source: { dir, live: recorder.live, onDamage } };
}
