/**
 * What the commands of the CLI use of the process, so tests can run them
 * in-process: output, the environment, whether stdout is a terminal and its
 * size, and the interrupt that ends a command that runs until stopped.
 */

/** The bridge `tail` and `get` talk to when neither `--url` nor `KRX_BRIDGE_URL` names one. */
export const DEFAULT_URL = 'ws://localhost:8080/ws';

/** A command's view of its process. */
export interface CliIo {
  /** Writes to standard output. */
  out(text: string): void;
  /** Writes to standard error. */
  err(text: string): void;
  /** The environment (`KRX_BRIDGE_URL`, `KRX_BRIDGE_TOKEN`, the settings of `serve`). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Whether standard output is a terminal. */
  readonly isTTY: boolean;
  /** Terminal width in columns (80 when unknown). */
  readonly columns: number;
  /** Terminal height in rows (24 when unknown); the live table of `tail` is kept within it. */
  readonly rows: number;
  /** Resolves on SIGINT or SIGTERM. */
  interrupted(): Promise<void>;
}

/** A failure the CLI reports as one line on standard error, exiting with `exitCode`. */
export class CliError extends Error {
  override readonly name = 'CliError';
  /** Stable code of CLI usage errors. */
  readonly code = 'cli_usage';
  /** @param exitCode 1 for a usage error, 2 when the bridge cannot be reached or refuses */
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/** The real process. */
export function processIo(): CliIo {
  // A reader that went away (`krx-bridge tail … | head`) ends the command, quietly.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(0);
    throw err;
  });
  return {
    out: (t) => void process.stdout.write(t),
    err: (t) => void process.stderr.write(t),
    env: process.env,
    isTTY: process.stdout.isTTY === true,
    // Read at each use: the terminal may be resized while `tail` runs.
    get columns() {
      return process.stdout.columns || 80;
    },
    get rows() {
      return process.stdout.rows || 24;
    },
    interrupted: () =>
      new Promise((resolve) => {
        process.once('SIGINT', () => resolve());
        process.once('SIGTERM', () => resolve());
      }),
  };
}
