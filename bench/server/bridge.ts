import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { LocalBus } from '../../src/bus/bus.js';
import { Gateway } from '../../src/gateway/gateway.js';
import { Metrics } from '../../src/metrics/metrics.js';
import { Demand } from '../../src/poller/demand.js';
import { StateStore } from '../../src/state/store.js';
import { FEED, type Change, type SyntheticMarket } from '../lib/market.js';
import type { Peer, PeerOptions } from './peer.js';

/**
 * The bridge as deployed, minus the poller: its `StateStore`, `LocalBus`
 * and `Gateway`, fed by the tick source. Each tick applies the whole
 * market's rows (as the poller applies a whole list body: unchanged rows
 * diff to nothing) and publishes the resulting batch.
 */
export class BridgePeer implements Peer {
  private readonly http: HttpServer = createServer();
  private readonly store = new StateStore();
  private readonly bus = new LocalBus();
  private readonly gateway: Gateway;

  /**
   * A bridge holding the market's current rows (every topic at seq 1). The
   * gateway admits any number of connections per address unless `opts` says
   * otherwise (the fan-out's clients all come from 127.0.0.1).
   */
  constructor(
    private readonly market: SyntheticMarket,
    opts: PeerOptions = {},
  ) {
    this.store.apply(FEED.channel, FEED.market, market.rows, Date.now());
    const codes = new Set(market.codes);
    this.gateway = new Gateway({
      server: this.http,
      store: this.store,
      bus: this.bus,
      demand: new Demand(),
      symbols: { has: (m, c) => m === FEED.market && codes.has(c) },
      onDemand: { get: () => Promise.reject(new Error('no upstream in the fan-out benchmark')) },
      metrics: new Metrics(),
      maxConnectionsPerIp: opts.maxConnectionsPerIp ?? 1_000_000,
      ...(opts.maxConnections !== undefined ? { maxConnections: opts.maxConnections } : {}),
    });
  }

  /** Listens on 127.0.0.1, port 0; the gateway serves `/ws`. */
  listen(): Promise<number> {
    return new Promise((resolve) => this.http.listen(0, '127.0.0.1', () => resolve((this.http.address() as AddressInfo).port)));
  }

  /** Applies the market's rows to the store and publishes the changes on the bus. */
  publish(_changes: readonly Change[], ts: number): void {
    this.bus.publish(this.store.apply(FEED.channel, FEED.market, this.market.rows, ts));
  }

  /** Gateway counts, and topics whose store seq differs from the tick source's (must be 0). */
  stats(): Record<string, number> {
    const s = this.gateway.stats();
    let mismatch = 0;
    const seqs = this.market.seqs;
    for (let i = 0; i < seqs.length; i++) {
      if (this.store.entry(FEED.channel, FEED.market, this.market.codes[i]!)?.seq !== seqs[i]) mismatch++;
    }
    return { connections: s.clients, behind: s.behind, topics: s.topics, seqMismatch: mismatch };
  }

  /** Closes the gateway and the listener. */
  async close(): Promise<void> {
    await this.gateway.close(1_000);
    await new Promise<void>((resolve) => this.http.close(() => resolve()));
  }
}
