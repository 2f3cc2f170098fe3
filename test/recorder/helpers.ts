import WebSocket from 'ws';
import { LocalBus, type FeedStatus } from '../../src/bus/bus.js';
import type { Authenticator } from '../../src/access/auth.js';
import { slowPolicy, type SlowPolicy } from '../../src/gateway/slow.js';
import { silentLogger } from '../../src/log.js';
import { Metrics } from '../../src/metrics/metrics.js';
import { DEFAULT_LIMITS, type Channel, type Limits, type Market } from '../../src/protocol/constants.js';
import { Recorder } from '../../src/recorder/recorder.js';
import { ReplayServer } from '../../src/replay/server.js';
import { StateStore } from '../../src/state/store.js';
import { startHarness, type Harness } from '../gateway/harness.js';

/** Recordings made in the test process, and a gateway serving replays of them. */

/** The day the helpers record (KST). */
export const DAY = '20261124';
/** 10:00:00 KST of DAY. */
export const T0 = Date.parse('2026-11-24T10:00:00+09:00');

/** What to record. */
export interface RecordOptions {
  /** Codes of the quote.kospi feed (numbered from 100000); default 3. */
  readonly rows?: number;
  /** Characters of a `memo` field that changes every second; default 0 (no such change). */
  readonly pad?: number;
  readonly maxPendingBytes?: number;
  readonly segmentMs?: number;
  /** The feed recorded; default quote.kospi. */
  readonly feed?: readonly [Channel, Market];
  /** The first second recorded (after T0); default 0. */
  readonly first?: number;
  /** Feed statuses published before the change of the given second. */
  readonly statuses?: Readonly<Record<number, Pick<FeedStatus, 'state'> & Partial<FeedStatus>>>;
}

/**
 * Records `seconds` of a moving feed (default quote.kospi) into `dir` (one batch a
 * second from T0; every code's price changes every second, so every topic's
 * seq is the second's number + 1) with its `live` status published first.
 */
export async function record(dir: string, seconds: number, opts: RecordOptions = {}) {
  const store = new StateStore();
  const bus = new LocalBus();
  let now = T0 + (opts.first ?? 0) * 1000;
  const drops: number[] = [];
  const r = new Recorder(
    {
      dir,
      store,
      logger: silentLogger(),
      now: () => now,
      onDrop: (_why, n) => drops.push(n),
      ...(opts.maxPendingBytes ? { maxPendingBytes: opts.maxPendingBytes } : {}),
      ...(opts.segmentMs ? { segmentMs: opts.segmentMs } : {}),
    },
    bus,
  );
  r.start();
  const codes = Array.from({ length: opts.rows ?? 3 }, (_, i) => String(100000 + i));
  const [channel, market] = opts.feed ?? ['quote', 'kospi'];
  bus.publishStatus({ channel, market, state: 'live', intervalMs: 1000, ts: now });
  for (let s = opts.first ?? 0; s < (opts.first ?? 0) + seconds; s++) {
    now = T0 + s * 1000;
    const st = opts.statuses?.[s];
    if (st) bus.publishStatus({ channel, market, intervalMs: 1000, ts: now, ...st });
    bus.publish(
      store.apply(
        channel,
        market,
        codes.map((c, i) => ({ isuSrtCd: c, trdPrc: 1000 + ((s + i) % 7) * 10, memo: String(s % 10).repeat(opts.pad ?? 0) })),
        now,
      ),
    );
  }
  await r.stop();
  return { r, drops, store };
}

/** A gateway harness serving replays of `dir`, with the closes and slow-consumer steps its replays made. */
export async function replayHarness(dir: string, slow: Partial<SlowPolicy> = {}, limits: Partial<Limits> = {}, auth?: Authenticator, heartbeatMs = 15_000) {
  const closes: number[] = [];
  const steps: string[] = [];
  const metrics = new Metrics({ defaults: false });
  const replay = new ReplayServer({
    dir,
    logger: silentLogger(),
    maxPayloadBytes: DEFAULT_LIMITS.maxPayloadBytes,
    heartbeatMs,
    server: 'krx-bridge/test',
    slow: slowPolicy({ closeBytes: 4 << 20, maxBehindMs: 2000, ...slow }),
    onClose: (c) => closes.push(c),
    onSlow: (s) => steps.push(s),
  });
  const h: Harness = await startHarness({ replay, metrics, limits: { ...DEFAULT_LIMITS, ...limits }, ...(auth ? { auth } : {}) });
  return Object.assign(h, { replay, closes, steps });
}

/**
 * What a WebSocket to `target` meets: an HTTP refusal (its status and
 * body), or the handshake (101) and then, for a refused replay, the coded
 * `error` frame and close 4004 (`frames` and `close`).
 */
export function openReplay(target: string): Promise<{ status: number; body: string; frames: Record<string, unknown>[]; close?: number }> {
  return new Promise((resolve) => {
    const ws = new WebSocket(target);
    const frames: Record<string, unknown>[] = [];
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, frames }));
    });
    ws.on('message', (d) => {
      frames.push(JSON.parse(String(d)) as Record<string, unknown>);
      // A replay that plays sends welcome first: that is all this needs to know.
      if (frames[0]!.type === 'welcome') ws.close();
    });
    ws.on('close', (code) => resolve({ status: 101, body: '', frames, close: code }));
    ws.on('error', () => undefined);
  });
}
