import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../src/cli/main.js';
import { parseTopics } from '../../src/cli/tail.js';
import { ROOT } from '../bridge/cli.js';
import { startBridge, until, type TestBridge } from '../bridge/helpers.js';
import { cursorUps, fakeIo, frames, lastFrame } from './io.js';

/** The `krx-bridge` commands, run in-process with a recorded standard output (and once as a process). */

describe('help and version', () => {
  it.each([
    [['--help'], /Commands:[\s\S]*tail <topic>/],
    [['serve', '--help'], /--port <value>[\s\S]*\[PORT\] \(default 8080\)[\s\S]*--upstream-api-key/],
    [['tail', '--help'], /--url <ws url>[\s\S]*--token/],
    [
      ['sim', '--help'],
      /--sim-port <value>\s+port \[SIM_PORT\] \(default 9090\)[\s\S]*--sim-daily-limit <value>\s+calls per GMT day before 429 \[SIM_DAILY_LIMIT\] \(default 50000\)/,
    ],
    [['get', '--help'], /--period <D\|W\|M>/],
    [['--version'], /^\d+\.\d+\.\d+\n$/],
  ] as [string[], RegExp][])('%j', async (argv, text) => {
    const f = fakeIo();
    expect(await run(argv, f.io)).toBe(0);
    expect(f.out()).toMatch(text);
  });

  it('prints each help and exits 0 as a process', () => {
    for (const argv of [['--help'], ['tail', '--help'], ['sim', '--help'], ['serve', '--help']]) {
      const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...argv], { cwd: ROOT, encoding: 'utf8' });
      expect(r.status, argv.join(' ')).toBe(0);
      expect(r.stdout).toMatch(/^Usage: krx-bridge/);
    }
  }, 60_000);

  it('an unknown command or option is one line and exit 1', async () => {
    const f = fakeIo();
    expect(await run(['bogus'], f.io)).toBe(1);
    expect(f.err()).toBe('krx-bridge: unknown command "bogus" (serve, sim, tail, get; --help)\n');
    const g = fakeIo();
    expect(await run(['serve', '--no-such-flag'], g.io)).toBe(1);
    expect(g.err()).toMatch(/^krx-bridge: unknown or malformed option --no-such-flag/);
  });
});

describe('sim', () => {
  it('runs the simulator alone, its settings given as flags', async () => {
    const { spawn } = await import('node:child_process');
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'sim', '--sim-port', '0', '--sim-api-key', 'flag-key-1234'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '', LOG_FORMAT: 'json' },
    });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    try {
      await until(() => /"url":"http:\/\/127\.0\.0\.1:\d+"/.test(out), 30_000, 'the simulator');
      const url = /"url":"(http:\/\/[^"]+)"/.exec(out)![1]!;
      const r = await fetch(`${url}/v2/market/stocks/kospi/005930/master`, { headers: { apikey: 'flag-key-1234' } });
      expect(r.status).toBe(200);
    } finally {
      child.kill('SIGTERM');
    }
  }, 40_000);

  // `serve` as `sim`: both end through exitAfterLogs (src/log.ts), whose wait this guards.
  it.each([
    ['sim', ['sim', '--sim-port', '0'], {}],
    ['serve', ['--port', '0', '--host', '127.0.0.1'], { STATE: 'off', RECORD: 'off' }],
  ] as [string, string[], Record<string, string>][])(
    '%s stops on SIGTERM when the reader of its output has gone away',
    async (_name, argv, env) => {
      const { spawn } = await import('node:child_process');
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...argv], {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'ignore'],
        env: { PATH: process.env.PATH ?? '', LOG_FORMAT: 'json', ...env },
      });
      let out = '';
      let exit: number | null | undefined;
      child.on('exit', (code) => (exit = code));
      child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      try {
        await until(() => /"url":"http:\/\/127\.0\.0\.1:\d+"/.test(out), 30_000, 'the process to listen');
        // As under `krx-bridge … | head`: the pipe's reading end closes, so what the process writes next fails (EPIPE).
        child.stdout!.destroy();
        child.kill('SIGTERM');
        await until(() => exit !== undefined, 10_000, 'the process to exit');
        expect(exit).toBe(0);
      } finally {
        child.kill('SIGKILL');
      }
    },
    60_000,
  );
});

describe('topics of tail', () => {
  it('groups topics by feed, wildcards included', () => {
    expect(parseTopics(['price.kospi.005930', 'price.kospi.000660', 'quote.kosdaq.*', 'price.kospi.005930'])).toEqual([
      { channel: 'price', market: 'kospi', codes: ['005930', '000660'] },
      { channel: 'quote', market: 'kosdaq', codes: ['*'] },
    ]);
    expect(() => parseTopics(['price.kospi'])).toThrow(/not a topic/);
    expect(() => parseTopics(['prices.kospi.005930'])).toThrow(/unknown channel/);
  });

  // The protocol takes a wildcard alone in a subscribe: merged with codes, the bridge refused the whole feed.
  it('keeps a wildcard apart from codes of the same feed', () => {
    expect(parseTopics(['quote.kospi.*', 'quote.kospi.005930', 'quote.kospi.*', 'quote.kospi.000660'])).toEqual([
      { channel: 'quote', market: 'kospi', codes: ['*'] },
      { channel: 'quote', market: 'kospi', codes: ['005930', '000660'] },
    ]);
  });
});

describe('tail and get against a bridge', () => {
  let tb: TestBridge;
  beforeAll(async () => {
    tb = await startBridge();
  });
  afterAll(async () => {
    await tb?.bridge.stop();
  });

  it('tail, piped: one JSON line per change with the whole row', async () => {
    const f = fakeIo();
    const done = run(['tail', 'price.kospi.005930', 'quote.kosdaq.*', '--url', tb.wsUrl], f.io);
    await until(() => f.out().includes('"topic":"price.kospi.005930"') && f.out().includes('"topic":"quote.kosdaq.'), 10_000, 'lines');
    f.stop();
    expect(await done).toBe(0);
    const line = f
      .out()
      .split('\n')
      .map((l) => JSON.parse(l || 'null'))
      .find((m) => m?.topic === 'price.kospi.005930');
    expect(line).toMatchObject({
      topic: 'price.kospi.005930',
      seq: expect.any(Number),
      ts: expect.any(Number),
      row: { isuSrtCd: '005930', trdPrc: expect.any(Number) },
    });
  });

  it('tail on a terminal draws a table', async () => {
    const f = fakeIo({}, true);
    const done = run(['tail', 'price.kospi.005930', '--url', tb.wsUrl], f.io);
    await until(() => f.out().includes('price.kospi.005930'), 10_000, 'the table');
    f.stop();
    expect(await done).toBe(0);
    expect(f.out()).toMatch(/topic\s+price\s+change\s+volume/);
  });

  it('tail exits 2 with a clear message when it cannot connect', async () => {
    const f = fakeIo();
    expect(await run(['tail', 'price.kospi.005930', '--url', 'ws://127.0.0.1:1/ws', '--timeout', '1000'], f.io)).toBe(2);
    expect(f.err()).toBe('krx-bridge: cannot connect to ws://127.0.0.1:1/ws: connection refused (is the bridge running there?)\n');
  });

  it("tail exits 2 at once with the bridge's reason when it refuses the connection", async () => {
    const f = fakeIo();
    const t0 = Date.now();
    expect(await run(['tail', 'price.kospi.005930', '--url', `${tb.wsUrl}?tokn=abc`, '--timeout', '5000'], f.io)).toBe(2);
    expect(Date.now() - t0).toBeLessThan(4000);
    expect(f.err()).toBe(
      `krx-bridge: cannot connect to ${tb.wsUrl}?tokn=abc: the server refused the connection: 1 unknown query parameter; this takes only token (HTTP 400)\n`,
    );
  });

  it('tail follows a whole market and a code of it together', async () => {
    const f = fakeIo();
    const done = run(['tail', 'quote.kosdaq.*', 'quote.kosdaq.247540', '--url', tb.wsUrl], f.io);
    await until(() => f.out().includes('"topic":"quote.kosdaq.247540"') && (f.out().match(/"topic":"quote\.kosdaq\./g) ?? []).length > 100, 10_000, 'lines');
    f.stop();
    expect(f.err()).toBe('');
    expect(await done).toBe(0);
  });

  it('tail on a terminal smaller than its topics draws what fits, never more lines than the terminal has', async () => {
    const f = fakeIo({}, true, { rows: 30 });
    const done = run(['tail', 'quote.kosdaq.*', '--url', tb.wsUrl], f.io);
    await until(() => frames(f.out()).length >= 3 && /quote\.kosdaq: /.test(lastFrame(f.out())), 10_000, 'redraws with the feed state');
    f.stop();
    expect(await done).toBe(0);
    const moves = cursorUps(f.out());
    expect(moves.length).toBeGreaterThan(1);
    expect(Math.max(...moves)).toBeLessThanOrEqual(29);
    for (const frame of frames(f.out())) expect(frame.split('\n').length - 1).toBeLessThanOrEqual(29);
    expect(lastFrame(f.out())).toMatch(/^… and 1\d\d\d more topics \(pipe the output for every change as JSON\)$/m);
  });

  it('get takes ISO days as well as YYYYMMDD', async () => {
    const iso = fakeIo({ KRX_BRIDGE_URL: tb.wsUrl });
    expect(await run(['get', 'history', 'kospi', '005930', '--from', '2025-04-07', '--to', '2025-04-11'], iso.io)).toBe(0);
    const compact = fakeIo({ KRX_BRIDGE_URL: tb.wsUrl });
    expect(await run(['get', 'history', 'kospi', '005930', '--from', '20250407', '--to', '20250411'], compact.io)).toBe(0);
    expect(iso.out()).toBe(compact.out());
    expect((JSON.parse(iso.out()) as { hisLists: { trdDd: string }[] }).hisLists.map((r) => r.trdDd)).toEqual([
      '20250411',
      '20250410',
      '20250409',
      '20250408',
      '20250407',
    ]);
  });

  it('get says why the bridge refuses the connection, as tail does', async () => {
    const url = `${tb.wsUrl}/nope`;
    const refusal = `krx-bridge: cannot connect to ${url}: the server refused the connection: not found (HTTP 404)\n`;
    const g = fakeIo();
    expect(await run(['get', 'master', 'kospi', '005930', '--url', url, '--timeout', '1500'], g.io)).toBe(2);
    expect(g.err()).toBe(refusal);
    const t = fakeIo();
    expect(await run(['tail', 'price.kospi.005930', '--url', url, '--timeout', '1500'], t.io)).toBe(2);
    expect(t.err()).toBe(refusal);
  });

  it('get prints a lookup as JSON', async () => {
    const f = fakeIo({ KRX_BRIDGE_URL: tb.wsUrl });
    expect(await run(['get', 'history', 'kospi', '005930', '--period', 'D', '--count', '3'], f.io)).toBe(0);
    expect((JSON.parse(f.out()) as { hisLists: unknown[] }).hisLists).toHaveLength(3);
    const g = fakeIo({ KRX_BRIDGE_URL: tb.wsUrl });
    expect(await run(['get', 'master', 'kospi', '999999'], g.io)).toBe(2);
    expect(g.err()).toMatch(/^krx-bridge: invalid_code: /);
  });
});

describe('options of tail and get, checked before anything is sent', () => {
  it.each([
    [['tail', 'price.kospi.005930', '--timeout', 'abc'], '--timeout takes a whole number of milliseconds, 1 or more (e.g. 5000), got "abc"'],
    [['tail', 'price.kospi.005930', '--timeout', '0'], '--timeout takes a whole number of milliseconds, 1 or more (e.g. 5000), got "0"'],
    [['get', 'master', 'kospi', '005930', '--timeout', 'abc'], '--timeout takes a whole number of milliseconds, 1 or more (e.g. 5000), got "abc"'],
    [['get', 'master', 'kospi', '005930', '--timeout', '1.5'], '--timeout takes a whole number of milliseconds, 1 or more (e.g. 5000), got "1.5"'],
    [['get', 'history', 'kospi', '005930', '--count', 'abc'], '--count takes a whole number from 1 to 100, got "abc"'],
    [['get', 'history', 'kospi', '005930', '--count', '101'], '--count takes a whole number from 1 to 100, got "101"'],
    [['get', 'intraday', 'kospi', '005930', '--interval', '1e1'], '--interval takes 10, 60 or 600 (seconds), got "1e1"'],
    [['get', 'intraday', 'kospi', '005930', '--interval', '30'], '--interval takes 10, 60 or 600 (seconds), got "30"'],
    [['get', 'history', 'kospi', '005930', '--from', '2026-13-01'], '--from takes a day, YYYYMMDD or YYYY-MM-DD, got "2026-13-01"'],
    [['get', 'history', 'kospi', '005930', '3'], 'unexpected argument "3" (usage: krx-bridge get <resource> <market> [code]; see --help)'],
    [['tail', 'price.kospi.005930', '--url', 'notaurl'], `not a URL: "notaurl" (the bridge's WebSocket, e.g. ws://localhost:8080/ws)`],
    [
      ['get', 'master', 'kospi', '005930', '--url', 'http://127.0.0.1:18400/ws'],
      'not a WebSocket URL: "http://127.0.0.1:18400/ws" (expected ws:// or wss://, e.g. ws://localhost:8080/ws; did you mean ws://127.0.0.1:18400/ws?)',
    ],
  ] as [string[], string][])('%j exits 1: %s', async (argv, message) => {
    // A bridge that would answer: nothing may be sent to it.
    const f = fakeIo({ KRX_BRIDGE_URL: 'ws://127.0.0.1:1/ws' });
    const t0 = Date.now();
    expect(await run(argv, f.io)).toBe(1);
    expect(f.err()).toBe(`krx-bridge: ${message}\n`);
    expect(Date.now() - t0).toBeLessThan(1000);
  });

  it('a KRX_BRIDGE_URL that is not a WebSocket URL is a usage error too', async () => {
    const f = fakeIo({ KRX_BRIDGE_URL: 'https://bridge.example/ws' });
    expect(await run(['tail', 'price.kospi.005930'], f.io)).toBe(1);
    expect(f.err()).toMatch(/^krx-bridge: not a WebSocket URL: "https:\/\/bridge\.example\/ws" \(.*did you mean wss:\/\/bridge\.example\/ws\?\)\n$/);
  });
});

describe('logs for people', () => {
  it('are pretty with LOG_FORMAT=pretty (JSON when piped otherwise), and still never show the key', async () => {
    const { startCli } = await import('../bridge/cli.js');
    const KEY = 'pretty-log-secret-key-4b7d0a';
    const b = await startCli({ LOG_FORMAT: 'json', UPSTREAM_URL: 'http://127.0.0.1:1', UPSTREAM_API_KEY: KEY, LOG_LEVEL: 'debug' });
    b.kill();
    const pretty = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts'], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 8000,
      killSignal: 'SIGTERM',
      env: {
        PATH: process.env.PATH ?? '',
        PORT: '0',
        HOST: '127.0.0.1',
        STATE: 'off',
        // Nothing written into the checkout's ./data.
        RECORD: 'off',
        LOG_FORMAT: 'pretty',
        LOG_LEVEL: 'debug',
        UPSTREAM_URL: 'http://127.0.0.1:1',
        UPSTREAM_API_KEY: KEY,
      },
    });
    const out = pretty.stdout;
    expect(out).toMatch(/^\[\d\d:\d\d:\d\d\] INFO: krx-bridge listening \{.*"page":"http:\/\/127\.0\.0\.1:\d+\/".*"market":"/m);
    expect(out).not.toMatch(/^\{"level"/m);
    expect(out + pretty.stderr + b.output()).not.toContain(KEY);
    expect(b.output()).toMatch(/^\{"level":30/m);
  }, 30_000);
});
