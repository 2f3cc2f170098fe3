import { z } from 'zod';
import { Rng } from '../random.js';

/**
 * Fault injection: switches that make the simulator misbehave the way a
 * real upstream can. Each fault applies to requests whose path and query
 * match its `match` (a substring, or `/regex/flags`), with probability
 * `rate` (default 1).
 */

const match = z.string().min(1).optional();
const rate = z.number().min(0).max(1).default(1);
const simple = z.object({ rate, match }).strict();

/** The fault settings (every fault optional; `null` in a merge removes one). */
export const FaultsSchema = z
  .object({
    /** Added delay before answering: `ms` plus a uniform `jitter` (ms). */
    latency: z.object({ ms: z.number().min(0), jitter: z.number().min(0).default(0), rate, match }).strict(),
    /** Server errors with one of `status` (500, 502, 503). */
    error: z
      .object({
        rate,
        match,
        status: z
          .array(z.union([z.literal(500), z.literal(502), z.literal(503)]))
          .min(1)
          .default([500, 502, 503]),
      })
      .strict(),
    /** Accept the request and never answer. */
    timeout: simple,
    /** Answer 200 with a truncated JSON body. */
    malformed: simple,
    /** Schema drift: rename fields, drop fields, make number fields non-numeric strings, or send numbers as strings of their digits. */
    drift: z
      .object({
        rate,
        match,
        rename: z.record(z.string(), z.string()).default({}),
        drop: z.array(z.string()).default([]),
        nonNumeric: z.array(z.string()).default([]),
        asString: z.array(z.string()).default([]),
      })
      .strict(),
    /** Destroy the connection without an answer. */
    reset: simple,
    /** Answer 429 (rate limited) whatever the budget. */
    rateLimit: simple,
    /** Answer 401 (invalid key) whatever the key. */
    unauthorized: simple,
  })
  .partial()
  .strict();

/** Validated fault settings. */
export type Faults = z.infer<typeof FaultsSchema>;

/** Fault settings as given (before defaults). */
export type FaultsInput = z.input<typeof FaultsSchema>;

/** Name of a fault. */
export type FaultName = keyof Faults;

/** A merge of fault settings: a fault set to `null` is removed. */
export const FaultsPatchSchema = z.record(z.string(), z.unknown());

/** The text a `nonNumeric` drift puts in place of a number. */
export const NON_NUMERIC = 'n/a';

function matches(pattern: string | undefined, target: string): boolean {
  if (pattern === undefined) return true;
  const re = /^\/(.*)\/([a-z]*)$/s.exec(pattern);
  if (re) {
    try {
      return new RegExp(re[1]!, re[2]).test(target);
    } catch {
      return false;
    }
  }
  return target.includes(pattern);
}

/** The live fault settings and the decisions drawn from them. */
export class FaultSwitch {
  private faults: Faults = {};
  private readonly rng: Rng;

  /** Fault switches with a seed for the random decisions. */
  constructor(seed: number, initial: FaultsInput = {}) {
    this.rng = new Rng(seed ^ 0xfa17);
    this.set(initial);
  }

  /** The current settings. */
  get(): Faults {
    return structuredClone(this.faults);
  }

  /** Replaces the settings (throws a zod error on invalid input). */
  set(input: unknown): void {
    this.faults = FaultsSchema.parse(input ?? {});
  }

  /** Merges settings: named faults are replaced, `null` removes one. */
  merge(patch: unknown): void {
    const p = FaultsPatchSchema.parse(patch ?? {});
    const next: Record<string, unknown> = { ...this.faults };
    for (const [k, v] of Object.entries(p)) {
      if (v === null) delete next[k];
      else next[k] = v;
    }
    this.faults = FaultsSchema.parse(next);
  }

  /** Removes every fault. */
  clear(): void {
    this.faults = {};
  }

  /** The settings of `name` when it fires for `target` (path and query), else undefined. */
  fires<K extends FaultName>(name: K, target: string): NonNullable<Faults[K]> | undefined {
    const f = this.faults[name];
    if (!f || !matches(f.match, target)) return undefined;
    return this.rng.next() < f.rate ? (f as NonNullable<Faults[K]>) : undefined;
  }

  /** A uniform number in [0, 1) from the fault generator. */
  random(): number {
    return this.rng.next();
  }
}

/** Applies a drift to a parsed body, in place, at every depth. */
export function applyDrift(body: unknown, d: { rename: Record<string, string>; drop: string[]; nonNumeric: string[]; asString: string[] }): unknown {
  if (Array.isArray(body)) {
    for (const item of body) applyDrift(item, d);
    return body;
  }
  if (body === null || typeof body !== 'object') return body;
  const o = body as Record<string, unknown>;
  for (const k of Object.keys(o)) {
    applyDrift(o[k], d);
    if (d.drop.includes(k)) {
      delete o[k];
      continue;
    }
    if (d.nonNumeric.includes(k) && typeof o[k] === 'number') o[k] = NON_NUMERIC;
    if (d.asString.includes(k) && typeof o[k] === 'number') o[k] = String(o[k]);
    const to = d.rename[k];
    if (to !== undefined && to !== k) {
      o[to] = o[k];
      delete o[k];
    }
  }
  return body;
}

/** A body cut in the middle, so it is no longer valid JSON. */
export function truncate(body: string): string {
  return body.slice(0, Math.max(1, Math.floor(body.length / 2)));
}
