/**
 * What the commands of the CLI use of the process, so tests can run them
 * in-process: output, the environment, whether stdout is a terminal, and
 * the interrupt that ends a command that runs until stopped.
 */

/** A command's view of its process. */
export interface CliIo {
  /** Writes to standard output. */
  out(text: string): void;
  /** Writes to standard error. */
  err(text: string): void;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Whether standard output is a terminal. */
  readonly isTTY: boolean;
  /** Terminal width in columns (80 when unknown). */
  readonly columns: number;
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
    columns: process.stdout.columns || 80,
    interrupted: () =>
      new Promise((resolve) => {
        process.once('SIGINT', () => resolve());
        process.once('SIGTERM', () => resolve());
      }),
  };
}
