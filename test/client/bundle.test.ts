import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type * as Sdk from '../../src/client/index.js';
import { FakeServer } from './fake-server.js';
import { QuoteMarket, codes, waitFor } from './helpers.js';

/**
 * The browser bundle of the SDK (as the demo page builds it with esbuild):
 * what goes in, and that it works with nothing but a global WebSocket.
 */

const entry = fileURLToPath(new URL('../../src/client/index.ts', import.meta.url));
let code = '';
let inputs: string[] = [];

beforeAll(async () => {
  const out = await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'browser',
    format: 'esm',
    minify: true,
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  code = out.outputFiles[0]!.text;
  inputs = Object.keys(out.metafile.inputs);
});

describe('the browser bundle', () => {
  it('holds the SDK, the protocol vocabulary and row patches, and eventemitter3; nothing from Node, ws, zod or the server', () => {
    const outside = inputs.filter((f) => !f.startsWith('src/client/'));
    expect(outside.sort()).toEqual([
      'node_modules/eventemitter3/index.js',
      'node_modules/eventemitter3/index.mjs',
      'src/protocol/constants.ts',
      'src/protocol/crc32.ts',
      'src/protocol/errors.ts',
      'src/protocol/patch.ts',
      'src/protocol/topics.ts',
    ]);
    expect(code).not.toMatch(/\bnode:|\bBuffer\b|\bprocess\.|require\(["']ws["']\)|zod/);
    // What may go in is the list above; the size catches a large addition inside it (the SDK is about 40 kB minified).
    expect(code.length).toBeLessThan(42_000);
  });

  describe('running with a global WebSocket only', () => {
    let server: FakeServer;
    const g = globalThis as { WebSocket?: unknown };

    beforeAll(async () => {
      server = await FakeServer.start();
      g.WebSocket = WebSocket;
    });
    afterAll(async () => {
      delete g.WebSocket;
      await server.stop();
    });

    it('connects, subscribes and follows the server', async () => {
      const sdk = (await import(`data:text/javascript;base64,${Buffer.from(code).toString('base64')}`)) as typeof Sdk;
      const m = new QuoteMarket(codes(5), 31);
      server.tick('quote', 'kospi', m.step(1));
      const c = new sdk.KrxClient(server.url);
      try {
        await c.subscribe('quote', 'kospi', codes(5));
        for (let i = 0; i < 20; i++) server.tick('quote', 'kospi', m.step());
        const topics = codes(5).map((x) => `quote.kospi.${x}`);
        await waitFor(() => topics.every((t) => c.seq(t) === server.store.entry('quote', 'kospi', t.split('.')[2]!)!.seq), 'in step');
        for (const t of topics) expect(c.snapshot(t)).toEqual(server.truth(t));
        const err = await c.subscribe('quote', 'kospi', 'BAD001').catch((e: unknown) => e);
        expect(sdk.isKrxError(err)).toBe(true);
      } finally {
        await c.close();
      }
    });
  });
});
