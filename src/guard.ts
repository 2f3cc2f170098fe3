import { exitAfterLogs, type Logger } from './log.js';

/**
 * The process's last line of defence: what happens to an error that nothing
 * else handled. Every route, frame handler and poll cycle handles its own
 * errors; this only catches a bug. A promise rejection nobody awaited left
 * no half-done work behind it: it is logged, counted, and the bridge keeps
 * serving. An exception thrown out of an event callback may have left state
 * half-updated: it is logged and counted, and the bridge drains its clients
 * (close 1001) and exits with code 70, so a supervisor restarts it clean.
 * See docs/OPERATIONS.md §Process errors.
 */

/** Exit code after an uncaught exception (EX_SOFTWARE, sysexits.h). */
export const EXIT_INTERNAL_ERROR = 70;

/** What the guard needs. */
export interface GuardDeps {
  readonly logger: Logger;
  /** Counts one error of `kind`. */
  count(kind: 'uncaught_exception' | 'unhandled_rejection'): void;
  /** Drains and stops the bridge; called once, on the first uncaught exception. */
  stop(): Promise<void>;
  /** Ends the process (`exitAfterLogs`, so the fatal line gets out); injectable for tests. */
  exit?: (code: number) => void;
  /** Longest wait for `stop`, ms; default 10,000. */
  stopTimeoutMs?: number;
}

/** Installs the handlers on `proc` (default `process`); returns a function removing them. */
export function installProcessGuard(deps: GuardDeps, proc: NodeJS.EventEmitter = process): () => void {
  const exit = deps.exit ?? exitAfterLogs;
  let stopping = false;
  const onRejection = (reason: unknown): void => {
    deps.count('unhandled_rejection');
    deps.logger.error({ err: reason }, 'unhandled promise rejection; still serving');
  };
  const onException = (err: Error): void => {
    deps.count('uncaught_exception');
    deps.logger.fatal({ err }, 'uncaught exception; draining and exiting');
    if (stopping) return;
    stopping = true;
    const force = setTimeout(() => exit(EXIT_INTERNAL_ERROR), deps.stopTimeoutMs ?? 10_000);
    force.unref?.();
    deps.stop().then(
      () => exit(EXIT_INTERNAL_ERROR),
      () => exit(EXIT_INTERNAL_ERROR),
    );
  };
  proc.on('unhandledRejection', onRejection);
  proc.on('uncaughtException', onException);
  return () => {
    proc.off('unhandledRejection', onRejection);
    proc.off('uncaughtException', onException);
  };
}
