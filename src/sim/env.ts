import { z } from 'zod';
import { operatorHolidays } from '../market/calendar.js';
import { FaultsSchema } from './server/faults.js';
import { DEFAULT_API_KEY, DEFAULT_DAILY_LIMIT } from './simulator.js';

/**
 * The simulator's settings from the environment, validated.
 */

const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

/** `YYYYMMDD` dates, inline or `@file` (as MARKET_HOLIDAYS of the bridge). */
const dates = z
  .string()
  .default('')
  .transform((text, ctx) => {
    try {
      return operatorHolidays(text);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: (err as Error).message });
      return z.NEVER;
    }
  });

/** The simulator's environment settings. */
export const SimEnv = z.object({
  SIM_PORT: int(0, 65_535).default(9090).describe('port'),
  SIM_HOST: z.string().min(1).default('127.0.0.1').describe('interface'),
  SIM_API_KEY: z.string().min(1).default(DEFAULT_API_KEY).describe('the key clients must send in `apikey`'),
  SIM_CLOCK: z
    .enum(['open', 'kst', 'fast'])
    .default('open')
    .describe('open: regular session at any hour; kst: the real KST schedule and provision times; fast: an accelerated trading day'),
  SIM_SEED: z.string().min(1).default('1').describe('market seed'),
  SIM_DAILY_LIMIT: int(1, 1e9).default(DEFAULT_DAILY_LIMIT).describe('calls per GMT day before 429'),
  SIM_TICK_MS: int(0, 3_600_000).default(1000).describe('milliseconds between market ticks (0: only on demand)'),
  SIM_SPEED: z.coerce.number().positive().max(100_000).default(60).describe('market seconds per wall second with SIM_CLOCK=fast'),
  SIM_FAULTS: z
    .string()
    .default('{}')
    .transform((text, ctx) => {
      try {
        return JSON.parse(text) as unknown;
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be JSON' });
        return z.NEVER;
      }
    })
    .pipe(FaultsSchema)
    .describe('faults switched on at start (JSON, as for /_sim/faults)'),
  SIM_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info').describe('log level'),
  // The bridge's own calendar settings, read the same way, so a simulator and a bridge given one environment trade on the same days.
  MARKET_HOLIDAYS: dates.describe('extra closed days (YYYYMMDD, comma-separated, or @file), as for the bridge'),
  MARKET_EXAM_DAYS: dates.describe('exam days beyond the built-in ones (late sessions), as for the bridge'),
});

/** Parses the environment; on a bad setting returns one line that names it. */
export function parseSimEnv(env: NodeJS.ProcessEnv): { ok: true; value: z.infer<typeof SimEnv> } | { ok: false; message: string } {
  const picked = Object.fromEntries(
    Object.keys(SimEnv.shape)
      .filter((k) => env[k] !== undefined && env[k] !== '')
      .map((k) => [k, env[k]]),
  );
  const r = SimEnv.safeParse(picked);
  if (r.success) return { ok: true, value: r.data };
  const issue = r.error.issues[0]!;
  const name = String(issue.path[0] ?? 'environment');
  const detail = issue.path.length > 1 ? `${issue.path.slice(1).join('.')}: ${issue.message}` : issue.message;
  return { ok: false, message: `invalid ${name}: ${detail}` };
}
