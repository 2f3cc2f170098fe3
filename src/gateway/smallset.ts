/**
 * A set of strings kept in a plain array while it is small, and in a Set
 * once it grows: a connection's few topics cost a few words each instead
 * of a hash table sized for growth. Insertion order is kept.
 */

/** Entries past which the array becomes a Set (linear scans stay short). */
const ARRAY_MAX = 32;

/** A string set, array-backed while small. */
export class SmallSet implements Iterable<string> {
  private list: string[] | undefined;
  private set: Set<string> | undefined;

  /** Number of entries. */
  get size(): number {
    return this.set !== undefined ? this.set.size : (this.list?.length ?? 0);
  }

  /** Whether `v` is held. */
  has(v: string): boolean {
    if (this.set !== undefined) return this.set.has(v);
    return this.list !== undefined && this.list.includes(v);
  }

  /** Adds `v`; false when it was already held. */
  add(v: string): boolean {
    if (this.set !== undefined) {
      if (this.set.has(v)) return false;
      this.set.add(v);
      return true;
    }
    const list = (this.list ??= []);
    if (list.includes(v)) return false;
    if (list.length < ARRAY_MAX) list.push(v);
    else {
      this.set = new Set(list);
      this.set.add(v);
      this.list = undefined;
    }
    return true;
  }

  /** Removes `v`; false when it was not held. */
  delete(v: string): boolean {
    if (this.set !== undefined) return this.set.delete(v);
    const list = this.list;
    const i = list === undefined ? -1 : list.indexOf(v);
    if (i < 0) return false;
    list!.splice(i, 1);
    if (list!.length === 0) this.list = undefined;
    return true;
  }

  /** The entries in insertion order. */
  [Symbol.iterator](): Iterator<string> {
    return (this.set ?? this.list ?? []).values();
  }
}
