import type { PatchMsg, SnapshotMsg, StatusMsg, WelcomeMsg } from '../protocol/wire.js';

/**
 * Cheap shape checks of the server messages the client acts on: a few
 * `typeof` tests per message instead of a schema parse on the hot path. The
 * types are the protocol's (`z.infer` of src/protocol/messages.ts). See
 * docs/PROTOCOL.md §5.
 */

type Obj = Record<string, unknown>;

function isObject(v: unknown): v is Obj {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function isSeq(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v > 0;
}

/** Whether `m` has the fields of a `snapshot` the client uses. */
export function isSnapshot(m: unknown): m is SnapshotMsg {
  return isObject(m) && typeof m.topic === 'string' && isSeq(m.seq) && typeof m.ts === 'number' && isObject(m.data) && typeof m.crc === 'number';
}

/** Whether `m` has the fields of a `patch`, each operation with a string `op` and `path`. */
export function isPatch(m: unknown): m is PatchMsg {
  if (!isObject(m) || typeof m.topic !== 'string' || !isSeq(m.seq) || typeof m.ts !== 'number' || typeof m.crc !== 'number') return false;
  const ops = m.ops;
  if (!Array.isArray(ops) || ops.length === 0) return false;
  for (const op of ops) if (!isObject(op) || typeof op.op !== 'string' || typeof op.path !== 'string') return false;
  return true;
}

/** Whether `m` has the fields of a `status`. */
export function isStatus(m: unknown): m is StatusMsg {
  return isObject(m) && typeof m.channel === 'string' && typeof m.market === 'string' && typeof m.state === 'string';
}

/** Whether `m` has the fields of a `welcome` the client relies on. */
export function isWelcome(m: unknown): m is WelcomeMsg {
  if (!isObject(m) || typeof m.epoch !== 'string' || typeof m.heartbeatMs !== 'number' || typeof m.version !== 'string') return false;
  const l = m.limits;
  return isObject(l) && typeof l.maxMessagesPerSecond === 'number' && l.maxMessagesPerSecond > 0;
}

/** The longest delay a timer keeps (2^31 − 1 ms, about 24.8 days): a longer one fires at once. */
export const MAX_TIMER_MS = 2_147_483_647;

/** Options of `KrxClientOptions` that are a time in ms, and whether 0 is allowed. */
const MS_OPTIONS = [
  ['requestTimeoutMs', false],
  ['connectTimeoutMs', false],
  ['stableAfterMs', true],
  ['minDelayMs', false],
  ['maxDelayMs', false],
  ['restartSpreadMs', true],
] as const;

/**
 * Why a time in ms is not one a timer keeps (not a number, NaN, negative,
 * zero where `zero` is false, or above `MAX_TIMER_MS`); undefined when it is.
 */
export function badMs(v: unknown, zero: boolean): string | undefined {
  if (typeof v === 'number' && (zero ? v >= 0 : v > 0) && v <= MAX_TIMER_MS) return undefined;
  return `must be ${zero ? 0 : 1} to ${MAX_TIMER_MS} ms, got ${typeof v === 'string' ? JSON.stringify(v) : String(v)}`;
}

/**
 * Checks the options of a client that are numbers (times, the backoff's
 * factor): throws a `TypeError` naming the first one that is not usable,
 * as the constructor does for a URL that is not a WebSocket URL. A NaN
 * timeout would otherwise drop every connection at once, or never time out.
 */
export function checkNumberOptions(options: Readonly<Record<string, unknown>>): void {
  for (const [name, zero] of MS_OPTIONS) {
    const v = options[name];
    const why = v === undefined ? undefined : badMs(v, zero);
    if (why !== undefined) throw new TypeError(`options.${name} ${why}`);
  }
  const f = options.factor;
  if (f !== undefined && (typeof f !== 'number' || !(f >= 1) || !Number.isFinite(f)))
    throw new TypeError(`options.factor must be a finite number of 1 or more, got ${String(f)}`);
}
