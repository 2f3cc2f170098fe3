import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Every Prometheus metric the bridge exports, in one registry per bridge
 * instance (so several bridges in one process, as in tests, do not collide).
 * Served as text at `/metrics`; each is listed in docs/OPERATIONS.md.
 */
export class Metrics {
  /** The registry `/metrics` renders. */
  readonly registry = new Registry();

  /** Open live WebSocket connections (`/ws`). */
  readonly clients = new Gauge({ name: 'krx_clients', help: 'Open live WebSocket connections (/ws; replays are krx_replays)', registers: [this.registry] });
  /** Replay connections (`/ws/replay`) holding a slot of `MAX_REPLAYS`: open, or being checked. */
  readonly replays = new Gauge({
    name: 'krx_replays',
    help: 'Replay connections (/ws/replay) holding one of MAX_REPLAYS: open, or their query being checked',
    registers: [this.registry],
  });
  /** Subscribed topics across connections (a wildcard counts once). */
  readonly topics = new Gauge({ name: 'krx_topics', help: 'Distinct subscribed topics', registers: [this.registry] });
  /** Connections accepted, by outcome. */
  readonly connections = new Counter({
    name: 'krx_connections_total',
    help: 'WebSocket upgrade attempts by outcome (accepted, replay, unauthorized, forbidden_origin, too_many, server_full, replays_full)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  /** Server messages sent, by type. */
  readonly messagesOut = new Counter({
    name: 'krx_messages_out_total',
    help: 'Server messages sent to clients, by type',
    labelNames: ['type'] as const,
    registers: [this.registry],
  });
  /** WebSocket frames written. */
  readonly framesOut = new Counter({ name: 'krx_frames_out_total', help: 'WebSocket frames written', registers: [this.registry] });
  /** Payload bytes written to clients. */
  readonly bytesOut = new Counter({ name: 'krx_bytes_out_total', help: 'Payload bytes sent to clients', registers: [this.registry] });
  /** Client messages received, by op. */
  readonly messagesIn = new Counter({
    name: 'krx_messages_in_total',
    help: 'Client messages received, by op (invalid for unparseable)',
    labelNames: ['op'] as const,
    registers: [this.registry],
  });
  /** Payload bytes received from clients. */
  readonly bytesIn = new Counter({ name: 'krx_bytes_in_total', help: 'Payload bytes received from clients', registers: [this.registry] });
  /** HTTP requests served, by route and status. */
  readonly httpRequests = new Counter({
    name: 'krx_http_requests_total',
    help: 'HTTP requests by route (page, healthz, readyz, status, metrics, symbols, api) and status',
    labelNames: ['route', 'status'] as const,
    registers: [this.registry],
  });
  /** Error frames sent, by code. */
  readonly errorsOut = new Counter({
    name: 'krx_errors_out_total',
    help: 'Error frames sent to clients, by code',
    labelNames: ['code'] as const,
    registers: [this.registry],
  });
  /** Lookups answered with schema drift (every row of the upstream's answer unusable), by endpoint. */
  readonly lookupDrift = new Counter({
    name: 'krx_lookup_drift_total',
    help: 'On-demand lookups whose upstream answer had every row unusable (schema drift), by endpoint',
    labelNames: ['endpoint'] as const,
    registers: [this.registry],
  });
  /** Bytes the recorder wrote. */
  readonly recordedBytes = new Counter({ name: 'krx_recorder_bytes_total', help: 'Bytes written to the recording', registers: [this.registry] });
  /** Changes the recorder dropped, by reason. */
  readonly recordDropped = new Counter({
    name: 'krx_recorder_dropped_total',
    help: 'Changes not recorded, by reason (backlog: the disk did not keep up; error: it refused the write)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  /** Damage found in recordings while reading them. */
  readonly recordDamage = new Counter({
    name: 'krx_recorder_damage_total',
    help: 'Recording segments found torn or damaged while read',
    registers: [this.registry],
  });
  /** Errors that reached the process's last line of defence, by kind. */
  readonly processErrors = new Counter({
    name: 'krx_process_errors_total',
    help: 'Exceptions and promise rejections nothing else handled, by kind (uncaught_exception, unhandled_rejection)',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });
  /** Connections closed by the server, by close code. */
  readonly closes = new Counter({
    name: 'krx_server_closes_total',
    help: 'Connections closed by the server, by close code',
    labelNames: ['code'] as const,
    registers: [this.registry],
  });
  /** Slow-consumer policy steps taken. */
  readonly slowConsumer = new Counter({
    name: 'krx_slow_consumer_total',
    help: 'Slow-consumer steps: conflate (fell behind), drain (caught up, live again), close (4008)',
    labelNames: ['step'] as const,
    registers: [this.registry],
  });
  /** Upstream calls, by endpoint id and outcome code (ok or an error code). */
  readonly upstreamCalls = new Counter({
    name: 'krx_upstream_calls_total',
    help: 'Upstream calls by endpoint and outcome',
    labelNames: ['endpoint', 'outcome'] as const,
    registers: [this.registry],
  });
  /** Upstream call latency. */
  readonly upstreamLatency = new Histogram({
    name: 'krx_upstream_latency_seconds',
    help: 'Upstream call latency (including retries)',
    labelNames: ['endpoint'] as const,
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });
  /** Rows the normaliser dropped as unusable. */
  readonly rowsDropped = new Counter({
    name: 'krx_upstream_rows_dropped_total',
    help: 'Upstream rows dropped as unusable, by endpoint',
    labelNames: ['endpoint'] as const,
    registers: [this.registry],
  });
  /** Polled list bodies that the incremental reader refused and that were read the plain way. */
  readonly listPlain = new Counter({
    name: 'krx_upstream_list_plain_total',
    help: 'Polled list bodies read the plain way because the incremental reader refused their shape, by endpoint and reason',
    labelNames: ['endpoint', 'reason'] as const,
    registers: [this.registry],
  });
  /** Run before each scrape (see `beforeScrape`). */
  private readonly scrapeHooks: (() => void)[] = [];
  /** Upstream calls left today, as last reported (the new day's limit once the reset has passed). */
  readonly budgetRemaining = new Gauge({
    name: 'krx_budget_remaining',
    help: 'Upstream calls left today (X-RateLimit-Remaining-Day)',
    registers: [this.registry],
    collect: () => {
      for (const hook of this.scrapeHooks) hook();
    },
  });
  /** Upstream daily limit, as last reported. */
  readonly budgetLimit = new Gauge({ name: 'krx_budget_limit', help: 'Upstream daily call limit', registers: [this.registry] });
  /** Poll interval the budget affords per feed. */
  readonly pollInterval = new Gauge({
    name: 'krx_poll_interval_seconds',
    help: 'Poll interval per feed',
    labelNames: ['feed'] as const,
    registers: [this.registry],
  });
  /** Feed state (1 for the current state of each feed). */
  readonly feedState = new Gauge({
    name: 'krx_feed_state',
    help: 'Feed state: 1 for the current state',
    labelNames: ['feed', 'state'] as const,
    registers: [this.registry],
  });
  /** Time of one poll cycle: call, normalise, diff, publish. */
  readonly cycleTime = new Histogram({
    name: 'krx_poll_cycle_seconds',
    help: 'Poll cycle time (upstream call to publish)',
    labelNames: ['feed'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });
  /** Time of the diff and publish step of a cycle. */
  readonly diffTime = new Histogram({
    name: 'krx_diff_seconds',
    help: 'Diff and publish time of one upstream response',
    labelNames: ['feed'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1],
    registers: [this.registry],
  });
  /** Changes published. */
  readonly changes = new Counter({
    name: 'krx_changes_total',
    help: 'Topic changes published (snapshots of new topics and patches)',
    labelNames: ['feed'] as const,
    registers: [this.registry],
  });
  /** On-demand cache lookups, by result. */
  readonly cache = new Counter({
    name: 'krx_ondemand_cache_total',
    help: 'On-demand lookups by result: hit, miss, shared (joined an in-flight call)',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });

  /** Metrics with Node's default process metrics (CPU, memory, event loop) included. */
  constructor(opts: { defaults?: boolean } = {}) {
    if (opts.defaults !== false) collectDefaultMetrics({ register: this.registry });
  }

  /** Runs `hook` before each scrape, ahead of the budget gauges (e.g. to start a new budget day no call has started). */
  beforeScrape(hook: () => void): void {
    this.scrapeHooks.push(hook);
  }
}
