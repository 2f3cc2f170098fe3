import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DataDirInUse, DataDirLock, LOCK_FILE } from '../../src/persist/lock.js';

/** The hold of one process on its data directory. */

const dir = () => join(mkdtempSync(join(tmpdir(), 'krx-lock-')), 'data');

/** The pid of a process that has exited. */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(r.stdout);
}

describe('the data directory lock', () => {
  it('names its process, refuses a second holder while that process lives, and lets go', () => {
    const d = dir();
    const lock = DataDirLock.acquire(d);
    expect(readFileSync(join(d, LOCK_FILE), 'utf8')).toBe(`${process.pid}\n`);
    // Another bridge of this process, or of another live one: refused, with the holder named.
    const again = (): unknown => DataDirLock.acquire(d);
    expect(again).toThrow(DataDirInUse);
    expect(again).toThrow(new RegExp(`in use by process ${process.pid}`));
    try {
      DataDirLock.acquire(d);
    } catch (err) {
      expect(err).toMatchObject({ code: 'data_dir_in_use', pid: process.pid, dir: d });
    }
    lock.release();
    expect(existsSync(join(d, LOCK_FILE))).toBe(false);
    DataDirLock.acquire(d).release();
  });

  it('takes over a lock left by a process that is gone, one naming no process, or one naming this process that it did not take', () => {
    const d = dir();
    DataDirLock.acquire(d).release();
    // This process's own id, in a file it did not write: a container restarted after a crash runs its bridge under the same pid.
    for (const left of [`${deadPid()}\n`, 'not a pid', '', `${process.pid}\n`]) {
      writeFileSync(join(d, LOCK_FILE), left);
      const lock = DataDirLock.acquire(d);
      expect(readFileSync(join(d, LOCK_FILE), 'utf8')).toBe(`${process.pid}\n`);
      lock.release();
    }
  });

  it('takes over a lock of a zombie: a process killed whose parent has not collected it', async () => {
    const d = dir();
    DataDirLock.acquire(d).release();
    // `sleep 1` exits under a parent (the exec'd `sleep 10`) that never waits for it: a zombie until the parent ends. (With
    // `sleep 0` the shell could reap it before its exec, when the machine was busy: seen once in CI.)
    const parent = spawn('sh', ['-c', 'sleep 1 & echo $!; exec sleep 10'], { stdio: ['ignore', 'pipe', 'ignore'] });
    const pid = Number(await new Promise<string>((res) => parent.stdout.once('data', (b: Buffer) => res(String(b).trim()))));
    try {
      // Until it has exited (a second), it is a live holder.
      writeFileSync(join(d, LOCK_FILE), `${pid}\n`);
      if (!readFileSync(`/proc/${pid}/stat`, 'latin1').includes(') Z ')) expect(() => DataDirLock.acquire(d)).toThrow(`in use by process ${pid}`);
      for (let i = 0; i < 200 && !readFileSync(`/proc/${pid}/stat`, 'latin1').includes(') Z '); i++) await new Promise((r) => setTimeout(r, 20));
      expect(readFileSync(`/proc/${pid}/stat`, 'latin1')).toContain(') Z ');
      writeFileSync(join(d, LOCK_FILE), `${pid}\n`);
      const lock = DataDirLock.acquire(d);
      expect(readFileSync(join(d, LOCK_FILE), 'utf8')).toBe(`${process.pid}\n`);
      lock.release();
    } finally {
      parent.kill();
    }
  });

  it('removes the file at release only while it still names this process', () => {
    const d = dir();
    const lock = DataDirLock.acquire(d);
    // Taken over meanwhile (say, after this process was thought gone): the other holder's file stays.
    writeFileSync(join(d, LOCK_FILE), '1\n');
    lock.release();
    expect(readFileSync(join(d, LOCK_FILE), 'utf8')).toBe('1\n');
  });
});
