import { z } from 'zod';
import { END_OF_DAY, END_OF_WINDOW, TIME_OF_DAY, isDay } from '../recorder/format.js';

/**
 * The query of a replay (`/ws/replay?date=YYYYMMDD&from=HHMMSS&to=HHMMSS&speed=N`),
 * validated where it enters: times are KST, `to` exclusive (`240000`, the
 * default, is the end of the day), `speed` 1–1000 or `max`. See docs/REPLAY.md.
 */

/** The replay's parameters, each validated. */
const ReplayParams = z.object({
  date: z
    .string({ error: 'date is required (YYYYMMDD, KST)' })
    .regex(/^\d{8}$/, { error: 'date must be YYYYMMDD', abort: true })
    .refine(isDay, 'date must be a day of the calendar (YYYYMMDD)'),
  from: z.string().regex(TIME_OF_DAY, 'from must be HHMMSS (KST)').default('000000'),
  to: z.string().regex(END_OF_WINDOW, 'to must be HHMMSS (KST), up to 240000 (the end of the day)').default(END_OF_DAY),
  // Decimal digits only: `Number` would also take `1e3`, `0x10`, `+5`, `1.0` and spaces around them.
  speed: z
    .string()
    .regex(/^(?:max|[1-9]\d{0,3})$/, { error: 'speed must be an integer from 1 to 1000, or max', abort: true })
    .default('1')
    .transform((s) => (s === 'max' ? ('max' as const) : Number(s)))
    .refine((s) => s === 'max' || s <= 1000, 'speed must be an integer from 1 to 1000, or max'),
});

/** The replay's query, validated. */
export const ReplayQuery = ReplayParams
  // Only between two valid times: a malformed one is said once, by its own check.
  .refine((q) => !TIME_OF_DAY.test(q.from) || !END_OF_WINDOW.test(q.to) || q.from < q.to, 'from must be before to');
/** The replay's query (type). */
export type ReplayQuery = z.infer<typeof ReplayQuery>;

/** The parameters a replay takes: the schema's keys (a query with another is refused). */
export const REPLAY_PARAMS: readonly string[] = Object.keys(ReplayParams.shape);
