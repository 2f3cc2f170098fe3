import type { ErrorMsg, PatchMsg, SnapshotMsg, StatusMsg, WelcomeMsg } from '../protocol/wire.js';
import { isPatch, isSnapshot, isStatus, isWelcome } from './guards.js';

/**
 * Server frames to messages: parse once, accept a single message or a batch,
 * route each message by `type` after a cheap shape check. Unknown types are
 * ignored, as protocol v1 allows new ones (docs/PROTOCOL.md §1, §9).
 */

/** Where each kind of server message goes. */
export interface FrameHandler {
  welcome(m: WelcomeMsg): void;
  snapshot(m: SnapshotMsg): void;
  patch(m: PatchMsg): void;
  /** `subscribed`, `unsubscribed`, `result`, `pong`: answers matched by `id`. */
  reply(m: { type: string; id?: unknown }): void;
  status(m: StatusMsg): void;
  error(m: ErrorMsg): void;
  /** A message of a known type whose fields are not usable (or a message that is not an object). */
  bad(what: string): void;
}

/** The messages of a frame, or undefined when it is not JSON. */
export function parseFrame(text: string): unknown[] | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  return Array.isArray(parsed) ? parsed : [parsed];
}

/** Hands one message to its handler. */
export function dispatch(m: unknown, h: FrameHandler): void {
  const type = m !== null && typeof m === 'object' ? (m as { type?: unknown }).type : undefined;
  switch (type) {
    case 'patch':
      return isPatch(m) ? h.patch(m) : h.bad('patch');
    case 'snapshot':
      return isSnapshot(m) ? h.snapshot(m) : h.bad('snapshot');
    case 'subscribed':
    case 'unsubscribed':
    case 'result':
    case 'pong':
      return h.reply(m as { type: string; id?: unknown });
    case 'status':
      return isStatus(m) ? h.status(m) : h.bad('status');
    case 'error':
      return h.error(m as ErrorMsg);
    case 'welcome':
      return isWelcome(m) ? h.welcome(m) : h.bad('welcome');
    case undefined:
      return h.bad('message');
    default:
      return;
  }
}
