import { EventEmitter } from 'eventemitter3';

/**
 * Typed events whose listeners cannot hurt their emitter: every listener is
 * called inside its own guard, so one that throws neither skips the other
 * listeners of that event nor unwinds the emitter's message loop. The
 * exception is handed to `listenerFailed`. Built on eventemitter3.
 */

type Fn = (...args: unknown[]) => void;

/** An emitter of the events in `E` (event name to listener type), with guarded listeners. */
export abstract class GuardedEmitter<E extends { [K in keyof E]: (...args: never[]) => void }> {
  // Untyped inside: the typed surface is this class's methods, and every
  // listener stored is a guard of type Fn rather than the caller's E[K].
  private readonly ee = new EventEmitter<string>();
  private readonly guards = new WeakMap<Fn, Map<keyof E, Fn>>();

  /** Adds a listener. */
  on<K extends keyof E & string>(event: K, listener: E[K]): this {
    this.ee.on(event, this.guard(event, listener));
    return this;
  }

  /** Adds a listener that is removed after its first call. */
  once<K extends keyof E & string>(event: K, listener: E[K]): this {
    this.ee.once(event, this.guard(event, listener));
    return this;
  }

  /** Removes a listener added with `on` or `once`. */
  off<K extends keyof E & string>(event: K, listener: E[K]): this {
    const g = this.guards.get(listener as unknown as Fn)?.get(event);
    if (g !== undefined) this.ee.off(event, g);
    return this;
  }

  /** Removes every listener of an event, or of every event. */
  removeAllListeners(event?: keyof E & string): this {
    this.ee.removeAllListeners(event);
    return this;
  }

  /** Number of listeners of an event. */
  listenerCount(event: keyof E & string): number {
    return this.ee.listenerCount(event);
  }

  /** Called with what a listener threw; the emitter carries on afterwards. */
  protected abstract listenerFailed(error: unknown, event: keyof E & string): void;

  /** Calls every listener of `event` with `args`; never throws. */
  protected emit<K extends keyof E & string>(event: K, ...args: Parameters<E[K]>): void {
    try {
      this.ee.emit(event, ...(args as unknown[]));
    } catch (err) {
      // Listeners are guarded; this is a last line of defence.
      this.listenerFailed(err, event);
    }
  }

  private guard<K extends keyof E & string>(event: K, listener: E[K]): Fn {
    const fn = listener as unknown as Fn;
    let byEvent = this.guards.get(fn);
    if (byEvent === undefined) {
      byEvent = new Map();
      this.guards.set(fn, byEvent);
    }
    let g = byEvent.get(event);
    if (g === undefined) {
      g = (...args: unknown[]) => {
        try {
          fn(...args);
        } catch (err) {
          this.listenerFailed(err, event);
        }
      };
      byEvent.set(event, g);
    }
    return g;
  }
}
