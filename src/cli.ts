#!/usr/bin/env node
import { run } from './cli/main.js';
import { exitAfterLogs } from './log.js';

/**
 * The `krx-bridge` executable (`npm start`, `npx krx-bridge`): see
 * src/cli/main.ts for its commands.
 */
void run(process.argv.slice(2)).then(exitAfterLogs);
