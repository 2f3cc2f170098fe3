import type { Change, SyntheticMarket } from '../lib/market.js';

/**
 * What the benchmark server process needs of each peer it compares: listen
 * on a port, take the changes of each tick, and stop. Each peer speaks its
 * own subscription protocol (see the load generator's matching client).
 */

/** The peers of the fan-out comparison. */
export const PEERS = ['bridge', 'socketio', 'naive', 'floor'] as const;
/** A peer name. */
export type PeerName = (typeof PEERS)[number];

/** A server under test. */
export interface Peer {
  /** Starts listening on 127.0.0.1, port 0; resolves with the port. */
  listen(): Promise<number>;
  /** Delivers one tick's changes, stamped `ts` (ms epoch, whole milliseconds). */
  publish(changes: readonly Change[], ts: number): void;
  /** Peer-specific figures (connections, buffered bytes, …). */
  stats(): Record<string, number>;
  /** Closes every connection and the listener. */
  close(): Promise<void>;
}

/** The message the comparison peers (all but the bridge) send for one change. */
export function patchMessage(topic: string, seq: number, ts: number, ops: unknown): object {
  return { type: 'patch', topic, seq, ts, ops };
}

/** Connection limits of the bridge peer's gateway (the other peers have none). */
export interface PeerOptions {
  /** Connections per client address; default unlimited, as the fan-out's clients all come from 127.0.0.1. */
  readonly maxConnectionsPerIp?: number;
  /** Connections in all; default the gateway's (18,000). */
  readonly maxConnections?: number;
}

/** Builds a peer by name; modules load lazily so one peer's dependencies do not weigh on another's run. */
export async function createPeer(name: PeerName, market: SyntheticMarket, opts: PeerOptions = {}): Promise<Peer> {
  switch (name) {
    case 'bridge':
      return new (await import('./bridge.js')).BridgePeer(market, opts);
    case 'socketio':
      return new (await import('./socketio.js')).SocketIoPeer(market);
    case 'naive':
      return new (await import('./naive.js')).NaivePeer(market);
    case 'floor':
      return new (await import('./floor.js')).FloorPeer(market);
  }
}
