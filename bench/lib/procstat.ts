import { readFileSync } from 'node:fs';

/**
 * Whole-machine CPU time from Linux `/proc/stat`, so a window can tell how
 * much CPU processes other than the server and the load generator took
 * (the machine may be shared). Undefined where `/proc/stat` is missing.
 */

/** Cumulative machine CPU time, in clock ticks. */
export interface MachineCpu {
  /** Ticks spent busy (user, nice, system, irq, softirq, steal). */
  readonly busy: number;
  /** All ticks, idle included. */
  readonly total: number;
}

/** Parses the aggregate `cpu` line of `/proc/stat` text; undefined when absent. */
export function parseProcStat(text: string): MachineCpu | undefined {
  const line = text.split('\n').find((l) => l.startsWith('cpu '));
  if (!line) return undefined;
  const f = line.trim().split(/\s+/).slice(1, 9).map(Number);
  if (f.length < 5 || f.some((n) => !Number.isFinite(n))) return undefined;
  const total = f.reduce((a, b) => a + b, 0);
  const idle = (f[3] ?? 0) + (f[4] ?? 0);
  return { busy: total - idle, total };
}

/** The machine's cumulative CPU time now, or undefined off Linux. */
export function machineCpu(): MachineCpu | undefined {
  try {
    return parseProcStat(readFileSync('/proc/stat', 'utf8'));
  } catch {
    return undefined;
  }
}

/** Busy cores between two readings (0…cpus), NaN when either is missing. */
export function busyCores(a: MachineCpu | undefined, b: MachineCpu | undefined, cpus: number): number {
  if (!a || !b || b.total <= a.total) return NaN;
  return ((b.busy - a.busy) / (b.total - a.total)) * cpus;
}

/**
 * Waits until the machine is quiet: `cores` or fewer busy over each of two
 * consecutive one-second samples, or `maxMs` passed. Resolves with the
 * time waited, ms (0 at once off Linux).
 */
export async function waitForQuiet(cores: number, maxMs: number, cpus: number): Promise<number> {
  const t0 = Date.now();
  let quiet = 0;
  let prev = machineCpu();
  if (!prev) return 0;
  while (Date.now() - t0 < maxMs && quiet < 2) {
    await new Promise((r) => setTimeout(r, 1_000));
    const next = machineCpu();
    quiet = busyCores(prev, next, cpus) <= cores ? quiet + 1 : 0;
    prev = next;
  }
  return Date.now() - t0;
}
