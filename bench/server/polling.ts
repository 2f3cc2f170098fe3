/**
 * What the end-to-end scenario's server process needs of each peer: poll
 * the upstream stand-in itself, serve its clients, report its counters and
 * every topic's last seq. Unlike the fan-out peers (peer.ts) nothing feeds
 * these peers ticks: they see the market only through HTTP.
 */

/** The peers of the end-to-end comparison. */
export const POLLING_PEERS = ['bridge', 'socketio'] as const;
/** A polling peer's name. */
export type PollingPeerName = (typeof POLLING_PEERS)[number];

/** Where the upstream stand-in listens and the key it wants. */
export interface UpstreamTarget {
  readonly url: string;
  readonly apiKey: string;
}

/** A server under test that polls the upstream. */
export interface PollingPeer {
  /** Starts serving on 127.0.0.1 and polling; resolves with the port once it can serve both markets. */
  start(): Promise<number>;
  /** Peer-specific counters (connections, polls, changes, …). */
  stats(): Record<string, number> | Promise<Record<string, number>>;
  /** The seq each topic has reached (0 for a topic never seen), by position in `topics`. */
  seqs(topics: readonly string[]): number[];
  /** Stops polling, closes every connection and the listener. */
  close(): Promise<void>;
}

/** Builds a polling peer by name; modules load lazily so one peer's dependencies do not weigh on the other's run. */
export async function createPollingPeer(name: PollingPeerName, upstream: UpstreamTarget): Promise<PollingPeer> {
  switch (name) {
    case 'bridge':
      return new (await import('./e2e-bridge.js')).BridgePollingPeer(upstream);
    case 'socketio':
      return new (await import('./e2e-socketio.js')).SocketIoPollingPeer(upstream);
  }
}
