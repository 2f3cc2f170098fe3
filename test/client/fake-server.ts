import { WebSocketServer, type WebSocket } from 'ws';
import type { AddressInfo } from 'node:net';
import { CHANNELS, DEFAULT_LIMITS, LIST_CHANNELS, MARKETS, RESOURCES, type Channel, type Market } from '../../src/protocol/constants.js';
import { ERROR_CODES, type ErrorCode } from '../../src/protocol/errors.js';
import { ClientMsg } from '../../src/protocol/messages.js';
import { RESOURCE_PARAMS } from '../../src/protocol/resources.js';
import { feedOf, parseTopic, topicOf } from '../../src/protocol/topics.js';
import { StateStore, type ChangeBatch } from '../../src/state/store.js';
import type { Row } from '../../src/upstream/normalise.js';

/**
 * A small protocol-v1 server for the client tests: welcome, subscribe with
 * resume (replay ring or snapshot), unsubscribe, resync, get, ping, status.
 * Rows live in the real StateStore, so snapshots, patches, seqs and checksums
 * are built exactly as the bridge builds them. Hooks inject faults.
 */

/** One received client message. */
export interface Received {
  readonly session: number;
  readonly msg: ClientMsg;
  /** performance.now() on arrival. */
  readonly at: number;
}

/** A get handler: data to answer with, an error, or `silent` to never answer. */
export type GetHandler = (msg: Extract<ClientMsg, { op: 'get' }>) => Record<string, unknown> | { error: string } | 'silent';

interface Session {
  readonly id: number;
  readonly ws: WebSocket;
  readonly feeds: Map<string, { wildcard: boolean; codes: Set<string> }>;
}

/** Options of the fake server. */
export interface FakeServerOptions {
  readonly epoch?: string;
  readonly ringSize?: number;
  readonly heartbeatMs?: number;
  readonly maxMessagesPerSecond?: number;
}

/** The fake server. */
export class FakeServer {
  store: StateStore;
  readonly received: Received[] = [];
  readonly sessions = new Set<Session>();
  connections = 0;
  /** Request URLs of the upgrades, in order. */
  readonly urls: string[] = [];
  /** Topics whose next patch frame is withheld from the first session it would go to (a gap). */
  readonly dropNext = new Set<string>();
  /** Topics whose next patch frame carries a wrong checksum (to the first session it goes to). */
  readonly corruptNext = new Set<string>();
  getHandler: GetHandler = defaultGet;
  /** Codes refused by `subscribe` as not listed. */
  readonly delisted = new Set<string>();
  /** Refuses a resync with this error code (undefined: answer it). */
  resyncError: (topic: string) => ErrorCode | undefined = () => undefined;
  /** When false, the server reads frames but answers nothing (a hung peer). */
  responsive = true;
  private nextSession = 1;

  private constructor(
    private readonly wss: WebSocketServer,
    private readonly opts: FakeServerOptions,
  ) {
    this.store = new StateStore({ epoch: opts.epoch ?? 'epoch-1', ringSize: opts.ringSize ?? 64 });
    wss.on('connection', (ws, req) => {
      this.urls.push(req.url ?? '');
      this.onConnection(ws);
    });
  }

  /** Starts on 127.0.0.1, port 0, path /ws. */
  static async start(opts: FakeServerOptions = {}): Promise<FakeServer> {
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, path: '/ws' });
    await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
    return new FakeServer(wss, opts);
  }

  /** The ws:// URL of the server. */
  get url(): string {
    return `ws://127.0.0.1:${(this.wss.address() as AddressInfo).port}/ws`;
  }

  /** Applies rows to a feed and pushes the changes to subscribed sessions (one frame each). */
  tick(channel: Channel, market: Market, rows: readonly Row[], ts = Date.now()): ChangeBatch {
    const batch = this.store.apply(channel, market, rows, ts);
    for (const s of this.sessions) {
      const frames: string[] = [];
      for (const e of batch.events) {
        if (!covers(s, channel, market, e.code)) continue;
        if (e.kind === 'patch' && this.dropNext.delete(e.topic)) continue;
        if (e.kind === 'patch' && this.corruptNext.delete(e.topic)) {
          const m = JSON.parse(e.frame) as { crc: number };
          frames.push(JSON.stringify({ ...m, crc: (m.crc ^ 1) >>> 0 }));
          continue;
        }
        frames.push(e.frame);
      }
      if (frames.length > 0 && this.responsive) s.ws.send(`[${frames.join(',')}]`);
    }
    return batch;
  }

  /** The server's row of a topic. */
  truth(topic: string): Row | undefined {
    const p = parseTopic(topic);
    return p ? this.store.entry(p.channel, p.market, p.code)?.row : undefined;
  }

  /** Messages received with a given op (optionally from one session). */
  ops<O extends ClientMsg['op']>(op: O, session?: number): Extract<ClientMsg, { op: O }>[] {
    return this.received.filter((r) => r.msg.op === op && (session === undefined || r.session === session)).map((r) => r.msg as Extract<ClientMsg, { op: O }>);
  }

  /** Kills every socket without a close frame. */
  terminateAll(): void {
    for (const s of this.sessions) s.ws.terminate();
  }

  /** Closes every socket with a code. */
  closeAll(code: number, reason = ''): void {
    for (const s of this.sessions) s.ws.close(code, reason);
  }

  /** A restarted server: new epoch and store (seqs start again), same rows, same port. */
  restart(epoch: string): void {
    const old = this.store;
    this.store = new StateStore({ epoch, ringSize: this.opts.ringSize ?? 64 });
    for (const channel of CHANNELS) {
      for (const market of MARKETS) {
        const rows = [...old.entries(channel, market)].map((e) => e.row);
        if (rows.length > 0) this.store.apply(channel, market, rows, Date.now());
      }
    }
    this.terminateAll();
  }

  /** Stops the server. */
  async stop(): Promise<void> {
    this.terminateAll();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }

  private onConnection(ws: WebSocket): void {
    const s: Session = { id: this.nextSession++, ws, feeds: new Map() };
    this.connections++;
    this.sessions.add(s);
    ws.on('close', () => this.sessions.delete(s));
    ws.on('message', (data) => this.onMessage(s, String(data)));
    send(ws, {
      type: 'welcome',
      version: '1',
      server: 'fake/1',
      epoch: this.store.epoch,
      heartbeatMs: this.opts.heartbeatMs ?? 15_000,
      limits: { ...DEFAULT_LIMITS, maxMessagesPerSecond: this.opts.maxMessagesPerSecond ?? DEFAULT_LIMITS.maxMessagesPerSecond },
      channels: [...CHANNELS],
      markets: [...MARKETS],
      resources: [...RESOURCES],
      ts: Date.now(),
    });
  }

  private onMessage(s: Session, text: string): void {
    const parsed = ClientMsg.safeParse(JSON.parse(text));
    if (!parsed.success) return send(s.ws, { type: 'error', code: 'bad_request', message: parsed.error.message, retryable: false });
    const msg = parsed.data;
    this.received.push({ session: s.id, msg, at: performance.now() });
    if (!this.responsive) return;
    switch (msg.op) {
      case 'subscribe':
        return this.subscribe(s, msg);
      case 'unsubscribe': {
        const f = s.feeds.get(feedOf(msg.channel as Channel, msg.market as Market));
        for (const c of msg.codes) {
          if (c !== '*') f?.codes.delete(c);
          else if (f) f.wildcard = false;
        }
        return send(s.ws, { type: 'unsubscribed', id: msg.id, topics: msg.codes.map((c) => `${msg.channel}.${msg.market}.${c}`) });
      }
      case 'resync': {
        const p = parseTopic(msg.topic);
        const e = p && covers(s, p.channel, p.market, p.code) ? this.store.entry(p.channel, p.market, p.code) : undefined;
        if (!e) return send(s.ws, { type: 'error', id: msg.id, code: 'not_subscribed', message: 'no', retryable: false, topic: msg.topic });
        const refuse = this.resyncError(msg.topic);
        if (refuse !== undefined) {
          return send(s.ws, { type: 'error', id: msg.id, code: refuse, message: 'refused', retryable: ERROR_CODES[refuse].retryable, topic: msg.topic });
        }
        return s.ws.send(this.store.snapshot(e));
      }
      case 'ping':
        return send(s.ws, { type: 'pong', id: msg.id, ts: Date.now() });
      case 'get':
        return this.get(s, msg);
    }
  }

  private subscribe(s: Session, msg: Extract<ClientMsg, { op: 'subscribe' }>): void {
    const channel = msg.channel as Channel;
    const market = msg.market as Market;
    const bad = msg.codes.find((c) => c.includes('BAD') || this.delisted.has(c) || (c === '*' && !(LIST_CHANNELS as readonly string[]).includes(channel)));
    if (bad !== undefined) {
      return send(s.ws, { type: 'error', id: msg.id, code: 'invalid_code', message: `${bad} is not listed`, retryable: false });
    }
    const key = feedOf(channel, market);
    const f = s.feeds.get(key) ?? { wildcard: false, codes: new Set<string>() };
    s.feeds.set(key, f);
    for (const c of msg.codes) {
      if (c === '*') f.wildcard = true;
      else f.codes.add(c);
    }
    const parts = [JSON.stringify({ type: 'subscribed', id: msg.id, topics: msg.codes.map((c) => topicOf(channel, market, c)) })];
    const entries = msg.codes.includes('*')
      ? [...this.store.entries(channel, market)]
      : msg.codes.map((c) => this.store.entry(channel, market, c)).filter((e) => e !== undefined);
    for (const e of entries) {
      const since = msg.epoch === this.store.epoch ? msg.since?.[e.topic] : undefined;
      const replay = since === undefined ? undefined : this.store.replay(e, since);
      parts.push(...(replay ?? [this.store.snapshot(e)]));
    }
    parts.push(JSON.stringify({ type: 'status', market, channel, state: 'live', intervalMs: 1000, ts: Date.now() }));
    s.ws.send(`[${parts.join(',')}]`);
  }

  private get(s: Session, msg: Extract<ClientMsg, { op: 'get' }>): void {
    const schema = RESOURCE_PARAMS[msg.resource as keyof typeof RESOURCE_PARAMS];
    if (!schema) return send(s.ws, { type: 'error', id: msg.id, code: 'invalid_resource', message: msg.resource, retryable: false });
    const p = schema.safeParse(msg.params ?? {});
    if (!p.success) return send(s.ws, { type: 'error', id: msg.id, code: 'invalid_params', message: p.error.message, retryable: false });
    const out = this.getHandler(msg);
    if (out === 'silent') return;
    if ('error' in out && typeof out.error === 'string') {
      return send(s.ws, { type: 'error', id: msg.id, code: out.error, message: 'refused', retryable: out.error === 'upstream_unavailable' });
    }
    send(s.ws, { type: 'result', id: msg.id, resource: msg.resource, market: msg.market, code: msg.code, ts: Date.now(), data: out });
  }
}

function covers(s: Session, channel: Channel, market: Market, code: string): boolean {
  const f = s.feeds.get(feedOf(channel, market));
  return f !== undefined && (f.wildcard || f.codes.has(code));
}

function send(ws: WebSocket, msg: unknown): void {
  ws.send(JSON.stringify(msg));
}

/** Canned results: an echo of the request under `_request`, plus a plausible shape per resource. */
function defaultGet(msg: Extract<ClientMsg, { op: 'get' }>): Record<string, unknown> {
  const code = msg.code ?? null;
  const base = { _request: { resource: msg.resource, market: msg.market, code, params: msg.params ?? null } };
  switch (msg.resource) {
    case 'history':
      return { ...base, isuSrtCd: code, hisLists: [{ trdDd: '20261120', trdPrc: 71100, opnprc: 70000, accTrdvol: 10 }] };
    case 'intraday':
      return { ...base, isuSrtCd: code, hisLists: [{ inddTm: '09010000', inddClsprc: 71000 }] };
    case 'shortsell':
    case 'foreignhistory':
      return { ...base, isuSrtCd: code, hisLists: [{ trdDd: '20261120' }] };
    case 'lists':
      return { ...base, trdDd: '20261120', isuLists: [{ isuSrtCd: '005930', isuCd: 'KR7005930003', isuKorAbbrv: '삼성전자' }] };
    case 'investors':
      return { ...base, Tm: '15300000', invstLists: [{ invstCd: '10', askTrdvol: 1, bidTrdvol: 2 }] };
    default:
      return { ...base, isuSrtCd: code, trdPrc: 71100, basPrc: 70800 };
  }
}
