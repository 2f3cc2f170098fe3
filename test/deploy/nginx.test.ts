import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import WebSocket from 'ws';
import { startBridge, type TestBridge } from '../bridge/helpers.js';
import { Client } from '../gateway/harness.js';
import { DAY, record } from '../recorder/helpers.js';

/**
 * deploy/nginx.conf run by a real nginx (Debian's, installed by .ci/run) in
 * front of a real bridge: the public reaches exactly the routes
 * docs/OPERATIONS.md §1 lists as public (a replay of a recorded day
 * included), and nothing else.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** The routes OPERATIONS.md §1 marks public (`public` in its "exposed" column). */
function publicRoutes(): string[] {
  const ops = readFileSync(join(ROOT, 'docs/OPERATIONS.md'), 'utf8');
  const table = ops.slice(ops.indexOf('## 1.'), ops.indexOf('## 2.'));
  return table
    .split('\n')
    .filter((l) => l.startsWith('| `') && /\| public \|/.test(l))
    .map((l) => /^\| `([^`?]+)/.exec(l)![1]!);
}

describe('deploy/nginx.conf in front of a bridge', () => {
  let tb: TestBridge;
  let nginx: ChildProcess;
  let dir: string;
  let base = '';
  let log = '';

  beforeAll(async () => {
    // A recorded day on disk, so replays and exports have something to serve.
    const data = mkdtempSync(join(tmpdir(), 'krx-nginx-data-'));
    await record(join(data, 'recordings'), 10);
    tb = await startBridge({ TRUST_PROXY: true, RECORD: 'on', DATA_DIR: data, RECORD_DAYS: 3650 });
    const bridgePort = new URL(tb.url).port;
    const port = await freePort();
    dir = mkdtempSync(join(tmpdir(), 'krx-nginx-'));
    const conf = readFileSync(join(ROOT, 'deploy/nginx.conf'), 'utf8')
      .replace(/server bridge-a:8080[^;]*;\s*server bridge-b:8080[^;]*;/, `server 127.0.0.1:${bridgePort};`)
      .replace('listen 8080;', `listen 127.0.0.1:${port};`)
      .replaceAll('/etc/nginx/krx-bridge-proxy.conf', join(ROOT, 'deploy/krx-bridge-proxy.conf'))
      .replace('worker_processes auto;', `worker_processes 1;\npid ${dir}/nginx.pid;\nerror_log ${dir}/error.log;`)
      .replace(
        'http {',
        `http {\n  access_log off;\n  client_body_temp_path ${dir}/body;\n  proxy_temp_path ${dir}/proxy;\n  fastcgi_temp_path ${dir}/fcgi;\n  uwsgi_temp_path ${dir}/uwsgi;\n  scgi_temp_path ${dir}/scgi;`,
      );
    expect(conf).toContain(`server 127.0.0.1:${bridgePort};`);
    writeFileSync(join(dir, 'nginx.conf'), conf);
    nginx = spawn('nginx', ['-p', dir, '-c', join(dir, 'nginx.conf'), '-g', 'daemon off;'], { stdio: ['ignore', 'pipe', 'pipe'] });
    nginx.stderr!.on('data', (d: Buffer) => (log += d.toString()));
    nginx.on('error', (err) => (log += `cannot run nginx (installed by .ci/run): ${err.message}`));
    base = `http://127.0.0.1:${port}`;
    for (let i = 0; i < 100; i++) {
      const ok = await request(`${base}/status`).then(
        async (r) => (await r.body.dump(), true),
        () => false,
      );
      if (ok) break;
      if (nginx.exitCode !== null) throw new Error(`nginx exited: ${log}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }, 60_000);

  afterAll(async () => {
    nginx?.kill('SIGTERM');
    await tb?.bridge.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('OPERATIONS.md names the public routes', () => {
    expect(publicRoutes().sort()).toEqual(['/', '/api/v2/…', '/recordings', '/status', '/symbols', '/ws', '/ws/replay'].sort());
  });

  it('passes the page, its assets, /api, /symbols and /status, and upgrades /ws', async () => {
    for (const path of ['/', '/status', '/symbols?q=005930', '/api/v2/market/stocks/kospi/005930/master']) {
      const r = await request(`${base}${path}`);
      await r.body.dump();
      expect(r.statusCode, path).toBe(200);
    }
    const ws = new WebSocket(`${base.replace('http', 'ws')}/ws`);
    const first = await new Promise<string>((resolve, reject) => {
      ws.once('message', (d) => resolve(String(d)));
      ws.once('error', reject);
    });
    expect(JSON.parse(first)).toMatchObject({ type: 'welcome' });
    ws.close();
    // A plain GET of /ws reaches the bridge too: the SDK asks it why a socket failed to open.
    for (const [path, status, code] of [
      ['/ws', 426, 'upgrade_required'],
      ['/ws?tokn=1', 400, 'invalid_params'],
    ] as const) {
      const r = await request(`${base}${path}`);
      expect(r.statusCode, path).toBe(status);
      expect(((await r.body.json()) as { error: { code: string } }).error.code, path).toBe(code);
    }
  });

  it('passes /recordings and its exports, and upgrades /ws/replay to a replay that plays to its end', async () => {
    const list = await request(`${base}/recordings`);
    expect(list.statusCode).toBe(200);
    expect(((await list.body.json()) as { days: { date: string }[] }).days.map((d) => d.date)).toContain(DAY);
    const csv = await request(`${base}/recordings/${DAY}/quote.kospi?codes=100000&format=csv`);
    expect(csv.statusCode).toBe(200);
    expect((await csv.body.text()).trim().split('\n')).toHaveLength(11);
    const replay = await Client.connect(`${base.replace('http', 'ws')}/ws/replay?date=${DAY}&from=100000&to=100010&speed=max`);
    expect(replay.of('welcome')[0]!.replay).toEqual({ date: DAY, from: '100000', to: '100010', speed: 'max' });
    replay.send({ op: 'subscribe', id: 1, channel: 'quote', market: 'kospi', codes: ['100000'] });
    expect(await replay.closedWith(10_000)).toEqual({ code: 1000, reason: 'replay ended' });
    expect(replay.of('patch').map((m) => m.seq)).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  it('answers 404 for everything else, whatever the bridge would say', async () => {
    for (const path of ['/metrics', '/healthz', '/readyz', '/app.js.map', '/wsx', '/statusx', '/secret', '/ws/replayx', '/recordingsx']) {
      const r = await request(`${base}${path}`);
      await r.body.dump();
      expect(r.statusCode, path).toBe(404);
    }
  });
});
