import { readFileSync } from 'node:fs';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type * as M from '../../src/protocol/messages.js';
import type * as W from '../../src/protocol/wire.js';
import { wireTypes } from '../../scripts/wire-types.js';

/**
 * src/protocol/wire.ts, the plain types the SDK declares, against the zod
 * schemas they come from: current, and each equal to its `z.infer` (checked
 * by tsc over this file in `npm test`).
 */

describe('src/protocol/wire.ts', () => {
  it('is what `npm run docs` generates from src/protocol/messages.ts', () => {
    expect(readFileSync(new URL('../../src/protocol/wire.ts', import.meta.url), 'utf8')).toBe(wireTypes());
  }, 30_000);

  it('declares the same types as the zod schemas', () => {
    expectTypeOf<W.ClientMsg>().toEqualTypeOf<M.ClientMsg>();
    expectTypeOf<W.ServerMsg>().toEqualTypeOf<M.ServerMsg>();
    expectTypeOf<W.SubscribeMsg>().toEqualTypeOf<M.SubscribeMsg>();
    expectTypeOf<W.UnsubscribeMsg>().toEqualTypeOf<M.UnsubscribeMsg>();
    expectTypeOf<W.GetMsg>().toEqualTypeOf<M.GetMsg>();
    expectTypeOf<W.ResyncMsg>().toEqualTypeOf<M.ResyncMsg>();
    expectTypeOf<W.PingMsg>().toEqualTypeOf<M.PingMsg>();
    expectTypeOf<W.PatchOp>().toEqualTypeOf<M.PatchOp>();
    expectTypeOf<W.WelcomeMsg>().toEqualTypeOf<M.WelcomeMsg>();
    expectTypeOf<W.SubscribedMsg>().toEqualTypeOf<M.SubscribedMsg>();
    expectTypeOf<W.UnsubscribedMsg>().toEqualTypeOf<M.UnsubscribedMsg>();
    expectTypeOf<W.SnapshotMsg>().toEqualTypeOf<M.SnapshotMsg>();
    expectTypeOf<W.PatchMsg>().toEqualTypeOf<M.PatchMsg>();
    expectTypeOf<W.StatusMsg>().toEqualTypeOf<M.StatusMsg>();
    expectTypeOf<W.ResultMsg>().toEqualTypeOf<M.ResultMsg>();
    expectTypeOf<W.ErrorMsg>().toEqualTypeOf<M.ErrorMsg>();
    expectTypeOf<W.PongMsg>().toEqualTypeOf<M.PongMsg>();
  });
});
