// What a cluster costs Redis per change: a private redis-server, the end-to-end scenario's stand-in upstream (4,500
// symbols on two markets, 30% changing every second) and 1, 2, then 3 bridge processes joined through Redis, each
// with one client on both markets' whole `quote` lists. Over a window, Redis's own counters give the bytes it
// received and sent, its commands, its memory and its CPU (and the time of each fenced batch write, the `EVALSHA` that
// writes a poll round's batches to the shared state and publishes them); the stand-in counts the changes served. A
// light client beside each (25 codes of each market, as in the end-to-end scenario) counts the frames with patches it
// gets a second, and the share of them that carry both markets' patches: one a poll round when a round arrives whole.
// Run: node --import tsx bench/redis-traffic.ts [windowSeconds]   (needs redis-server on the PATH)
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from 'redis';
import WebSocket from 'ws';
import { createBridge } from '../src/bridge/bridge.js';
import { loadConfig } from '../src/config/config.js';
import { StandIn } from './upstream/standin.js';

const WINDOW_S = Number(process.argv[2] ?? 20);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const port = await new Promise<number>((resolve) => {
  const s = createServer().listen(0, '127.0.0.1', () => {
    const p = (s.address() as { port: number }).port;
    s.close(() => resolve(p));
  });
});
const redisProc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
const url = `redis://127.0.0.1:${port}`;
const redis = createClient({ url });
redis.on('error', () => undefined);
for (let i = 0; !redis.isReady; i++) {
  await sleep(100);
  await redis.connect().catch(() => (i > 50 ? Promise.reject(new Error('redis-server did not start')) : undefined));
}

const info = async (): Promise<Record<string, number>> => {
  const text = await redis.info();
  const out: Record<string, number> = {};
  for (const line of text.split('\r\n')) {
    const [k, v] = line.split(':');
    if (k && v !== undefined && /^\d+(\.\d+)?$/.test(v)) out[k] = Number(v);
  }
  return out;
};

/** Calls and µs of `EVALSHA` since the last reset (INFO commandstats). */
const evalsha = async (): Promise<{ calls: number; usec: number }> => {
  const m = /cmdstat_evalsha:calls=(\d+),usec=(\d+)/.exec(await redis.info('commandstats'));
  return { calls: Number(m?.[1] ?? 0), usec: Number(m?.[2] ?? 0) };
};

/** What a client received: frames carrying patches, those among them that carry both markets', and codes seen by market. */
interface Received {
  patchFrames: number;
  bothFrames: number;
  readonly codes: Record<string, Set<string>>;
}

/** A client of `codes` (`*`: the whole list) of both markets' quote; resolves once both are subscribed. */
function watch(wsUrl: string, codes: Record<string, string[]> = { kospi: ['*'], kosdaq: ['*'] }): Promise<{ ws: WebSocket; got: Received }> {
  const ws = new WebSocket(wsUrl);
  const got: Received = { patchFrames: 0, bothFrames: 0, codes: { kospi: new Set(), kosdaq: new Set() } };
  return new Promise((resolve, reject) => {
    let owed = 2;
    ws.on('error', reject);
    ws.on('open', () => {
      for (const market of ['kospi', 'kosdaq']) ws.send(JSON.stringify({ op: 'subscribe', channel: 'quote', market, codes: codes[market] }));
    });
    ws.on('message', (d: Buffer) => {
      const v = JSON.parse(d.toString()) as { type?: string; topic?: string } | { type?: string; topic?: string }[];
      const markets = new Set<string>();
      for (const m of Array.isArray(v) ? v : [v]) {
        if (m.type === 'subscribed' && --owed === 0) resolve({ ws, got });
        if (m.type !== 'patch' && m.type !== 'snapshot') continue;
        const [, market, code] = m.topic!.split('.');
        got.codes[market!]?.add(code!);
        if (m.type === 'patch') markets.add(market!);
      }
      if (markets.size > 0) got.patchFrames++;
      if (markets.size > 1) got.bothFrames++;
    });
  });
}

const rows: string[] = [];
for (const processes of [1, 2, 3]) {
  const standIn = new StandIn({ symbols: 4_500, seed: 20_240_603, changeRatio: 0.3, periodMs: 1_000, apiKey: 'traffic' });
  const upstream = await standIn.listen();
  const dir = mkdtempSync(join(tmpdir(), 'krx-redis-traffic-'));
  await redis.flushAll();
  const configs = Array.from({ length: processes }, (_, i) => {
    const env = { UPSTREAM_URL: upstream, UPSTREAM_API_KEY: 'traffic', REDIS_URL: url, PORT: '0', HOST: '127.0.0.1', MARKET_CLOCK: 'always' };
    return loadConfig({ ...env, NAMES_PER_DAY: '0', LOG_LEVEL: 'warn', DATA_DIR: join(dir, String(i)) }, []);
  });
  const clients = [];
  const bridges = [];
  for (const c of configs) bridges.push(await createBridge(c));
  for (const b of bridges) clients.push(await watch(b.address.wsUrl));
  standIn.go();
  // The cluster's first poll waits for its lease (a whole period on a fresh Redis).
  for (let i = 0; Object.values(clients[0]!.got.codes).some((c) => c.size < 25); i++) {
    if (i > 300) throw new Error('no rows of both markets within 30 s');
    await sleep(100);
  }
  // Beside each whole-list client, one like the end-to-end scenario's: 25 codes of each market.
  const some = Object.fromEntries(Object.entries(clients[0]!.got.codes).map(([m, set]) => [m, [...set].sort().slice(0, 25)]));
  const light = [];
  for (const b of bridges) light.push(await watch(b.address.wsUrl, some));
  await sleep(2_000);
  await redis.configResetStat();
  const cpu0 = await info();
  const c0 = standIn.counters();
  const r0 = light.map((c) => ({ ...c.got }));
  const t0 = performance.now();
  await sleep(WINDOW_S * 1_000);
  const s = await info();
  const scripts = await evalsha();
  const frames = light.reduce((n, c, i) => n + c.got.patchFrames - r0[i]!.patchFrames, 0);
  const both = light.reduce((n, c, i) => n + c.got.bothFrames - r0[i]!.bothFrames, 0);
  const cpuS = s.used_cpu_sys! + s.used_cpu_user! - cpu0.used_cpu_sys! - cpu0.used_cpu_user!;
  const seconds = (performance.now() - t0) / 1000;
  const changes = standIn.counters().served - c0.served;
  rows.push(
    [
      processes,
      (changes / seconds).toFixed(0),
      (s.total_net_input_bytes! / changes).toFixed(0),
      (s.total_net_output_bytes! / changes).toFixed(0),
      ((s.total_net_input_bytes! + s.total_net_output_bytes!) / seconds / 2 ** 20).toFixed(2),
      (s.total_commands_processed! / seconds).toFixed(0),
      (s.used_memory! / 2 ** 20).toFixed(1),
      (cpuS / seconds).toFixed(3),
      ((cpuS * 1e6) / changes).toFixed(1),
      (scripts.usec / Math.max(1, scripts.calls) / 1000).toFixed(2),
      (scripts.calls / seconds).toFixed(2),
      (frames / light.length / seconds).toFixed(2),
      ((100 * both) / Math.max(1, frames)).toFixed(0),
    ].join('\t'),
  );
  for (const { ws } of [...clients, ...light]) ws.terminate();
  await Promise.all(bridges.map((b) => b.stop()));
  await standIn.close();
  rmSync(dir, { recursive: true, force: true });
}
console.log(
  'processes\tchanges/s\tin B/change\tout B/change\tMiB/s total\tcommands/s\tused MiB\tRedis CPU cores\tRedis CPU µs/change\tEVALSHA ms/call\tEVALSHA/s\tlight client: patch frames/s\tframes with both markets %',
);
for (const r of rows) console.log(r);
await redis.close();
redisProc.kill();
