import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { compileKernel, kernelModuleText } from '../../scripts/kernel-wasm.js';
import { StateStore, type ChangeBatch } from '../../src/state/store.js';
import { readBody } from '../../src/upstream/body.js';
import { endpoint } from '../../src/upstream/catalogue.js';
import { ListReader } from '../../src/upstream/listread.js';
import {
  C as K_C,
  CHANGE as K_CHANGE,
  F as K_F,
  K as K_K,
  LAYOUT_BYTES,
  LAYOUT_INTS,
  R as K_R,
  RUN as K_RUN,
  S as K_S,
} from '../../src/upstream/kernel/kernel.js';

/**
 * The list kernel (src/upstream/kernel/): the binary the bridge loads is the
 * one its source compiles to, and the reader and the store that use it give
 * what the plain way gives where its memory grows and where its table of
 * field layouts fills (test/upstream/listread.test.ts holds the rest).
 */

const LISTS = endpoint('v2.multiquote.lists');

const row = (code: string, price: number, extra = '') => `{"isuSrtCd":"${code}","trdPrc":${price},"accTrdvol":${price * 3}${extra}}`;
const body = (rows: string[]) => Buffer.from(`{"trdDd":"20240603","trdTm":"090500","isuLists":[${rows.join(',')}]}`);

function events(b: ChangeBatch): unknown[] {
  return b.events.map((e) => [e.topic, e.seq, e.kind, e.frame, e.bytes!.toString('base64'), e.crc, JSON.stringify(e.row)]);
}

/** Feeds the bodies to a reader and a store, and the plain way to another store; every read and every event must be the same. */
function same(bodies: Buffer[]): void {
  const reader = new ListReader();
  const fast = new StateStore({ epoch: 'e' });
  const plain = new StateStore({ epoch: 'e' });
  bodies.forEach((b, i) => {
    const got = readBody(LISTS, b, reader);
    const want = readBody(LISTS, b);
    if (!got.ok || !want.ok) throw new Error(`body ${i} not read`);
    expect(JSON.stringify(got.value.rows)).toBe(JSON.stringify(want.value.rows));
    expect(events(fast.apply('quote', 'kospi', got.value.rows, 1_000 + i, undefined, got.delta))).toEqual(
      events(plain.apply('quote', 'kospi', want.value.rows, 1_000 + i)),
    );
  });
}

describe('the list kernel', () => {
  it('is the binary its source compiles to (`npm run build:kernel`)', async () => {
    const text = readFileSync(new URL('../../src/upstream/kernel/wasm.ts', import.meta.url), 'utf8');
    expect(text).toBe(kernelModuleText(await compileKernel()));
  }, 60_000);

  it('reads as the plain way does while its memory grows between reads and within one', () => {
    const codes = (n: number) => Array.from({ length: n }, (_, i) => String(100_000 + i));
    const small = codes(3);
    const large = codes(20_000);
    same([
      body(small.map((c, i) => row(c, i))),
      body(small.map((c, i) => row(c, i + 1))),
      // Two megabytes and more: the bodies, the records and the frames outgrow the memory the small ones had.
      body(large.map((c, i) => row(c, i, ',"name":"' + 'x'.repeat(60) + '"'))),
      body(large.map((c, i) => row(c, i % 3 === 0 ? i + 7 : i, ',"name":"' + 'x'.repeat(60) + '"'))),
      body(large.map((c, i) => row(c, i % 5 === 0 ? i + 9 : i, ',"name":"' + 'x'.repeat(60) + '"'))),
      body(small.map((c, i) => row(c, i + 2))),
    ]);
  });

  it('reads as the plain way does when rows bring new fields so often that its table of layouts fills', () => {
    // Each body's rows carry a field of another name: a new layout each time, 300 in all, past the table's 256.
    const bodies = Array.from({ length: 300 }, (_, k) => body(['005930', '000660'].map((c, i) => row(c, 100 + k + i, `,"f${k}":${k}`))));
    // Between them, bodies that only change values, read against the layouts just made.
    same(bodies.flatMap((b, k) => [b, body(['005930', '000660'].map((c, i) => row(c, 200 + k + i, `,"f${k}":${k}`)))]));
  });
});

describe('a process without WebAssembly', () => {
  it('reads every list the plain way, to the same result, and says why', () => {
    const wasm = globalThis.WebAssembly;
    // As under `node --jitless`, where WebAssembly is not defined.
    (globalThis as { WebAssembly?: unknown }).WebAssembly = undefined;
    try {
      const reader = new ListReader();
      for (const b of [body([row('005930', 1)]), body([row('005930', 2)])]) {
        const got = readBody(LISTS, b, reader);
        const want = readBody(LISTS, b);
        expect(got).toMatchObject({ ok: true, plain: 'kernel' });
        expect(got.ok && JSON.stringify(got.value)).toBe(want.ok && JSON.stringify(want.value));
      }
    } finally {
      globalThis.WebAssembly = wasm;
    }
  });
});

describe('the numbers the kernel and its caller share', () => {
  it('are the same on both sides: control slots, record words, statuses, results and the layout table', () => {
    const source = readFileSync(new URL('../../src/upstream/kernel/assembly/index.ts', import.meta.url), 'utf8');
    const declared = new Map<string, number>();
    // A status is declared shifted into its place in the flags (`1 << 8`); the caller shifts the flags down.
    for (const m of source.matchAll(/^const ([A-Z][A-Z_]*)(?:: i32)? = (-?\d+)(?: << 8)?;/gm)) declared.set(m[1]!, Number(m[2]));
    const expectSame = (prefix: string, table: Readonly<Record<string, number>>): void => {
      for (const [name, value] of Object.entries(table)) expect([prefix + name, declared.get(prefix + name)]).toEqual([prefix + name, value]);
    };
    expectSame('C_', K_C);
    expectSame('F_', K_F);
    expectSame('R_', K_R);
    expectSame('S_', K_S);
    expectSame('K_', K_K);
    expectSame('', K_RUN);
    expectSame('', K_CHANGE);
    expectSame('', { LAYOUT_BYTES, LAYOUT_INTS });
  });
});

describe('rows whose changed values the normaliser refuses', () => {
  it('are read whole one by one, as the plain way reads them, however many there are', () => {
    const codes = Array.from({ length: 3_000 }, (_, i) => String(100_000 + i));
    const list = (price: (i: number) => string) => body(codes.map((c, i) => `{"isuSrtCd":"${c}","trdPrc":${price(i)},"accTrdvol":5}`));
    same([
      list((i) => String(i + 1)),
      // Every row's price becomes text the normaliser refuses: each row is dropped.
      list(() => '"n/a"'),
      list((i) => String(i + 2)),
      // Every other row's.
      list((i) => (i % 2 === 0 ? '"n/a"' : String(i + 3))),
      list((i) => String(i + 4)),
      list((i) => (i % 7 === 0 ? '"n/a"' : String(i + 4))),
    ]);
  });
});

describe('rows longer than the kernel has room for', () => {
  it('are checksummed and framed the plain way, to the same events', () => {
    // Rows of 5 KB (past the room a row's canonical bytes get) and of 70 KB (past a chunk of frames), their integers changing.
    for (const len of [5_000, 70_000]) {
      const note = `,"note":"${'x'.repeat(len)}"`;
      same([1, 2, 3].map((k) => body(['005930', '000660', '035420'].map((c, i) => row(c, 100 * k + i, note)))));
    }
  });
});
