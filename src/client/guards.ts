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
