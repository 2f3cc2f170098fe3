import type { FeedStatus } from '../bus/bus.js';
import { CHANNELS, MARKETS, STATES } from '../protocol/constants.js';
import type { PatchOp } from '../protocol/messages.js';
import type { PersistedEntry, RemoteChange } from '../state/store.js';
import type { BudgetSnapshot } from '../upstream/budget.js';
import type { Row } from '../upstream/normalise.js';

/**
 * The formats of everything the cluster keeps in or sends through Redis.
 * Pure functions; the Lua scripts in scripts.ts write the same formats.
 * See docs/DEPLOYMENT.md §Redis keys.
 *
 * - State hash value: `<seq> <ts> <crc> <row JSON>`.
 * - Batch message: a header line `<gen> <epoch> <ts> <prevId> <lastId>`,
 *   then one serialised `snapshot`/`patch` frame per line (JSON never
 *   holds a raw newline).
 * - Status message: `<gen> <FeedStatus JSON>`.
 * - Demand member: `<code>\t<node id>` (code `*` for the whole market).
 */

/** A batch of changes as published on a feed's channel. */
export interface BatchMessage {
  /** Fencing generation of the leader that wrote it. */
  readonly gen: number;
  /** The cluster epoch its seqs belong to. */
  readonly epoch: string;
  /** When the upstream response arrived (ms epoch). */
  readonly ts: number;
  /** Stream id of the feed's last change before this batch (`0-0` if none). */
  readonly prev: string;
  /** Stream id of this batch's last change. */
  readonly last: string;
  /** The serialised frames, in seq order per topic. */
  readonly frames: readonly string[];
}

/** One change read back from a feed's stream. */
export interface StreamChange {
  readonly id: string;
  readonly code: string;
  readonly seq: number;
  readonly frame: string;
}

/** The state hash value of a topic. */
export function encodeEntry(e: PersistedEntry): string {
  return `${e.seq} ${e.ts} ${e.crc} ${JSON.stringify(e.row)}`;
}

/** A state hash value back as an entry; undefined when malformed. */
export function decodeEntry(v: string): PersistedEntry | undefined {
  const m = /^(\d+) (\d+) (\d+) /.exec(v);
  if (!m) return undefined;
  try {
    const row = JSON.parse(v.slice(m[0].length)) as unknown;
    if (row === null || typeof row !== 'object' || Array.isArray(row)) return undefined;
    return { seq: Number(m[1]), ts: Number(m[2]), crc: Number(m[3]), row: row as Row };
  } catch {
    return undefined;
  }
}

/** A round announcement (`gen n`: the next `n` batch messages are one poll round); undefined when malformed. */
export function decodeRound(text: string): { gen: number; batches: number } | undefined {
  const m = /^(\d+) ([1-9]\d{0,3})$/.exec(text);
  return m ? { gen: Number(m[1]), batches: Number(m[2]) } : undefined;
}

/** A batch message; undefined when malformed. */
export function decodeBatch(text: string): BatchMessage | undefined {
  const nl = text.indexOf('\n');
  const head = (nl < 0 ? text : text.slice(0, nl)).split(' ');
  if (head.length !== 5) return undefined;
  const [gen, epoch, ts, prev, last] = head as [string, string, string, string, string];
  if (!/^\d+$/.test(gen) || !/^\d+$/.test(ts) || !epoch) return undefined;
  const frames =
    nl < 0
      ? []
      : text
          .slice(nl + 1)
          .split('\n')
          .filter((f) => f.length > 0);
  return { gen: Number(gen), epoch, ts: Number(ts), prev, last, frames };
}

/**
 * What a serialised `snapshot` or `patch` frame says, for the mirror;
 * `prefixLength` is the length of its feed's `channel.market.` prefix.
 * Undefined when it is not such a frame.
 */
export function decodeFrame(frame: string, prefixLength: number): RemoteChange | undefined {
  let m: Record<string, unknown>;
  try {
    m = JSON.parse(frame) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (typeof m.topic !== 'string' || typeof m.seq !== 'number' || typeof m.crc !== 'number' || typeof m.ts !== 'number') return undefined;
  const code = m.topic.slice(prefixLength);
  if (m.type === 'snapshot' && m.data !== null && typeof m.data === 'object') {
    return { code, seq: m.seq, ts: m.ts, kind: 'snapshot', frame, row: m.data as Row, crc: m.crc };
  }
  if (m.type === 'patch' && Array.isArray(m.ops)) return { code, seq: m.seq, ts: m.ts, kind: 'patch', frame, ops: m.ops as PatchOp[], crc: m.crc };
  return undefined;
}

/** Orders two stream ids (`ms-seq`): negative, zero or positive. */
export function compareIds(a: string, b: string): number {
  const [am = '0', as = '0'] = a.split('-');
  const [bm = '0', bs = '0'] = b.split('-');
  const d = Number(am) - Number(bm);
  return d !== 0 ? d : Number(as) - Number(bs);
}

/** The changes of an XRANGE/XREVRANGE reply (raw RESP2 arrays); malformed entries are skipped. */
export function decodeStream(reply: unknown): StreamChange[] {
  const out: StreamChange[] = [];
  if (!Array.isArray(reply)) return out;
  for (const item of reply) {
    if (!Array.isArray(item) || typeof item[0] !== 'string' || !Array.isArray(item[1])) continue;
    const f = pairs(item[1] as unknown[]);
    const code = f.get('c');
    const seq = Number(f.get('s'));
    const frame = f.get('f');
    if (code && Number.isInteger(seq) && seq > 0 && frame) out.push({ id: item[0], code, seq, frame });
  }
  return out;
}

/** A flat `[field, value, …]` reply (HGETALL, stream fields) as a map. */
export function pairs(reply: readonly unknown[]): Map<string, string> {
  const m = new Map<string, string>();
  for (let i = 0; i + 1 < reply.length; i += 2) {
    const k = reply[i];
    const v = reply[i + 1];
    if (typeof k === 'string' && typeof v === 'string') m.set(k, v);
  }
  return m;
}

/** The demand member of a code (or `*`) registered by a node. */
export function demandMember(code: string, node: string): string {
  return `${code}\t${node}`;
}

/** The code (or `*`) of a demand member. */
export function demandCode(member: string): string {
  const i = member.indexOf('\t');
  return i < 0 ? member : member.slice(0, i);
}

const CHANNEL_SET: ReadonlySet<string> = new Set(CHANNELS);
const MARKET_SET: ReadonlySet<string> = new Set(MARKETS);
const STATE_SET: ReadonlySet<string> = new Set(STATES);

/** A FeedStatus from JSON; undefined when it is not one. */
export function decodeStatus(json: string): FeedStatus | undefined {
  try {
    const s = JSON.parse(json) as Record<string, unknown>;
    if (!CHANNEL_SET.has(s.channel as string) || !MARKET_SET.has(s.market as string) || !STATE_SET.has(s.state as string)) return undefined;
    if (typeof s.intervalMs !== 'number' || typeof s.ts !== 'number') return undefined;
    if (s.reason !== undefined && typeof s.reason !== 'string') return undefined;
    return s as unknown as FeedStatus;
  } catch {
    return undefined;
  }
}

/** A status message (`<gen> <json>`); undefined when malformed. */
export function decodeStatusMessage(text: string): { gen: number; status: FeedStatus } | undefined {
  const sp = text.indexOf(' ');
  if (sp < 0 || !/^\d+$/.test(text.slice(0, sp))) return undefined;
  const status = decodeStatus(text.slice(sp + 1));
  return status ? { gen: Number(text.slice(0, sp)), status } : undefined;
}

const BUDGET_FIELDS = ['limit', 'remaining', 'resetAt', 'observedAt'] as const;

/** The budget hash fields (`''` for null), in the order the budget script takes them. */
export function encodeBudget(b: BudgetSnapshot): string[] {
  return BUDGET_FIELDS.map((k) => (b[k] === null ? '' : String(b[k])));
}

/** A budget snapshot from its hash (HGETALL map); undefined when absent or malformed. */
export function decodeBudget(m: ReadonlyMap<string, string>): BudgetSnapshot | undefined {
  if (!m.has('observedAt')) return undefined;
  const out: Record<string, number | null> = {};
  for (const k of BUDGET_FIELDS) {
    const v = m.get(k) ?? '';
    if (v === '') out[k] = null;
    else if (/^\d+$/.test(v)) out[k] = Number(v);
    else return undefined;
  }
  return out as unknown as BudgetSnapshot;
}
