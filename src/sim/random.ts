/**
 * Deterministic randomness for the simulator. Two kinds:
 * - counter-based: `hash32`/`unit` give the same value for the same inputs,
 *   so a symbol's path can be replayed step by step without stored state;
 * - sequential: `Rng` for generating the universe once.
 */

/** A 32-bit integer hash of up to six integers (multiply–rotate mixing, murmur3 finaliser). */
export function hash32(a: number, b = 0, c = 0, d = 0, e = 0, f = 0): number {
  let h = Math.imul(a ^ 0x9e3779b9, 0xcc9e2d51);
  h = Math.imul((h << 13) | (h >>> 19), 5) + b;
  h = Math.imul(h ^ (h >>> 15), 0x85ebca6b) + c;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) + d;
  h = Math.imul(h ^ (h >>> 16), 0x27d4eb2f) + e;
  h = Math.imul(h ^ (h >>> 15), 0x165667b1) + f;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** A uniform number in [0, 1) from a hash of the inputs. */
export function unit(a: number, b = 0, c = 0, d = 0, e = 0, f = 0): number {
  return hash32(a, b, c, d, e, f) / 4294967296;
}

/**
 * An approximately standard normal number from a hash of the inputs: the
 * sum of four uniform bytes of one hash, scaled (bounded at about ±3.4).
 */
export function gauss(a: number, b = 0, c = 0, d = 0, e = 0): number {
  const h = hash32(a, b, c, d, e, 0x6a);
  const sum = (h & 0xff) + ((h >>> 8) & 0xff) + ((h >>> 16) & 0xff) + (h >>> 24);
  // Four uniforms on 0..255: mean 510, variance 4 * (256^2 - 1) / 12.
  return (sum - 510) / 147.8;
}

/** A 32-bit seed from a number or any string (FNV-1a). */
export function seedOf(seed: number | string): number {
  if (typeof seed === 'number' && Number.isFinite(seed)) return seed >>> 0;
  let h = 0x811c9dc5;
  for (const ch of String(seed)) {
    h ^= ch.codePointAt(0)!;
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** A 32-bit hash of a string, for keying counter-based randomness by code. */
export function hashString(s: string): number {
  return seedOf(s);
}

/** A small sequential PRNG (mulberry32). */
export class Rng {
  private state: number;

  /** A generator seeded with a 32-bit integer. */
  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** The next uniform number in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  /** One element of a non-empty list. */
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** A number whose logarithm is uniform in [ln lo, ln hi]. */
  logUniform(lo: number, hi: number): number {
    return Math.exp(Math.log(lo) + this.next() * (Math.log(hi) - Math.log(lo)));
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return this.next() < p;
  }
}
