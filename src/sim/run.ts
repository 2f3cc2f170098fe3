import { createLogger, exitAfterLogs, type LogFormat } from '../log.js';
import { KrxCalendar, coveredYears } from '../market/calendar.js';
import { EXAM_DAYS, Sessions } from '../market/session.js';
import { parseSimEnv } from './env.js';
import { Simulator } from './simulator.js';

/**
 * The upstream simulator as a process (`npm run sim`, `krx-bridge sim`),
 * configured from the environment (SIM_PORT, SIM_HOST, SIM_API_KEY,
 * SIM_CLOCK, SIM_SEED, SIM_DAILY_LIMIT, SIM_TICK_MS, SIM_SPEED, SIM_FAULTS,
 * SIM_LOG_LEVEL, and the bridge's MARKET_HOLIDAYS and MARKET_EXAM_DAYS). A
 * bad setting prints one line naming it and exits 1.
 */

/** Runs the simulator until SIGINT or SIGTERM, configured from `env`. */
export async function runSimulator(env: NodeJS.ProcessEnv = process.env, format: LogFormat = 'auto'): Promise<void> {
  const parsed = parseSimEnv(env);
  if (!parsed.ok) {
    process.stderr.write(`${parsed.message}\n`);
    process.exit(1);
  }
  const settings = parsed.value;
  const logger = createLogger({ level: settings.SIM_LOG_LEVEL, secrets: [settings.SIM_API_KEY], base: { component: 'sim' }, format });
  const calendar = new KrxCalendar(settings.MARKET_HOLIDAYS, (year) =>
    logger.warn({ year, covered: coveredYears() }, 'no public holidays known for this year: only weekends, the year-end closure and MARKET_HOLIDAYS apply'),
  );
  const sim = new Simulator({
    sessions: new Sessions(calendar, [...EXAM_DAYS, ...settings.MARKET_EXAM_DAYS]),
    apiKey: settings.SIM_API_KEY,
    clock: settings.SIM_CLOCK,
    seed: settings.SIM_SEED,
    dailyLimit: settings.SIM_DAILY_LIMIT,
    tickMs: settings.SIM_TICK_MS,
    speed: settings.SIM_SPEED,
    faults: settings.SIM_FAULTS,
    logger,
  });
  let stopping = false;
  // The handlers go first: a signal that came before them would end the process by its default action, however
  // soon after the simulator logged its address (a script that starts it and stops it at once). One that comes
  // while it starts stops it once it listens.
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    // A stuck close must not keep the process alive; armed first, so nothing below can keep it from being armed.
    setTimeout(() => process.exit(0), 3_000).unref();
    try {
      logger.info({ signal }, 'stopping');
    } catch {
      // The log destination may be gone (its reader exited): stopping matters more.
    }
    void started
      .then(() => sim.stop())
      .catch(() => undefined)
      .finally(() => {
        try {
          logger.flush();
        } catch {
          // Exiting matters more.
        }
        exitAfterLogs(0);
      });
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
  const started = sim.start({ port: settings.SIM_PORT, host: settings.SIM_HOST });
  try {
    await started;
  } catch (err) {
    process.stderr.write(`cannot listen on ${settings.SIM_HOST}:${settings.SIM_PORT}: ${(err as Error).message}\n`);
    process.exit(1);
  }
}
