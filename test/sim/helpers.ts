import { request } from 'undici';
import { Simulator, type SimulatorOptions } from '../../src/sim/index.js';

/** A started simulator and a GET helper for tests. */
export interface Running {
  readonly sim: Simulator;
  readonly url: string;
  get(
    path: string,
    headers?: Record<string, string>,
  ): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string; json: () => unknown }>;
  stop(): Promise<void>;
}

/** Starts a simulator on 127.0.0.1, port 0. */
export async function startSim(opts: SimulatorOptions = {}): Promise<Running> {
  const sim = new Simulator({ tickMs: 0, ...opts });
  const { url } = await sim.start({ port: 0 });
  return {
    sim,
    url,
    async get(path, headers = { apikey: 'sim-key' }) {
      const res = await request(url + path, { headers });
      const text = await res.body.text();
      return { status: res.statusCode, headers: res.headers, text, json: () => JSON.parse(text) as unknown };
    },
    stop: () => sim.stop(),
  };
}

/** A fixed wall clock at a KST date and time (`YYYY-MM-DD`, `HH:MM`). */
export function kstAt(date: string, hhmm: string): number {
  return Date.parse(`${date}T${hhmm}:00+09:00`);
}
