import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { KrxClient } from '../../src/client/index.js';
import { startHarness, type Harness } from '../gateway/harness.js';

/**
 * The SDK against the real gateway when the server refuses a request for
 * the message rate: the refusal carries the request's id, so the pending
 * request rejects with `rate_limited` at once instead of waiting for its
 * own timeout.
 */

let h: Harness | undefined;
let k: KrxClient | undefined;
afterEach(async () => {
  await k?.close();
  k = undefined;
  await h?.close();
  h = undefined;
});

describe('a request the gateway refuses for the message rate', () => {
  it('rejects with rate_limited (retryable) promptly, not with a timeout', async () => {
    // The gateway's monotonic clock stands still: its bucket of 2 × 5 messages never refills, whatever the SDK's pacing.
    h = await startHarness({ limits: { maxMessagesPerSecond: 5 }, monotonic: () => 0 });
    k = new KrxClient(h.url, { WebSocket, requestTimeoutMs: 8000 });
    for (let i = 0; i < 10; i++) await k.ping();
    const asked = performance.now();
    const err = await k.get('master', 'kospi', '000001').then(
      () => undefined,
      (e: unknown) => e,
    );
    const took = performance.now() - asked;
    expect(err).toMatchObject({ code: 'rate_limited', retryable: true });
    // The SDK paces itself (a token every 250 ms at 80 % of 5 a second), then the refusal comes back.
    expect(took).toBeLessThan(2000);
    expect(h.onDemand.calls).toEqual([]);
    // A ping refused the same way rejects the same way.
    await expect(k.ping()).rejects.toMatchObject({ code: 'rate_limited' });
  });
});
