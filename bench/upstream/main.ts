import { randomBytes } from 'node:crypto';
import { cpuMicros, serve } from '../lib/child.js';
import { StandIn, type StandInOptions } from './standin.js';

/**
 * The stand-in upstream's process for the end-to-end scenario, driven by
 * the orchestrator over IPC: `start` (listening, market at rest), `go`,
 * `pause`, `mark`. Its own process, so neither peer's CPU figure carries
 * the upstream's work.
 */

let standIn: StandIn | undefined;

serve(
  {
    async start(a: Omit<StandInOptions, 'apiKey'>) {
      await standIn?.close();
      const apiKey = randomBytes(16).toString('hex');
      standIn = new StandIn({ ...a, apiKey });
      const url = await standIn.listen();
      return { url, apiKey };
    },
    go() {
      if (!standIn) throw new Error('not started');
      standIn.go();
      return true;
    },
    pause() {
      standIn?.pause();
      return true;
    },
    mark() {
      if (!standIn) throw new Error('not started');
      return {
        ...standIn.counters(),
        skippedSteps: standIn.skippedSteps,
        lastAnswers: standIn.lastQuoteAnswers(),
        cpuUs: cpuMicros(),
        wallMs: performance.now(),
      };
    },
  },
  () => standIn?.close(),
);
