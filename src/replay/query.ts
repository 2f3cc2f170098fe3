import { z } from 'zod';

/**
 * The query of a replay (`/ws/replay?date=YYYYMMDD&from=HHMMSS&to=HHMMSS&speed=N`),
 * validated where it enters: times are KST, `to` exclusive, `speed` 1–1000
 * or `max`. See docs/REPLAY.md.
 */

const TIME = /^([01]\d|2[0-3])[0-5]\d[0-5]\d$/;

/** The replay's query, validated. */
export const ReplayQuery = z
  .object({
    date: z.string().regex(/^\d{8}$/, 'date must be YYYYMMDD'),
    from: z.string().regex(TIME, 'from must be HHMMSS (KST)').default('000000'),
    to: z.string().regex(TIME, 'to must be HHMMSS (KST)').default('235959'),
    speed: z
      .string()
      .default('1')
      .transform((s) => (s === 'max' ? ('max' as const) : Number(s)))
      .refine((s) => s === 'max' || (Number.isInteger(s) && s >= 1 && s <= 1000), 'speed must be an integer from 1 to 1000, or max'),
  })
  .refine((q) => q.from < q.to, 'from must be before to');
/** The replay's query (type). */
export type ReplayQuery = z.infer<typeof ReplayQuery>;
