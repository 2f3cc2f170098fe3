import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * Summaries of V8 CPU profiles (`--cpu-prof`): where a process's samples
 * landed, by function, self time only. Pure apart from reading the file.
 */

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
}

/** The parts of a `.cpuprofile` file used here. */
export interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** One function's share of the samples. */
export interface HotFunction {
  /** `name (file:line)`; V8's pseudo-entries such as `(garbage collector)` as they are. */
  readonly fn: string;
  /** Self time, ms. */
  readonly ms: number;
  /** Share of all sampled time, %. */
  readonly pct: number;
}

function label(n: ProfileNode, root: string): string {
  const f = n.callFrame;
  const name = f.functionName || '(anonymous)';
  if (!f.url) return name;
  const path = f.url.startsWith('file://') ? relative(root, new URL(f.url).pathname) : f.url;
  // Code compiled on the fly (tsx) reports line 0 for everything; a line is only shown when known.
  return f.lineNumber > 0 ? `${name} (${path}:${f.lineNumber + 1})` : `${name} (${path})`;
}

/** The `top` functions by self time; file paths relative to `root`. */
export function hotFunctions(p: CpuProfile, top = 15, root = process.cwd()): HotFunction[] {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  let total = 0;
  for (let i = 0; i < p.samples.length; i++) {
    const n = byId.get(p.samples[i]!);
    const dt = p.timeDeltas[i] ?? 0;
    if (!n || dt <= 0) continue;
    const key = label(n, root);
    self.set(key, (self.get(key) ?? 0) + dt);
    total += dt;
  }
  return [...self]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([fn, us]) => ({ fn, ms: Math.round(us / 100) / 10, pct: Math.round((us / total) * 1000) / 10 }));
}

/**
 * Summaries of every `.cpuprofile` in a directory (empty when there is
 * none), the main thread's first: Node writes one per thread, and the
 * main thread's file name carries thread id 0 (`CPU.<date>.<time>.<pid>.0.<n>`).
 */
export function summariseDir(dir: string, top = 15): { file: string; hot: HotFunction[] }[] {
  let files: string[];
  try {
    files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
  } catch {
    return [];
  }
  const main = (f: string): number => (/\.\d+\.0\.\d+\.cpuprofile$/.test(f) ? 0 : 1);
  files.sort((a, b) => main(a) - main(b) || a.localeCompare(b));
  return files.map((f) => ({ file: join(dir, f), hot: hotFunctions(JSON.parse(readFileSync(join(dir, f), 'utf8')) as CpuProfile, top) }));
}
