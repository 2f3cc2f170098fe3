import fastJsonPatch from 'fast-json-patch';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CHANNELS, LIST_CHANNELS, MARKETS, RESOURCES } from '../../src/protocol/constants.js';
import { ERROR_CODES } from '../../src/protocol/errors.js';
import { ErrorMsg, PatchMsg, ServerFrame, SnapshotMsg, WelcomeMsg } from '../../src/protocol/messages.js';
import { Client, codes, counter, row, startHarness, type Harness, type Msg } from './harness.js';

const { applyPatch, deepClone } = fastJsonPatch;

let h: Harness;
beforeEach(async () => {
  h = await startHarness();
});
afterEach(async () => {
  await h.close();
});

/** A valid code of a channel and market. */
function codeFor(channel: string, market: string, i = 0): string {
  if (channel === 'index') return `${market === 'kospi' ? 'K' : 'Q'}${i + 1}`;
  return market === 'kospi' ? codes(50)[i]! : codes(50, 500000)[i]!;
}

describe('welcome', () => {
  it('is the first message and matches the schema', async () => {
    const c = await Client.connect(h.url);
    const w = c.msgs[0]!;
    expect(WelcomeMsg.parse(w)).toBeTruthy();
    expect(w).toMatchObject({
      type: 'welcome',
      version: '1',
      server: 'krx-bridge/test',
      epoch: h.store.epoch,
      heartbeatMs: 15000,
      markets: ['kospi', 'kosdaq'],
      channels: [...CHANNELS],
      resources: [...RESOURCES],
      limits: { maxTopics: 1000, maxWildcards: 8, maxMessagesPerSecond: 50, maxPayloadBytes: 262144, getsPerMinute: 120 },
    });
    expect(await counter(h.metrics, 'krx_clients')).toBe(1);
    c.close();
  });
});

describe('compression', () => {
  it('is off by default and negotiated when enabled', async () => {
    const c = await Client.connect(h.url);
    expect(c.ws.extensions).toBe('');
    c.close();
    const z = await startHarness({ perMessageDeflate: true });
    z.tick(
      'quote',
      'kospi',
      codes(50).map((x) => row(x, 1)),
    );
    const d = await Client.connect(z.url);
    expect(d.ws.extensions).toContain('permessage-deflate');
    await d.request({ op: 'subscribe', id: 1, channel: 'quote', market: 'kospi', codes: ['*'] });
    await d.wait(() => d.of('snapshot').length === 50);
    z.tick('quote', 'kospi', [row('000001', 2)]);
    await d.until((m) => m.type === 'patch' && m.seq === 2);
    d.close();
    await z.close();
  });
});

describe('subscribe and unsubscribe', () => {
  for (const channel of CHANNELS) {
    for (const market of MARKETS) {
      it(`${channel}.${market}: snapshot, patch, unsubscribe, nothing more`, async () => {
        const code = codeFor(channel, market);
        const key = channel === 'index' ? 'idxIndCd' : 'isuSrtCd';
        const mk = (p: number) => ({ ...row(code, p), [key]: code });
        h.store.apply(channel, market, [mk(100)], 1, key);
        const c = await Client.connect(h.url);
        const topic = `${channel}.${market}.${code}`;
        const sub = await c.request({ op: 'subscribe', id: 1, channel, market, codes: [code] });
        expect(sub).toEqual({ type: 'subscribed', id: 1, topics: [topic] });
        const snap = await c.until((m) => m.type === 'snapshot' && m.topic === topic);
        expect(SnapshotMsg.parse(snap).data.trdPrc).toBe(100);
        expect(h.demand.codes(channel, market).has(code)).toBe(true);
        h.bus.publish(h.store.apply(channel, market, [mk(101)], 2, key));
        const patch = await c.until((m) => m.type === 'patch' && m.topic === topic);
        expect(PatchMsg.parse(patch).seq).toBe(2);
        const unsub = await c.request({ op: 'unsubscribe', id: 2, channel, market, codes: [code] });
        expect(unsub).toEqual({ type: 'unsubscribed', id: 2, topics: [topic] });
        expect(h.demand.codes(channel, market).has(code)).toBe(false);
        h.bus.publish(h.store.apply(channel, market, [mk(102)], 3, key));
        const pong = await c.request({ op: 'ping', id: 3 });
        expect(pong.type).toBe('pong');
        expect(c.msgs.filter((m) => m.topic === topic && m.seq === 3)).toHaveLength(0);
        c.close();
      });
    }
  }

  it('sends status with the subscription and forwards status changes', async () => {
    h.statuses.push({ channel: 'quote', market: 'kospi', state: 'live', intervalMs: 1000, ts: 5 });
    const c = await Client.connect(h.url);
    await c.request({ op: 'subscribe', id: 1, channel: 'quote', market: 'kospi', codes: ['000001'] });
    const st = await c.until((m) => m.type === 'status');
    expect(st).toEqual({ type: 'status', market: 'kospi', channel: 'quote', state: 'live', intervalMs: 1000, ts: 5 });
    h.bus.publishStatus({ channel: 'quote', market: 'kospi', state: 'stale', intervalMs: 2000, reason: 'timeout', ts: 9 });
    await c.until((m) => m.type === 'status' && m.state === 'stale' && m.reason === 'timeout');
    h.bus.publishStatus({ channel: 'book', market: 'kospi', state: 'stale', intervalMs: 2000, ts: 9 });
    await c.request({ op: 'ping', id: 2 });
    expect(c.of('status').filter((m) => m.channel === 'book')).toHaveLength(0);
    c.close();
  });

  it('sends no idle status with a subscription: the feed it wakes says its state when it does', async () => {
    h.statuses.push({ channel: 'ohlc', market: 'kospi', state: 'idle', intervalMs: 0, ts: 5 });
    const c = await Client.connect(h.url);
    await c.request({ op: 'subscribe', id: 1, channel: 'ohlc', market: 'kospi', codes: ['000001'] });
    await c.request({ op: 'ping', id: 2 });
    expect(c.of('status')).toHaveLength(0);
    h.bus.publishStatus({ channel: 'ohlc', market: 'kospi', state: 'closed', intervalMs: 0, reason: 'market closed', ts: 9, opensAt: 20 });
    await c.until((m) => m.type === 'status' && m.state === 'closed');
    expect(c.of('status').map((m) => m.state)).toEqual(['closed']);
    c.close();
  });

  it('a topic without state gets its first snapshot when the poller first sees it', async () => {
    const c = await Client.connect(h.url);
    await c.request({ op: 'subscribe', id: 1, channel: 'price', market: 'kospi', codes: ['000007'] });
    expect(c.of('snapshot')).toHaveLength(0);
    h.tick('price', 'kospi', [row('000007', 5), row('000008', 6)]);
    const s = await c.until((m) => m.type === 'snapshot');
    expect(s.topic).toBe('price.kospi.000007');
    expect(s.seq).toBe(1);
    await c.request({ op: 'ping', id: 2 });
    expect(c.msgs.some((m) => m.topic === 'price.kospi.000008')).toBe(false);
    c.close();
  });
});

describe('wildcards', () => {
  it('gives one snapshot per symbol, then patches; explicit + wildcard overlap is delivered once', async () => {
    const all = codes(50);
    h.tick(
      'quote',
      'kospi',
      all.map((c) => row(c, 100)),
    );
    const c = await Client.connect(h.url);
    await c.request({ op: 'subscribe', id: 1, channel: 'quote', market: 'kospi', codes: ['000003'] });
    const sub = await c.request({ op: 'subscribe', id: 2, channel: 'quote', market: 'kospi', codes: ['*'] });
    expect(sub.topics).toEqual(['quote.kospi.*']);
    expect(h.demand.wildcard('quote', 'kospi')).toBe(true);
    await c.wait(() => c.of('snapshot').length >= 51);
    const after2 = c.msgs.indexOf(sub);
    expect(
      new Set(
        c.msgs
          .slice(after2)
          .filter((m) => m.type === 'snapshot')
          .map((m) => m.topic),
      ).size,
    ).toBe(50);
    // Explicit after the wildcard: also once.
    await c.request({ op: 'subscribe', id: 20, channel: 'quote', market: 'kospi', codes: ['000004'] });
    const before = c.msgs.length;
    h.tick('quote', 'kospi', [row('000003', 101), row('000004', 101)]);
    await c.until((m) => m.type === 'patch' && m.topic === 'quote.kospi.000004', 3000, before);
    await c.request({ op: 'ping', id: 3 });
    expect(c.msgs.slice(before).filter((m) => m.topic === 'quote.kospi.000003')).toHaveLength(1);
    expect(c.msgs.slice(before).filter((m) => m.topic === 'quote.kospi.000004')).toHaveLength(1);
    // Dropping the wildcard keeps the explicit topic.
    await c.request({ op: 'unsubscribe', id: 4, channel: 'quote', market: 'kospi', codes: ['*'] });
    const mark = c.msgs.length;
    h.tick('quote', 'kospi', [row('000003', 102), row('000004', 102), row('000005', 102)]);
    await c.until((m) => m.type === 'patch' && m.topic === 'quote.kospi.000003', 3000, mark);
    await c.request({ op: 'ping', id: 5 });
    expect(c.msgs.slice(mark).filter((m) => m.topic === 'quote.kospi.000004')).toHaveLength(1);
    expect(c.msgs.slice(mark).filter((m) => m.topic === 'quote.kospi.000005')).toHaveLength(0);
    c.close();
  });

  it('is refused on channels without whole-market lists', async () => {
    const c = await Client.connect(h.url);
    for (const channel of CHANNELS.filter((x) => !(LIST_CHANNELS as readonly string[]).includes(x))) {
      const e = await c.request({ op: 'subscribe', id: channel, channel, market: 'kospi', codes: ['*'] });
      expect(e).toMatchObject({ type: 'error', code: 'invalid_code' });
    }
    c.close();
  });

  it('delivers a 4,500-symbol market snapshot in frames of about 16 KiB (not one per snapshot), fast', async () => {
    const big = await startHarness({}, {}, 10);
    const many = codes(4500);
    big.tick(
      'quote',
      'kospi',
      many.map((c) => row(c, 1000, { isuKorNm: '삼성전자보통주식회사', mktcap: 123456789012, listShrs: 5969782550 })),
    );
    const c = await Client.connect(big.url);
    const t0 = performance.now();
    const frames0 = c.frames;
    c.send({ op: 'subscribe', id: 1, channel: 'quote', market: 'kospi', codes: ['*'] });
    await c.wait(() => c.of('snapshot').length === 4500, 5000);
    const ms = performance.now() - t0;
    // The frame size is bounded (slow.ts frameBytes) so a socket's queue stays small; frames are filled up to it.
    const bytes = c.of('snapshot').reduce((n, m) => n + JSON.stringify(m).length + 1, 0);
    expect(c.frames - frames0).toBeLessThanOrEqual(Math.ceil(bytes / (16 << 10)) + 2);
    expect(ms).toBeLessThan(1000); // generous for CI; the target on an idle machine is < 100 ms
    c.close();
    await big.close();
  });
});

describe('state consistency', () => {
  it('writes the batches of one publish to a client of both markets in one frame', async () => {
    const kospi = codes(5);
    const kosdaq = codes(5, 500000);
    const c = await Client.connect(h.url);
    await c.request({ op: 'subscribe', id: 1, channel: 'quote', market: 'kospi', codes: kospi });
    await c.request({ op: 'subscribe', id: 2, channel: 'quote', market: 'kosdaq', codes: kosdaq });
    const frames: string[][] = [];
    c.ws.on('message', (data) => {
      const parsed = JSON.parse(String(data)) as Msg | Msg[];
      frames.push((Array.isArray(parsed) ? parsed : [parsed]).map((m) => `${m.type} ${m.topic ?? m.id}`));
    });
    h.bus.publishAll([h.store.apply('quote', 'kospi', [row(kospi[0]!, 1000)], 1), h.store.apply('quote', 'kosdaq', [row(kosdaq[1]!, 2000)], 1)]);
    h.bus.publish(h.store.apply('quote', 'kospi', [row(kospi[0]!, 1001)], 2));
    await c.request({ op: 'ping', id: 'end' });
    expect(frames).toEqual([[`snapshot quote.kospi.${kospi[0]}`, `snapshot quote.kosdaq.${kosdaq[1]}`], [`patch quote.kospi.${kospi[0]}`], ['pong end']]);
    c.close();
  });

  it('patches applied in order to the snapshot equal the latest row; seq +1 per topic; one frame per batch', async () => {
    const cs = codes(20);
    h.tick(
      'quote',
      'kospi',
      cs.map((c) => row(c, 1000)),
    );
    const c = await Client.connect(h.url);
    await c.request({ op: 'subscribe', id: 1, channel: 'quote', market: 'kospi', codes: cs.slice(0, 10) });
    await c.request({ op: 'subscribe', id: 2, channel: 'quote', market: 'kospi', codes: ['*'] });
    await c.wait(() => c.of('snapshot').length >= 30);
    let rnd = 7;
    const rand = (n: number) => ((rnd = (rnd * 1103515245 + 12345) % 2 ** 31), rnd % n);
    let batches = 0;
    const framesBefore = c.frames;
    for (let t = 0; t < 200; t++) {
      const rows = cs
        .filter(() => rand(3) === 0)
        .map((code) => {
          const r = row(code, 1000 + rand(50));
          if (rand(4) === 0) r.extra = rand(10);
          if (rand(5) === 0) delete (r as Record<string, unknown>).cmpprevddPrc;
          return r;
        });
      const b = h.tick('quote', 'kospi', rows, 1000 + t);
      if (b.events.length) batches++;
    }
    await c.request({ op: 'ping', id: 'end' });
    expect(c.frames - framesBefore).toBe(batches + 1);
    const local = new Map<string, { seq: number; data: Record<string, unknown> }>();
    for (const m of c.msgs) {
      if (m.type === 'snapshot') local.set(m.topic, { seq: m.seq, data: deepClone(m.data) });
      if (m.type === 'patch') {
        const cur = local.get(m.topic)!;
        if (m.seq <= cur.seq) continue; // the wildcard subscribe re-snapshotted the explicit topics
        expect(m.seq).toBe(cur.seq + 1);
        cur.data = applyPatch(cur.data, m.ops, true, false).newDocument;
        cur.seq = m.seq;
      }
    }
    for (const code of cs) {
      const e = h.store.entry('quote', 'kospi', code)!;
      expect(local.get(e.topic)).toEqual({ seq: e.seq, data: e.row });
    }
    for (const m of c.msgs) expect(ServerFrame.safeParse(m).success).toBe(true);
    c.close();
  });
});

describe('resume and resync', () => {
  it('resumes within the ring with exactly the missed patches; else a snapshot', async () => {
    h.tick('quote', 'kospi', [row('000001', 1), row('000002', 1)]);
    for (let p = 2; p <= 5; p++) h.tick('quote', 'kospi', [row('000001', p), row('000002', p)]);
    // Ring size 8: 000002 moves 12 more times, beyond the ring.
    for (let p = 6; p <= 17; p++) h.tick('quote', 'kospi', [row('000002', p)]);
    const c = await Client.connect(h.url);
    const epoch = h.store.epoch;
    await c.request({
      op: 'subscribe',
      id: 1,
      channel: 'quote',
      market: 'kospi',
      codes: ['000001', '000002'],
      since: { 'quote.kospi.000001': 2, 'quote.kospi.000002': 3 },
      epoch,
    });
    await c.request({ op: 'ping', id: 2 });
    const one = c.msgs.filter((m) => m.topic === 'quote.kospi.000001');
    expect(one.map((m) => [m.type, m.seq])).toEqual([
      ['patch', 3],
      ['patch', 4],
      ['patch', 5],
    ]);
    const two = c.msgs.filter((m) => m.topic === 'quote.kospi.000002');
    expect(two.map((m) => [m.type, m.seq])).toEqual([['snapshot', 17]]);
    // Up to date: nothing at all. Wrong epoch: a snapshot.
    const d = await Client.connect(h.url);
    await d.request({ op: 'subscribe', id: 1, channel: 'quote', market: 'kospi', codes: ['000001'], since: { 'quote.kospi.000001': 5 }, epoch });
    await d.request({ op: 'subscribe', id: 2, channel: 'quote', market: 'kospi', codes: ['000002'], since: { 'quote.kospi.000002': 16 }, epoch: 'other' });
    await d.request({ op: 'ping', id: 3 });
    expect(d.msgs.filter((m) => m.topic === 'quote.kospi.000001')).toHaveLength(0);
    expect(d.msgs.filter((m) => m.topic === 'quote.kospi.000002').map((m) => m.type)).toEqual(['snapshot']);
    c.close();
    d.close();
  });

  it('gives a client a little ahead of this process (a cluster peer sent it the last rounds first) only the patches after its seq', async () => {
    h.tick('quote', 'kosdaq', [row('500011', 1), row('500012', 1), row('500013', 1)]);
    h.tick('quote', 'kosdaq', [row('500011', 2), row('500012', 2), row('500013', 2)]);
    const epoch = h.store.epoch;
    const [near, far, fixed] = ['quote.kosdaq.500011', 'quote.kosdaq.500012', 'quote.kosdaq.500013'];
    const c = await Client.connect(h.url);
    const sub = await c.request({
      op: 'subscribe',
      id: 1,
      channel: 'quote',
      market: 'kosdaq',
      codes: ['500011', '500012', '500013'],
      since: { [near]: 4, [far]: 9, [fixed]: 4 },
      epoch,
    });
    // Two seqs ahead: recovered, nothing sent now. Seven ahead: too far, a fresh snapshot.
    expect(sub).toMatchObject({ type: 'subscribed', recovered: { [near]: true, [far]: false, [fixed]: true } });
    await c.request({ op: 'ping', id: 2 });
    expect(c.msgs.filter((m) => m.type === 'snapshot' || m.type === 'patch').map((m) => [m.topic, m.seq])).toEqual([[far, 2]]);
    // The client asks a fresh snapshot of one of them: from then on it follows this process's seqs.
    const from = c.msgs.length;
    c.send({ op: 'resync', id: 3, topic: fixed });
    expect(await c.until((m) => m.type === 'snapshot', 3000, from)).toMatchObject({ topic: fixed, seq: 2 });
    // This process catches up: the patches the client already holds (3, 4) are not sent again, the next one is.
    for (let p = 3; p <= 5; p++) h.tick('quote', 'kosdaq', [row('500011', p), row('500012', p), row('500013', p)]);
    await c.request({ op: 'ping', id: 4 });
    const after = c.msgs.slice(from).filter((m) => m.type === 'patch');
    expect(after.filter((m) => m.topic === near).map((m) => m.seq)).toEqual([5]);
    expect(after.filter((m) => m.topic === far).map((m) => m.seq)).toEqual([3, 4, 5]);
    expect(after.filter((m) => m.topic === fixed).map((m) => m.seq)).toEqual([3, 4, 5]);
    c.close();
  });

  it('ends the hold of a topic resumed ahead when a later subscribe sends it a fresh snapshot', async () => {
    h.tick('quote', 'kosdaq', [row('500021', 1)]);
    h.tick('quote', 'kosdaq', [row('500021', 2)]);
    const topic = 'quote.kosdaq.500021';
    const c = await Client.connect(h.url);
    await c.request({ op: 'subscribe', id: 1, channel: 'quote', market: 'kosdaq', codes: ['500021'], since: { [topic]: 4 }, epoch: h.store.epoch });
    // Subscribed again without `since`: a snapshot at this process's seq, and every patch after it.
    await c.request({ op: 'subscribe', id: 2, channel: 'quote', market: 'kosdaq', codes: ['500021'] });
    await c.request({ op: 'ping', id: 3 });
    for (let p = 3; p <= 4; p++) h.tick('quote', 'kosdaq', [row('500021', p)]);
    await c.request({ op: 'ping', id: 4 });
    expect(c.msgs.filter((m) => m.topic === topic).map((m) => [m.type, m.seq])).toEqual([
      ['snapshot', 2],
      ['patch', 3],
      ['patch', 4],
    ]);
    c.close();
  });

  it('resync sends a fresh snapshot of a subscribed topic (also via wildcard)', async () => {
    h.tick('ohlc', 'kosdaq', [row('500001', 1), row('500002', 1)]);
    const c = await Client.connect(h.url);
    await c.request({ op: 'subscribe', id: 1, channel: 'ohlc', market: 'kosdaq', codes: ['*'] });
    h.tick('ohlc', 'kosdaq', [row('500002', 2)]);
    const from = c.msgs.length;
    c.send({ op: 'resync', id: 2, topic: 'ohlc.kosdaq.500002' });
    const s = await c.until((m) => m.type === 'snapshot', 3000, from);
    expect(s).toMatchObject({ topic: 'ohlc.kosdaq.500002', seq: 2, data: { trdPrc: 2 } });
    const e = await c.request({ op: 'resync', id: 3, topic: 'ohlc.kospi.000001' });
    expect(e).toMatchObject({ type: 'error', code: 'not_subscribed', topic: 'ohlc.kospi.000001' });
    c.close();
  });
});

describe('errors keep the connection open', () => {
  const cases: [string, unknown, string][] = [
    ['bad JSON', '{nope', 'bad_request'],
    ['schema mismatch', { op: 'subscribe', id: 1, channel: 'quote' }, 'bad_request'],
    ['unknown op', { op: 'fly', id: 2 }, 'unknown_op'],
    ['channel', { op: 'subscribe', id: 3, channel: 'trades', market: 'kospi', codes: ['000001'] }, 'invalid_channel'],
    ['market', { op: 'subscribe', id: 4, channel: 'quote', market: 'nyse', codes: ['000001'] }, 'invalid_market'],
    ['code syntax', { op: 'subscribe', id: 5, channel: 'quote', market: 'kospi', codes: ['5930'] }, 'invalid_code'],
    ['code not listed', { op: 'subscribe', id: 6, channel: 'quote', market: 'kospi', codes: ['999999'] }, 'invalid_code'],
    ['index code of the other market', { op: 'subscribe', id: 7, channel: 'index', market: 'kospi', codes: ['Q1'] }, 'invalid_code'],
    ['resource', { op: 'get', id: 8, resource: 'news', market: 'kospi' }, 'invalid_resource'],
    ['params', { op: 'get', id: 9, resource: 'history', market: 'kospi', code: '000001', params: { from: 'x' } }, 'invalid_params'],
    ['resync', { op: 'resync', id: 10, topic: 'quote.kospi.000001' }, 'not_subscribed'],
  ];
  it.each(cases)('%s', async (_name, msg, code) => {
    const c = await Client.connect(h.url);
    const from = c.msgs.length;
    c.send(msg);
    const e = await c.until((m) => m.type === 'error', 3000, from);
    expect(ErrorMsg.parse(e).code).toBe(code);
    expect(e.retryable).toBe(ERROR_CODES[code as keyof typeof ERROR_CODES].retryable);
    if (typeof msg === 'object') expect(e.id).toBe((msg as Msg).id);
    expect((await c.request({ op: 'ping', id: 'alive' })).type).toBe('pong');
    c.close();
  });

  it('binary frames are bad_request', async () => {
    const c = await Client.connect(h.url);
    c.ws.send(Buffer.from([1, 2, 3]), { binary: true });
    expect((await c.until((m) => m.type === 'error')).code).toBe('bad_request');
    expect((await c.request({ op: 'ping', id: 1 })).type).toBe('pong');
    c.close();
  });

  it('too_many_topics applies nothing of the request', async () => {
    const small = await startHarness({ limits: { maxTopics: 3, maxWildcards: 1 } });
    const c = await Client.connect(small.url);
    await c.request({ op: 'subscribe', id: 1, channel: 'quote', market: 'kospi', codes: ['000001', '000002'] });
    const e = await c.request({ op: 'subscribe', id: 2, channel: 'top', market: 'kospi', codes: ['000001', '000002'] });
    expect(e).toMatchObject({ type: 'error', code: 'too_many_topics' });
    expect(small.demand.codes('top', 'kospi').size).toBe(0);
    // Re-subscribing held topics does not count twice.
    expect((await c.request({ op: 'subscribe', id: 3, channel: 'quote', market: 'kospi', codes: ['000001', '000002', '000003'] })).type).toBe('subscribed');
    expect((await c.request({ op: 'subscribe', id: 4, channel: 'quote', market: 'kospi', codes: ['*'] })).type).toBe('subscribed');
    const w = await c.request({ op: 'subscribe', id: 5, channel: 'ohlc', market: 'kospi', codes: ['*'] });
    expect(w).toMatchObject({ type: 'error', code: 'too_many_topics' });
    expect(small.demand.wildcard('ohlc', 'kospi')).toBe(false);
    c.close();
    await small.close();
  });

  it('demand is released when a client disconnects', async () => {
    const c = await Client.connect(h.url);
    await c.request({ op: 'subscribe', id: 1, channel: 'book', market: 'kosdaq', codes: ['500001'] });
    await c.request({ op: 'subscribe', id: 2, channel: 'aht', market: 'kosdaq', codes: ['*'] });
    expect(await counter(h.metrics, 'krx_topics')).toBe(2);
    c.close();
    await c.closedWith();
    await c.wait(() => !h.demand.active('book', 'kosdaq') && !h.demand.active('aht', 'kosdaq'));
    expect(await counter(h.metrics, 'krx_topics')).toBe(0);
  });
});
