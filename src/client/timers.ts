/**
 * The client's timers in one place: a few named ones (at most one of each
 * name at a time) and anonymous one-shot retries, so a reconnect or `close()`
 * can cancel everything pending at once.
 */

type Handle = ReturnType<typeof setTimeout>;

/** Named timers plus a pool of one-shot retries. */
export class Timers<N extends string> {
  private readonly named = new Map<N, Handle>();
  private readonly retries = new Set<Handle>();

  /** Runs `fn` after `ms`, replacing a pending timer of the same name. */
  set(name: N, ms: number, fn: () => void): void {
    this.clear(name);
    this.named.set(
      name,
      setTimeout(() => {
        this.named.delete(name);
        fn();
      }, ms),
    );
  }

  /** Cancels the timer of a name, if pending. */
  clear(name: N): void {
    const t = this.named.get(name);
    if (t !== undefined) clearTimeout(t);
    this.named.delete(name);
  }

  /** Runs `fn` once after `ms`, unless `clearRetries` or `clearAll` comes first. */
  later(ms: number, fn: () => void): void {
    const t = setTimeout(() => {
      this.retries.delete(t);
      fn();
    }, ms);
    this.retries.add(t);
  }

  /** Cancels every pending retry. */
  clearRetries(): void {
    for (const t of this.retries) clearTimeout(t);
    this.retries.clear();
  }

  /** Cancels everything. */
  clearAll(): void {
    for (const name of [...this.named.keys()]) this.clear(name);
    this.clearRetries();
  }
}
