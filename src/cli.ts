#!/usr/bin/env node
import { Bridge } from './bridge.js';
import { ConfigError, loadConfig } from './config/config.js';

/**
 * `npm start`: reads the configuration (environment and flags), starts the
 * bridge, drains on SIGTERM/SIGINT (clients get close 1001; exit 0), and
 * re-reads the token file on SIGHUP.
 */
async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`krx-bridge: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  const bridge = new Bridge(config);
  const stop = (signal: string) => {
    bridge.logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), 15_000);
    force.unref();
    bridge.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        bridge.logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
  process.on('SIGHUP', () => void bridge.reloadTokens());
  try {
    await bridge.start();
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const line = e.code === 'EADDRINUSE' ? `port ${config.PORT} is already in use (set PORT)` : e.message;
    process.stderr.write(`krx-bridge: cannot start: ${line}\n`);
    await bridge.stop().catch(() => undefined);
    process.exit(1);
  }
}

void main();
