import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ClusterMetrics } from '../../src/cluster/metrics.js';
import { SETTINGS, defaultConfig } from '../../src/config/config.js';
import { Metrics } from '../../src/metrics/metrics.js';
import { STATES } from '../../src/protocol/constants.js';
import { CLOSE_CODES, ERROR_CODES } from '../../src/protocol/errors.js';
import { UPSTREAM_ERROR_CODES } from '../../src/upstream/errors.js';

/**
 * docs/OPERATIONS.md against the code: every metric (with its labels),
 * every wire, HTTP and upstream error code, every close code, feed state
 * and setting must be there, and every default it states must be the
 * code's default.
 */

const root = new URL('../../', import.meta.url);
const doc = readFileSync(new URL('docs/OPERATIONS.md', root), 'utf8');

/** The text of the section whose heading starts with `heading` (up to the next heading of the same or a higher level). */
function section(heading: string): string {
  const lines = doc.split('\n');
  const start = lines.findIndex((l) => /^#+ /.test(l) && l.replace(/^#+ /, '').startsWith(heading));
  if (start < 0) throw new Error(`no section ${heading}`);
  const level = /^#+/.exec(lines[start]!)![0].length;
  const end = lines.findIndex((l, i) => i > start && /^#+ /.test(l) && /^#+/.exec(l)![0].length <= level);
  return lines.slice(start, end < 0 ? undefined : end).join('\n');
}

/** Table rows of a text whose first cell is `first`. */
function rows(text: string, first: string): string[][] {
  return text
    .split('\n')
    .filter((l) => l.startsWith(`| ${first} |`))
    .map((l) => l.split(' | ').map((c) => c.replace(/^\| /, '').replace(/ \|$/, '').trim()));
}

/** A default as the doc writes it. */
function shown(v: unknown): string {
  if (v === undefined) return '–';
  if (Array.isArray(v)) return v.join(',');
  return String(v);
}

describe('docs/OPERATIONS.md', () => {
  it('lists every metric with each of its labels', async () => {
    const registry = new Metrics({ defaults: false }).registry;
    new ClusterMetrics(registry);
    const metrics = registry.getMetricsAsArray();
    expect(metrics.length).toBeGreaterThan(25);
    const table = section('6. Metrics');
    for (const m of metrics) {
      const labels = (m as unknown as { labelNames: string[] }).labelNames;
      const name = labels.length ? `\`${m.name}{${labels.join(',')}}\`` : `\`${m.name}\``;
      const row = table.split('\n').find((l) => l.startsWith(`| ${name} |`));
      expect(row, `${m.name} in §6`).toBeDefined();
      for (const l of labels) expect(row, `label ${l} of ${m.name}`).toContain(`\`${l}\``);
    }
    // Nothing documented that does not exist.
    const documented = [...table.matchAll(/^\| `(krx_[a-z_]+)/gm)].map((x) => x[1]);
    expect(documented.sort()).toEqual(metrics.map((m) => m.name).sort());
  });

  it('lists every wire error code with its HTTP status and retryability', () => {
    const table = section('4.1 Wire errors');
    const http = new Map(
      Object.entries({
        bad_request: 400,
        unknown_op: 400,
        rate_limited: 429,
        upstream_rate_limited: 429,
        upstream_unavailable: 502,
        not_found: 404,
        unauthorized: 401,
        internal: 500,
      }),
    );
    for (const [code, e] of Object.entries(ERROR_CODES)) {
      const [row] = rows(table, `\`${code}\``);
      expect(row, code).toBeDefined();
      expect(row![2], `${code} retryable`).toBe(e.retryable ? 'yes' : 'no');
      if (http.has(code)) expect(row![1]).toBe(String(http.get(code)));
    }
  });

  it('lists every close code, with the reason for those the server sends itself', () => {
    const table = section('3. Close codes');
    for (const c of Object.values(CLOSE_CODES)) {
      // One row per reason: a code may have several (4001: expired, revoked).
      const found = rows(table, String(c.code));
      expect(found.length, String(c.code)).toBeGreaterThan(0);
      if (![1009, 4002].includes(c.code)) expect(found.map((r) => r[1])).toContain(c.reason);
    }
    // The WebSocket layer's own closes.
    for (const code of [1002, 1007]) expect(rows(table, String(code))).toHaveLength(1);
  });

  it('lists every upstream error code, feed state and HTTP refusal code the code uses', () => {
    for (const code of UPSTREAM_ERROR_CODES) expect(rows(section('4.3 Upstream'), `\`${code}\``), code).toHaveLength(1);
    for (const state of STATES) expect(rows(section('2. Feed states'), `\`${state}\``), state).toHaveLength(1);
    const sources = ['src/http', 'src/gateway'].flatMap((dir) =>
      readdirSync(new URL(dir, root)).map((f) => readFileSync(new URL(`${dir}/${f}`, root), 'utf8')),
    );
    const used = new Set(['unauthorized', 'forbidden_origin']);
    for (const src of sources) for (const m of src.matchAll(/(?:sendError|refuseUpgrade)\((?:res|socket), \d+, '([a-z_]+)'/g)) used.add(m[1]!);
    expect(used.size).toBeGreaterThan(6);
    const refusals = section('4.2 HTTP refusals');
    for (const code of used) expect(refusals, code).toContain(`\`${code}\``);
  });

  it('lists every setting, and every default it states is the code default', () => {
    const defaults = defaultConfig() as Record<string, unknown>;
    const all = section('9. Every setting');
    for (const name of Object.keys(SETTINGS)) {
      const found = rows(all, `\`${name}\``);
      expect(found, name).toHaveLength(1);
    }
    // Wherever a table row starts with a setting, its second cell is that setting's default.
    for (const name of Object.keys(SETTINGS)) {
      for (const row of rows(doc, `\`${name}\``)) expect(row[1], `default of ${name}`).toBe(shown(defaults[name]));
    }
  });
});
