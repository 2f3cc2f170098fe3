import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CLIENT_OPS, ClientMsg, ServerFrame, ServerMsg } from '../../src/protocol/messages.js';
import { CLOSE_CODES, ERROR_CODES } from '../../src/protocol/errors.js';
import { rowChecksum } from '../../src/protocol/crc32.js';
import { errorTable, protocolJsonSchema } from '../../src/protocol/docs.js';

const doc = readFileSync(new URL('../../docs/PROTOCOL.md', import.meta.url), 'utf8');
const blocks = [...doc.matchAll(/```json\n([\s\S]*?)\n```/g)].map((m) => JSON.parse(m[1]!) as unknown);

describe('docs/PROTOCOL.md', () => {
  it('has examples', () => expect(blocks.length).toBeGreaterThan(15));

  it('every example is valid against the zod schemas', () => {
    for (const b of blocks) {
      if (!Array.isArray(b) && typeof b === 'object' && b && 'op' in b) expect(() => ClientMsg.parse(b), JSON.stringify(b)).not.toThrow();
      else expect(() => ServerFrame.parse(b), JSON.stringify(b)).not.toThrow();
    }
  });

  it('shows every client op and every server message type', () => {
    const ops = new Set(blocks.filter((b) => typeof b === 'object' && b && 'op' in b).map((b) => (b as { op: string }).op));
    expect([...ops].sort()).toEqual([...CLIENT_OPS].sort());
    const types = new Set(
      blocks
        .flatMap((b) => (Array.isArray(b) ? b : [b]))
        .filter((b) => 'type' in (b as object))
        .map((b) => (b as { type: string }).type),
    );
    const all = ServerMsg.options.map((o) => o.shape.type.value);
    expect([...types].sort()).toEqual([...all].sort());
  });

  it('example checksums are the CRC-32 of the canonical row after each change (every topic with a snapshot shown)', () => {
    const msgs = blocks.flatMap((b) => (Array.isArray(b) ? b : [b])) as {
      type?: string;
      topic?: string;
      data?: Record<string, unknown>;
      ops?: { path: string; value: unknown }[];
      crc?: number;
    }[];
    const topics = [...new Set(msgs.filter((m) => m.type === 'snapshot').map((m) => m.topic!))];
    expect(topics).toEqual(expect.arrayContaining(['quote.kospi.005930', 'price.kospi.000660']));
    for (const topic of topics) {
      const snap = msgs.find((m) => m.type === 'snapshot' && m.topic === topic)!;
      expect(rowChecksum(snap.data!), topic).toBe(snap.crc);
      let row = { ...snap.data! };
      const patches = msgs.filter((m) => m.type === 'patch' && m.topic === topic);
      for (const p of patches) {
        for (const op of p.ops!) row = { ...row, [op.path.slice(1)]: op.value };
        expect(rowChecksum(row), `${topic} patch`).toBe(p.crc);
      }
    }
  });

  it('lists every error code, generated from the code table', () => {
    const section = /<!-- errors:start -->\n([\s\S]*?)<!-- errors:end -->/.exec(doc)![1]!;
    expect(section).toBe(errorTable());
    for (const code of Object.keys(ERROR_CODES)) expect(section).toContain(`\`${code}\``);
  });

  it('lists every close code with its reason', () => {
    const section = /<!-- close:start -->\n([\s\S]*?)<!-- close:end -->/.exec(doc)![1]!;
    for (const c of Object.values(CLOSE_CODES)) expect(section).toContain(`| ${c.code} | ${c.reason} |`);
  });
});

describe('docs/protocol.schema.json', () => {
  it('is the JSON Schema generated from the zod definitions (run `npm run docs` after changing them)', () => {
    const file = JSON.parse(readFileSync(new URL('../../docs/protocol.schema.json', import.meta.url), 'utf8'));
    expect(file).toEqual(JSON.parse(JSON.stringify(protocolJsonSchema())));
  });
});
