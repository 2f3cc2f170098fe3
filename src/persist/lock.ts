import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { resolve } from 'node:path';

/**
 * One process per data directory. The state journal and the recorder write
 * under DATA_DIR as if they were alone: a second bridge started on the same
 * directory (`npm start` twice, say, the second failing on its port) would
 * write its own snapshot over the first's, delete the journal the first is
 * appending to, and mark a clean stop for an epoch that is not the first's.
 * So a bridge holds `DATA_DIR/krx-bridge.pid` while it runs: the file names
 * the process, and a start finds it held by a live process and refuses.
 * A file left by a process that is gone (a crash, SIGKILL; a zombie is
 * gone) is taken over,
 * and so is one naming this process's own id that this process did not
 * take (a container restarted after a crash runs its bridge under the same
 * pid). Process ids are only compared within one pid namespace: a
 * directory shared by containers is not protected, and is not supported.
 */

/** The lock file's name under DATA_DIR. */
export const LOCK_FILE = 'krx-bridge.pid';

/** A start refused: another live process holds the data directory. Code `data_dir_in_use`. */
export class DataDirInUse extends Error {
  readonly code = 'data_dir_in_use';

  /** `dir` is held by process `pid`. */
  constructor(
    readonly dir: string,
    readonly pid: number,
  ) {
    super(`DATA_DIR ${dir} is in use by process ${pid} (another krx-bridge?): stop it, or give this one another DATA_DIR`);
  }
}

/** The lock files this process holds (resolved paths). */
const heldHere = new Set<string>();

/**
 * Whether process `pid` is running (one we may not signal is running too).
 * A zombie is not: it has exited, its parent has not yet collected it (a
 * bridge killed under a shell or an init that does not reap), and signal 0
 * still reaches it. Linux says so in `/proc/<pid>/stat`; elsewhere a
 * process that can be signalled counts as running.
 */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  return !zombie(pid);
}

/** Whether `/proc` shows process `pid` exited and not yet collected (state `Z`, after the command's closing parenthesis). */
function zombie(pid: number): boolean {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return false;
  }
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z';
}

/** The process a lock file names, or undefined when it names none. */
function holderOf(path: string): number | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  const pid = Number(text.trim());
  return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
}

/** The data directory held by this process until `release`. */
export class DataDirLock {
  private held = true;

  private constructor(
    readonly path: string,
    private readonly pid: number,
  ) {}

  /**
   * Holds `dir` for process `pid` (default this one), creating the directory
   * if needed. Throws `DataDirInUse` when a live process holds it (this one
   * too: two bridges of one process must not share a directory either); a
   * lock of a process that is gone, or an unreadable one, is replaced.
   */
  static acquire(dir: string, pid = process.pid): DataDirLock {
    mkdirSync(dir, { recursive: true });
    const path = resolve(dir, LOCK_FILE);
    for (let attempt = 0; ; attempt++) {
      try {
        const fd = openSync(path, 'wx');
        try {
          writeSync(fd, `${pid}\n`);
        } finally {
          closeSync(fd);
        }
        heldHere.add(path);
        return new DataDirLock(path, pid);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const holder = holderOf(path);
      // This process's own id names a live holder only when this process took the lock. Otherwise the file is an
      // earlier process's that had the same id: a container restarted after a crash runs its bridge under the same pid.
      const live = holder !== undefined && (holder === process.pid ? heldHere.has(path) : alive(holder));
      if (live) throw new DataDirInUse(dir, holder);
      // Left by a process that is gone: replaced, once (a second failure means another start took it meanwhile).
      if (attempt > 0) throw new DataDirInUse(dir, holder ?? 0);
      try {
        unlinkSync(path);
      } catch {
        // Removed meanwhile by whoever took it: the next attempt finds out.
      }
    }
  }

  /** Lets the directory go (the file is removed only while it still names this process). */
  release(): void {
    if (!this.held) return;
    this.held = false;
    heldHere.delete(this.path);
    if (holderOf(this.path) !== this.pid) return;
    try {
      unlinkSync(this.path);
    } catch {
      // Already gone.
    }
  }
}
