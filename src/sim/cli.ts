#!/usr/bin/env node
import { runSimulator } from './run.js';

/** `npm run sim`: the upstream simulator as a process, configured from the environment (see run.ts). */
void runSimulator();
