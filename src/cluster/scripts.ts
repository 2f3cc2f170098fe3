import { createHash } from 'node:crypto';

/**
 * The Lua scripts of the cluster. Each runs atomically in Redis, so a check
 * (lease owner, fencing generation, epoch) and the writes it guards cannot
 * be separated by another process's command. See docs/DEPLOYMENT.md
 * §Lease and fencing.
 */

/** What a script needs of a Redis connection (node-redis `sendCommand`). */
export interface Commander {
  sendCommand<T = unknown>(args: readonly string[], options?: { timeout?: number }): Promise<T>;
}

/** A Lua script, run by its SHA1 (loaded on first use, and again after a Redis restart). */
export class Script {
  /** SHA1 of the source. */
  readonly sha: string;

  /** A script named `name` (for logs) with Lua `source`. */
  constructor(
    readonly name: string,
    readonly source: string,
  ) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  /** Runs the script with `keys` and `args`; `timeoutMs` bounds the wait for the reply. */
  async run<T = unknown>(redis: Commander, keys: readonly string[], args: readonly string[], timeoutMs?: number): Promise<T> {
    const opts = timeoutMs === undefined ? undefined : { timeout: timeoutMs };
    const tail = [String(keys.length), ...keys, ...args];
    try {
      return await redis.sendCommand<T>(['EVALSHA', this.sha, ...tail], opts);
    } catch (err) {
      if (!String((err as Error).message).startsWith('NOSCRIPT')) throw err;
      return redis.sendCommand<T>(['EVAL', this.source, ...tail], opts);
    }
  }
}

/**
 * Acquire the lease. KEYS: lease, gen. ARGV: owner, lease ms, lowest
 * acceptable generation (one above the highest the caller has seen).
 * Returns `{1, gen, wiped}` when acquired (`wiped` 1 when the generation
 * counter was missing, i.e. Redis lost its data or the cluster is new),
 * else `{0, pttl}`. A missing counter restarts from Redis time in ms so
 * generations keep increasing across a data loss.
 */
export const ACQUIRE = new Script(
  'acquire',
  `
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return {0, redis.call('PTTL', KEYS[1])}
end
local wiped = 0
if redis.call('EXISTS', KEYS[2]) == 0 then
  wiped = 1
  local t = redis.call('TIME')
  redis.call('SET', KEYS[2], string.format('%d', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)))
end
local g = redis.call('INCR', KEYS[2])
local floor = tonumber(ARGV[3])
if g < floor then
  g = floor
  redis.call('SET', KEYS[2], string.format('%d', g))
end
return {1, g, wiped}
`,
);

/**
 * Compare-and-extend. KEYS: lease, gen. ARGV: owner, lease ms, generation.
 * Extends the lease only while the caller still owns it under its
 * generation; returns 1, else 0.
 */
export const RENEW = new Script(
  'renew',
  `
if redis.call('GET', KEYS[1]) == ARGV[1] and redis.call('GET', KEYS[2]) == ARGV[3] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
`,
);

/** Compare-and-delete. KEYS: lease. ARGV: owner, lease channel. Returns 1 when released. */
export const RELEASE = new Script(
  'release',
  `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  redis.call('PUBLISH', ARGV[2], 'released')
  return 1
end
return 0
`,
);

/**
 * Fenced write of one poll round: the batches of one or more feeds.
 * KEYS: lease, gen, epoch, then per feed its state hash and stream.
 * ARGV: owner, gen, epoch, stream maxlen, number of feeds, then per feed:
 * events channel, ts, frames (newline-joined), n, and per change: code,
 * seq, hash value, frame; then the round channel. Refused (`fenced`/
 * `epoch`) unless the caller holds the lease under the current generation
 * and epoch; else stores each row and seq, appends each frame to its
 * feed's capped stream, and only then publishes `gen feeds` on the round
 * channel and each feed's batch with the stream ids
 * before and after it, one message per feed as before, one right after
 * the other: every process learns how many batch messages the round has,
 * and handles them together once the last has come. Returns `ok`.
 */
export const WRITE_BATCH = new Script(
  'write_batch',
  `
if redis.call('GET', KEYS[1]) ~= ARGV[1] or redis.call('GET', KEYS[2]) ~= ARGV[2] then return 'fenced' end
if redis.call('GET', KEYS[3]) ~= ARGV[3] then return 'epoch' end
local feeds = tonumber(ARGV[5])
local a = 6
local out = {}
for f = 1, feeds do
  local state, log = KEYS[2 + 2 * f], KEYS[3 + 2 * f]
  local n = tonumber(ARGV[a + 3])
  local prev = redis.call('HGET', state, '~id') or '0-0'
  local last = prev
  for i = 0, n - 1 do
    local b = a + 4 + i * 4
    redis.call('HSET', state, ARGV[b], ARGV[b + 2])
    last = redis.call('XADD', log, 'MAXLEN', '~', ARGV[4], '*', 'c', ARGV[b], 's', ARGV[b + 1], 'f', ARGV[b + 3])
  end
  redis.call('HSET', state, '~id', last)
  out[f] = {ARGV[a], ARGV[2] .. ' ' .. ARGV[3] .. ' ' .. ARGV[a + 1] .. ' ' .. prev .. ' ' .. last .. '\\n' .. ARGV[a + 2]}
  a = a + 4 + n * 4
end
redis.call('PUBLISH', ARGV[a], ARGV[2] .. ' ' .. feeds)
for f = 1, feeds do redis.call('PUBLISH', out[f][1], out[f][2]) end
return 'ok'
`,
);

/**
 * Fenced status. KEYS: lease, gen, status hash. ARGV: owner, gen, feed,
 * status JSON, status channel. Returns `ok` or `fenced`.
 */
export const WRITE_STATUS = new Script(
  'write_status',
  `
if redis.call('GET', KEYS[1]) ~= ARGV[1] or redis.call('GET', KEYS[2]) ~= ARGV[2] then return 'fenced' end
redis.call('HSET', KEYS[3], ARGV[3], ARGV[4])
redis.call('PUBLISH', ARGV[5], ARGV[2] .. ' ' .. ARGV[4])
return 'ok'
`,
);

/**
 * Re-seed a feed's state from a process's memory (after Redis lost it).
 * KEYS: epoch, state hash. ARGV: epoch, then per topic: code, seq, hash
 * value. Writes a topic only where Redis holds an older seq or none, and
 * only under the same epoch. Returns the topics written, or -1 on another
 * epoch.
 */
export const RESEED = new Script(
  'reseed',
  `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
local w = 0
for i = 2, #ARGV, 3 do
  local v = redis.call('HGET', KEYS[2], ARGV[i])
  local s = 0
  if v then s = tonumber(string.match(v, '^(%d+)')) or 0 end
  if s < tonumber(ARGV[i + 1]) then
    redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 2])
    w = w + 1
  end
end
return w
`,
);

/**
 * Register demand. KEYS: a feed's demand set. ARGV: ttl ms, then members.
 * Scores each member with its expiry in Redis time (so process clocks do
 * not matter). Returns the number of members.
 */
export const REGISTER_DEMAND = new Script(
  'register_demand',
  `
local t = redis.call('TIME')
local exp = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[1])
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], exp, ARGV[i]) end
return #ARGV - 1
`,
);

/**
 * Read demand. KEYS: demand sets. Drops expired members, returns the live
 * members of each set, in KEYS order.
 */
export const READ_DEMAND = new Script(
  'read_demand',
  `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out = {}
for i = 1, #KEYS do
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now)
  out[i] = redis.call('ZRANGEBYSCORE', KEYS[i], now, '+inf')
end
return out
`,
);

/**
 * Share the budget. KEYS: budget hash. ARGV: limit, remaining, resetAt,
 * observedAt (`''` for null). Stores it when newer than the stored one (or
 * equally new with fewer calls left). Returns 1 when stored.
 */
export const WRITE_BUDGET = new Script(
  'write_budget',
  `
local o = tonumber(redis.call('HGET', KEYS[1], 'observedAt') or '') or -1
local mine = tonumber(ARGV[4]) or -1
if mine < o then return 0 end
if mine == o then
  local r = tonumber(redis.call('HGET', KEYS[1], 'remaining') or '')
  local m = tonumber(ARGV[2])
  if r == nil or m == nil or m >= r then return 0 end
end
redis.call('HSET', KEYS[1], 'limit', ARGV[1], 'remaining', ARGV[2], 'resetAt', ARGV[3], 'observedAt', ARGV[4])
return 1
`,
);

/** Compare-and-delete of a lock. KEYS: lock. ARGV: token. */
export const UNLOCK = new Script(
  'unlock',
  `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`,
);

/**
 * Count one on-demand call. KEYS: the day's allowance counter. ARGV: cap,
 * expiry (ms epoch). Returns the new count, or -1 (nothing counted) when
 * the count had reached the cap.
 */
export const TAKE_ALLOWANCE = new Script(
  'take_allowance',
  `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIREAT', KEYS[1], ARGV[2]) end
if n > tonumber(ARGV[1]) then
  redis.call('DECR', KEYS[1])
  return -1
end
return n
`,
);

/**
 * Correct the day's on-demand count by ARGV[1] (retries add, a call refused
 * before any request gives its count back), never below zero. KEYS: the
 * day's allowance counter. ARGV: delta, expiry (ms epoch). Returns the count.
 */
export const ADJUST_ALLOWANCE = new Script(
  'adjust_allowance',
  `
local n = redis.call('INCRBY', KEYS[1], ARGV[1])
if n < 0 then
  redis.call('SET', KEYS[1], 0)
  n = 0
end
redis.call('PEXPIREAT', KEYS[1], ARGV[2])
return n
`,
);

/** Every script of the cluster. */
export const SCRIPTS: readonly Script[] = [
  ACQUIRE,
  RENEW,
  RELEASE,
  WRITE_BATCH,
  WRITE_STATUS,
  RESEED,
  REGISTER_DEMAND,
  READ_DEMAND,
  WRITE_BUDGET,
  UNLOCK,
  TAKE_ALLOWANCE,
  ADJUST_ALLOWANCE,
];

/**
 * Loads every script (after each connect), so writes run by SHA from the
 * start: a NOSCRIPT retry could let a later write overtake an earlier one.
 */
export async function loadScripts(redis: Commander, timeoutMs?: number): Promise<void> {
  const opts = timeoutMs === undefined ? undefined : { timeout: timeoutMs };
  await Promise.all(SCRIPTS.map((s) => redis.sendCommand(['SCRIPT', 'LOAD', s.source], opts)));
}
