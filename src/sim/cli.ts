#!/usr/bin/env node
import { createLogger } from '../log.js';
import { parseSimEnv } from './env.js';
import { Simulator } from './simulator.js';

/**
 * `npm run sim`: the upstream simulator as a process, configured from the
 * environment (SIM_PORT, SIM_HOST, SIM_API_KEY, SIM_CLOCK, SIM_SEED,
 * SIM_DAILY_LIMIT, SIM_TICK_MS, SIM_SPEED, SIM_FAULTS, SIM_LOG_LEVEL).
 * A bad setting prints one line naming it and exits 1.
 */

async function main(): Promise<void> {
  const parsed = parseSimEnv(process.env);
  if (!parsed.ok) {
    process.stderr.write(`${parsed.message}\n`);
    process.exit(1);
  }
  const env = parsed.value;
  const logger = createLogger({ level: env.SIM_LOG_LEVEL, secrets: [env.SIM_API_KEY], base: { component: 'sim' } });
  const sim = new Simulator({
    apiKey: env.SIM_API_KEY,
    clock: env.SIM_CLOCK,
    seed: env.SIM_SEED,
    dailyLimit: env.SIM_DAILY_LIMIT,
    tickMs: env.SIM_TICK_MS,
    speed: env.SIM_SPEED,
    faults: env.SIM_FAULTS,
    logger,
  });
  try {
    await sim.start({ port: env.SIM_PORT, host: env.SIM_HOST });
  } catch (err) {
    process.stderr.write(`cannot listen on ${env.SIM_HOST}:${env.SIM_PORT}: ${(err as Error).message}\n`);
    process.exit(1);
  }
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping');
    // A stuck close must not keep the process alive.
    setTimeout(() => process.exit(0), 3_000).unref();
    void sim
      .stop()
      .catch(() => undefined)
      .finally(() => {
        try {
          logger.flush();
        } catch {
          // The log destination may already be gone (closed pipe); exiting matters more.
        }
        process.exit(0);
      });
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
}

void main();
