import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import type { Session } from '../../src/gateway/session.js';
import { sleep, startBridge, until, type TestBridge } from '../bridge/helpers.js';
import { metric } from './helpers.js';

/**
 * Clients that flood `get lists` (the whole KOSPI symbol list, about 370 KB
 * a reply) and never read. Before, every reply was serialised anew and
 * written whatever the connection held: 60 such clients took the process
 * from 130 MB to 1.7 GB and /healthz stopped answering for seconds. Now no
 * connection holds more than SLOW_REPLY_BYTES of replies (plus the one that
 * crossed it), never more than SLOW_CLOSE_BYTES in all, and the process
 * keeps answering. The per-client lookup rate is raised out of the way, as
 * an attacker with many addresses would have it. The clients run in a
 * process of their own, as an attacker's would, and so does the /healthz
 * probe, as a load balancer's would, so what is measured here is the
 * bridge's event loop alone.
 */

const CLIENTS = 60;
const GETS = 100;
const REPLY_BYTES = 4 << 20;

describe('clients that flood get and never read', () => {
  let tb: TestBridge;
  let flooder: ChildProcess | undefined;
  let prober: ChildProcess | undefined;
  beforeAll(async () => {
    tb = await startBridge({ GETS_PER_MINUTE: 100_000, MAX_MESSAGES_PER_SECOND: 100, SLOW_REPLY_BYTES: REPLY_BYTES });
    await until(() => tb.bridge.symbols.loaded('kospi'), 10_000, 'the KOSPI symbol list');
  });
  afterAll(async () => {
    flooder?.kill('SIGKILL');
    prober?.kill('SIGKILL');
    await tb?.bridge.stop();
  });

  it('hold at most their reply cap each, and /healthz answers within 100 ms of its quiet time throughout', async () => {
    const listBytes = (await (await request(`${tb.url}/api/v2/market/stocks/kospi/lists`)).body.text()).length;
    expect(listBytes).toBeGreaterThan(100_000);
    const script = fileURLToPath(new URL('./flooder.mjs', import.meta.url));
    const f = spawn(process.execPath, [script, tb.wsUrl, String(CLIENTS), String(GETS), 'lists', 'kospi'], { stdio: ['pipe', 'pipe', 'inherit'] });
    flooder = f;
    let out = '';
    f.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    await until(() => out.includes('ready'), 10_000, 'the flooder ready');
    await expect.poll(() => tb.bridge.gateway.clientCount).toBe(CLIENTS);
    const sessions = (tb.bridge.gateway as unknown as { sessions: Set<Session> }).sessions;
    let maxHeld = 0;
    // The probe runs in a process of its own too: an outsider's view of one answer, not the turns this process's own client would add.
    const p = spawn(process.execPath, [fileURLToPath(new URL('./prober.mjs', import.meta.url)), tb.url, '20'], { stdio: ['ignore', 'pipe', 'inherit'] });
    prober = p;
    const answers: { at: number; ms: number }[] = [];
    let lines = '';
    p.stdout!.on('data', (d: Buffer) => {
      lines += d.toString();
      const cut = lines.lastIndexOf('\n');
      for (const line of lines.slice(0, cut).split('\n').filter(Boolean)) {
        const [at, ms] = line.split(' ').map(Number);
        answers.push({ at: at!, ms: ms! });
      }
      lines = lines.slice(cut + 1);
    });
    const since = (t: number) => answers.filter((a) => a.at >= t).map((a) => a.ms);
    // The machine's own noise first: /healthz with the flooders connected but quiet, over a second.
    await until(() => answers.length > 0, 10_000, 'the prober');
    const quietFrom = Date.now();
    await until(() => since(quietFrom).length >= 40, 10_000, 'forty quiet answers');
    const quiet = since(quietFrom);
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        for (const s of sessions) maxHeld = Math.max(maxHeld, s.ws.bufferedAmount);
        // The sampling pace, not a wait.
        await sleep(20);
      }
    })();
    const floodFrom = Date.now();
    f.stdin!.write('go\n');
    // Until every request has been answered one way or another (a reply, a refusal, or the close).
    const answered = async () =>
      (await metric(tb.bridge.metrics, 'krx_messages_out_total', { type: 'result' })) +
      (await metric(tb.bridge.metrics, 'krx_errors_out_total', { code: 'rate_limited' }));
    await expect.poll(answered, { timeout: 30_000, interval: 200 }).toBeGreaterThanOrEqual(CLIENTS * GETS * 0.9);
    // A window, not a wait: the samples go on over the tail of the work (the last answers, the closes).
    await sleep(300);
    sampling = false;
    await sampler;
    // Every probe asked during the flood has its answer (the prober asks one at a time).
    const floodTo = Date.now();
    await until(() => since(floodTo).length > 0, 10_000, 'the last probe answered');
    const health = answers.filter((a) => a.at >= floodFrom && a.at < floodTo).map((a) => a.ms);
    const results = await metric(tb.bridge.metrics, 'krx_messages_out_total', { type: 'result' });
    console.log(
      JSON.stringify({
        listBytes,
        results,
        maxHeldMB: +(maxHeld / 2 ** 20).toFixed(2),
        healthMaxMs: Math.round(Math.max(...health)),
        quietMaxMs: Math.round(Math.max(...quiet)),
        samples: health.length,
      }),
    );
    // Each connection got replies until its socket (the kernel's buffer, then the cap) was full, and a coded refusal for each of the rest.
    expect(results).toBeLessThan((CLIENTS * GETS) / 2);
    expect(maxHeld).toBeLessThanOrEqual(REPLY_BYTES + listBytes);
    expect(health.length).toBeGreaterThan(5);
    // The flood adds less than 100 ms to the slowest answer the machine gave without it (a shared machine's scheduling is not the bridge's).
    expect(Math.max(...health)).toBeLessThan(100 + Math.max(...quiet));
    expect(tb.bridge.gateway.clientCount).toBe(CLIENTS);
  }, 60_000);
});
