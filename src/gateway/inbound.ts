import type { RawData } from 'ws';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics/metrics.js';
import type { CloseName } from '../protocol/errors.js';
import type { ClientMsg } from '../protocol/messages.js';
import { wireError } from './errors.js';
import { onGet, onPing, onResync, onSubscribe, onUnsubscribe, type HandlerContext } from './handlers.js';
import { parseClientFrame } from './requests.js';
import type { Session } from './session.js';

/**
 * The inbound side of a connection: flood and rate limits, frame parsing,
 * dispatch to the op handlers. A bad frame becomes an error frame; only a
 * sustained flood closes the connection (1008). See docs/PROTOCOL.md §7.
 */

/** What inbound handling needs besides the handler context. */
export interface InboundDeps {
  readonly ctx: HandlerContext;
  readonly metrics: Metrics;
  readonly logger: Logger;
  /** Closes a session with a server close code. */
  close(s: Session, name: CloseName): void;
}

function rawBytes(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}

/** Handles one client frame of `s`. Never throws. */
export function handleInbound(deps: InboundDeps, s: Session, data: RawData, isBinary: boolean): void {
  const { ctx, metrics } = deps;
  const now = ctx.now();
  s.lastSeen = now;
  const bytes = rawBytes(data);
  metrics.bytesIn.inc(bytes.length);
  if (s.closing) return;
  if (s.flood.hit(now)) return deps.close(s, 'policy');
  if (!s.inbound.take(now)) {
    metrics.messagesIn.inc({ op: 'rate_limited' });
    if (s.violations.hit(now)) return deps.close(s, 'policy');
    return ctx.error(s, wireError('rate_limited', `at most ${s.limits.maxMessagesPerSecond} messages per second`));
  }
  if (isBinary) {
    metrics.messagesIn.inc({ op: 'binary' });
    return ctx.error(s, wireError('bad_request', 'binary frames are not accepted; send JSON text'));
  }
  const parsed = parseClientFrame(bytes.toString('utf8'));
  if (!parsed.ok) {
    metrics.messagesIn.inc({ op: 'invalid' });
    return ctx.error(s, parsed.error, parsed.id);
  }
  metrics.messagesIn.inc({ op: parsed.msg.op });
  try {
    dispatch(ctx, s, parsed.msg);
  } catch (err) {
    deps.logger.error({ err, session: s.id, op: parsed.msg.op }, 'request handler failed');
    ctx.error(s, wireError('internal', 'an unexpected server error occurred'), parsed.msg.id);
  }
}

function dispatch(ctx: HandlerContext, s: Session, msg: ClientMsg): void {
  switch (msg.op) {
    case 'subscribe':
      return onSubscribe(ctx, s, msg);
    case 'unsubscribe':
      return onUnsubscribe(ctx, s, msg);
    case 'get':
      return onGet(ctx, s, msg);
    case 'resync':
      return onResync(ctx, s, msg);
    case 'ping':
      return onPing(ctx, s, msg.id);
  }
}
