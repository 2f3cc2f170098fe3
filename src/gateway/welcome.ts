import { CHANNELS, MARKETS, PROTOCOL_VERSION, RESOURCES, type Limits } from '../protocol/constants.js';

/**
 * The `welcome` message: first frame of every connection.
 * See docs/PROTOCOL.md §5.
 */

/** The serialised `welcome` of a connection with `limits`; `server` is `krx-bridge/<version>`. */
export function welcomeFrame(server: string, epoch: string, heartbeatMs: number, limits: Limits, ts: number, replay?: ReplayInfo): string {
  return JSON.stringify({
    type: 'welcome',
    version: PROTOCOL_VERSION,
    server,
    epoch,
    heartbeatMs,
    limits,
    channels: CHANNELS,
    markets: MARKETS,
    resources: RESOURCES,
    ts,
    ...(replay ? { replay } : {}),
  });
}

/** What a replay connection's `welcome` says of its replay. */
export interface ReplayInfo {
  readonly date: string;
  readonly from: string;
  readonly to: string;
  readonly speed: number | 'max';
}
