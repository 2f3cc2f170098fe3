import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { timeNumber } from '../calendar.js';
import type { SimClock } from '../clock.js';
import type { Market } from '../market/market.js';
import type { DailyBudget } from './budget.js';
import type { FaultSwitch } from './faults.js';
import type { Stats } from './stats.js';
import { readJson, sendJson } from './http.js';

/**
 * The simulator's own control routes under `/_sim/` (no API key, never
 * counted): faults, statistics, pausing and stepping the market, the call
 * budget, health, and the market's truth for one issue.
 */

/** Prefix of the control routes. */
export const CONTROL_PREFIX = '/_sim/';

const BudgetBody = z.object({ remaining: z.number().int().min(0) }).strict();

/** What the control routes drive of the simulator (the `Simulator` provides it). */
export interface ControlTarget {
  readonly clock: SimClock;
  readonly market: Market;
  readonly faults: FaultSwitch;
  readonly stats: Stats;
  readonly budget: DailyBudget;
  readonly paused: boolean;
  pause(): void;
  resume(): void;
  tick(): void;
  truth(code: string): Record<string, unknown> | undefined;
}

/** Handles a control request; the caller routes every `/_sim/` path here. */
export async function handleControl(sim: ControlTarget, req: IncomingMessage, res: ServerResponse, pathname: string): Promise<void> {
  const route = `${req.method ?? 'GET'} ${pathname.slice(CONTROL_PREFIX.length - 1)}`;
  try {
    const body = req.method === 'PUT' || req.method === 'POST' ? await readJson(req) : undefined;
    const out = dispatch(sim, route, body);
    if (out === undefined) sendJson(res, 404, { error: 'no such control route', route });
    else sendJson(res, 200, out);
  } catch (err) {
    const message = err instanceof z.ZodError ? err.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`).join('; ') : (err as Error).message;
    sendJson(res, 400, { error: message });
  }
}

function dispatch(sim: ControlTarget, route: string, body: unknown): unknown {
  const truth = /^GET \/truth\/(\w+)$/.exec(route);
  if (truth) return sim.truth(truth[1]!) ?? { error: 'unknown code' };
  switch (route) {
    case 'GET /health':
      return health(sim);
    case 'GET /faults':
      return sim.faults.get();
    case 'PUT /faults':
      sim.faults.merge(body);
      return sim.faults.get();
    case 'DELETE /faults':
      sim.faults.clear();
      return sim.faults.get();
    case 'GET /stats':
      return sim.stats.snapshot();
    case 'POST /stats/reset':
      sim.stats.reset();
      return sim.stats.snapshot();
    case 'POST /pause':
      sim.pause();
      return health(sim);
    case 'POST /resume':
      sim.resume();
      return health(sim);
    case 'POST /tick':
      sim.tick();
      return health(sim);
    case 'GET /budget':
      return { limit: sim.budget.limit, remaining: sim.budget.remaining() };
    case 'PUT /budget':
      sim.budget.setRemaining(BudgetBody.parse(body).remaining);
      return { limit: sim.budget.limit, remaining: sim.budget.remaining() };
    default:
      return undefined;
  }
}

function health(sim: ControlTarget): Record<string, unknown> {
  const m = sim.market;
  return {
    ok: true,
    clock: sim.clock.mode,
    paused: sim.paused,
    generation: m.generation,
    sessionDate: m.sessionDate,
    marketDate: m.time.date,
    marketTime: timeNumber(m.time.secs),
    phase: m.phase(),
    issues: m.universe.issues.length,
  };
}
