import type { CliIo } from '../../src/cli/io.js';

/** A `CliIo` recording standard output and error, for running the commands in-process; `stop()` is the interrupt (SIGINT). */
export function fakeIo(env: Record<string, string> = {}, isTTY = false, size: { columns?: number; rows?: number } = {}) {
  let out = '';
  let err = '';
  let stop: () => void = () => undefined;
  const stopped = new Promise<void>((r) => (stop = r));
  const io: CliIo = {
    out: (t) => void (out += t),
    err: (t) => void (err += t),
    env,
    isTTY,
    columns: size.columns ?? 120,
    rows: size.rows ?? 24,
    interrupted: () => stopped,
  };
  return { io, out: () => out, err: () => err, stop };
}

/** The frames a table drew (each redraw starts with ESC[J, clear to the end of the screen), without the cursor moves. */
export function frames(out: string): string[] {
  return out
    .split('\x1b[J')
    .slice(1)
    .map((f) => f.split('\x1b[')[0]!);
}

/** The lines each redraw moved the cursor up by (ESC[nF), in order. */
export function cursorUps(out: string): number[] {
  return out
    .split('\x1b[')
    .slice(1)
    .map((s) => /^(\d+)F/.exec(s)?.[1])
    .filter((n) => n !== undefined)
    .map(Number);
}

/** The last frame a table drew. */
export function lastFrame(out: string): string {
  return frames(out).at(-1) ?? '';
}
