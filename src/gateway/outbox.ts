/**
 * What waits to be written to one connection besides its tick's updates:
 * answers to its requests, feed statuses, and messages made one by one as
 * they are written (a subscribe's snapshots, snapshots.ts), in the order
 * they were sent. A connection's Outbox exists only while something waits.
 * See docs/PROTOCOL.md §7.
 */

/** Messages made as they are about to be written; `return()` ends one that will not be (the connection closed). */
export type Messages = Iterator<string, unknown>;

/** Messages waiting for one connection, in order. */
export class Outbox {
  private readonly items: (string | Messages)[] = [];
  /** Characters of the serialised messages waiting (not counting those still to be made). */
  chars = 0;

  /** Adds a serialised message, or messages to make when their turn comes. */
  push(m: string | Messages): void {
    this.items.push(m);
    if (typeof m === 'string') this.chars += m.length;
  }

  /** The next message, made now if it is of a `Messages`; undefined when nothing waits any more. */
  next(): string | undefined {
    const items = this.items;
    while (items.length > 0) {
      const head = items[0]!;
      if (typeof head === 'string') {
        items.shift();
        this.chars -= head.length;
        return head;
      }
      const r = head.next();
      if (r.done !== true) return r.value;
      items.shift();
    }
    return undefined;
  }

  /** Drops everything: messages still to be made are ended. */
  clear(): void {
    for (const m of this.items.splice(0)) if (typeof m !== 'string') m.return?.();
    this.chars = 0;
  }
}
