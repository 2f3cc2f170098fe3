import { z } from 'zod';
import { CHANNELS, MARKETS, STATES } from '../protocol/constants.js';

/**
 * The records of the state files, as zod schemas: a file's header, a
 * topic's last row, and a feed's last status. A record that does not match
 * is damage, reported like a bad checksum.
 */

/** The first line of a snapshot file: the epoch the seqs belong to, and when it was written. */
export const HeaderRecord = z.object({ v: z.literal(1), epoch: z.string().min(1).max(64), at: z.number().int() }).strict();

/** A topic's last state: channel, market, code, row, seq, ts (when the row was observed), crc. */
export const TopicRecord = z
  .object({
    k: z.enum(CHANNELS),
    m: z.enum(MARKETS),
    c: z.string().min(1).max(16),
    r: z.record(z.string(), z.unknown()),
    s: z.number().int().positive(),
    t: z.number().int().nonnegative(),
    x: z.number().int().nonnegative().max(0xffffffff),
  })
  .strict();
/** A topic record (type). */
export type TopicRecord = z.infer<typeof TopicRecord>;

/** A feed's last status and when its data was last refreshed. */
export const FeedRecord = z
  .object({
    f: z
      .object({
        channel: z.enum(CHANNELS),
        market: z.enum(MARKETS),
        state: z.enum(STATES),
        intervalMs: z.number(),
        reason: z.string().optional(),
        ts: z.number(),
      })
      .passthrough(),
    ok: z.number().int().optional(),
  })
  .strict();
/** A feed record (type). */
export type FeedRecord = z.infer<typeof FeedRecord>;

/** The mark of a clean stop: every change was written, under this epoch. */
export const CleanRecord = z.object({ clean: z.literal(true), epoch: z.string().min(1).max(64), at: z.number().int() }).strict();
