import type { Endpoint } from '../../upstream/catalogue.js';
import type { Market } from '../market/market.js';
import type { Issue } from '../market/universe.js';

/**
 * What a response builder gets and gives back.
 */

/** Inputs of a response builder. */
export interface Ctx {
  readonly market: Market;
  readonly endpoint: Endpoint;
  /** Parameters after the entry's zod schema. */
  readonly params: Readonly<Record<string, unknown>>;
}

/** Why a request is refused with 400. */
export type Refusal = 'invalidCode' | 'badParameter' | 'notProvided';

/** A built body (before its envelope), or a refusal. */
export type Outcome = { ok: true; body: Record<string, unknown> } | { ok: false; refusal: Refusal };

/** Builds the body of one kind of endpoint. */
export type Builder = (ctx: Ctx) => Outcome;

/** A successful outcome. */
export const ok = (body: Record<string, unknown>): Outcome => ({ ok: true, body });

/** A refused outcome. */
export const refuse = (refusal: Refusal): Outcome => ({ ok: false, refusal });

/** Thrown inside builders to refuse; caught by the dispatcher. */
export class Refused extends Error {
  /** A refusal of the given kind. */
  constructor(readonly refusal: Refusal) {
    super(refusal);
    this.name = 'Refused';
  }
}

/** The issue named by the path's market and issue code; refuses with invalidCode otherwise. */
export function issueOf(ctx: Ctx, code = String(ctx.params.issuecode)): Issue {
  const issue = ctx.market.universe.byCode.get(code);
  if (!issue || issue.market !== ctx.params.marketcode) throw new Refused('invalidCode');
  return issue;
}

/** The API family of the entry. */
export function isV2(ctx: Ctx): boolean {
  return ctx.endpoint.family === 'v2';
}

/**
 * The name of the date of history-like rows (history, short selling,
 * foreign holding, index history): the provider's v2 examples date them
 * `BzDd`, v3 `trdDd`.
 */
export function rowDateKey(ctx: Ctx): 'BzDd' | 'trdDd' {
  return isV2(ctx) ? 'BzDd' : 'trdDd';
}

/** `row` with its `trdDd` renamed to `key` (first, as the provider puts it). */
export function datedAs(key: 'BzDd' | 'trdDd', row: Record<string, unknown>): Record<string, unknown> {
  if (key === 'trdDd') return row;
  const { trdDd, ...rest } = row;
  return { [key]: trdDd, ...rest };
}

/** Rounds to 2 decimals. */
export function r2(x: number): number {
  return Math.round(x * 100) / 100;
}

/** A `YYYYMMDD` date as the number the provider's payloads carry. */
export function dateNum(date: string): number {
  return Number(date);
}
