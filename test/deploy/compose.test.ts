import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SETTINGS, loadConfig } from '../../src/config/config.js';
import { parseDockerfile } from './dockerfile.js';

/**
 * docker-compose.yml: parses (with a reader of the block-style YAML subset
 * the file is written in; the project has no YAML dependency), holds Redis,
 * two bridge replicas with a valid cluster configuration and a proxy whose
 * committed nginx.conf upgrades WebSockets to both replicas.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

type Yaml = string | Yaml[] | { [k: string]: Yaml };

function scalar(v: string): Yaml {
  if (v.startsWith('[') || v.startsWith('"')) return JSON.parse(v) as Yaml;
  if (v.startsWith("'") && v.endsWith("'")) return v.slice(1, -1).replace(/''/g, "'");
  return v;
}

/**
 * Block-style YAML: nested maps by indentation, `- ` lists of scalars,
 * plain, quoted or JSON-array scalars, full-line comments. Throws on
 * anything else (tabs, bad indentation, flow maps, anchors).
 */
function parseYamlSubset(text: string): Yaml {
  const lines = text
    .split('\n')
    .map((raw, i) => ({ n: i + 1, raw }))
    .filter(({ raw }) => raw.trim() !== '' && !raw.trimStart().startsWith('#'));
  for (const l of lines) if (/^\t| \t/.test(l.raw) || /[&*]\w/.test(l.raw.replace(/"[^"]*"/g, ''))) throw new Error(`line ${l.n}: unsupported YAML`);
  let i = 0;
  const indentOf = (raw: string) => raw.length - raw.trimStart().length;
  function block(indent: number): Yaml {
    const first = lines[i]!;
    if (first.raw.trimStart().startsWith('- ')) {
      const list: Yaml[] = [];
      while (i < lines.length && indentOf(lines[i]!.raw) === indent && lines[i]!.raw.trimStart().startsWith('- ')) {
        list.push(scalar(lines[i]!.raw.trimStart().slice(2).trim()));
        i++;
      }
      return list;
    }
    const map: { [k: string]: Yaml } = {};
    while (i < lines.length && indentOf(lines[i]!.raw) === indent) {
      const { n, raw } = lines[i]!;
      const m = /^([A-Za-z0-9_.-]+|"[^"]+"):(?:\s+(.*))?$/.exec(raw.trim());
      if (!m) throw new Error(`line ${n}: expected "key: value"`);
      const key = m[1]!.startsWith('"') ? (JSON.parse(m[1]!) as string) : m[1]!;
      if (key in map) throw new Error(`line ${n}: duplicate key ${key}`);
      i++;
      if (m[2] !== undefined && m[2] !== '') map[key] = scalar(m[2]);
      else {
        const next = lines[i];
        if (!next || indentOf(next.raw) <= indent) throw new Error(`line ${n}: ${key} has no value`);
        map[key] = block(indentOf(next.raw));
      }
    }
    if (i < lines.length && indentOf(lines[i]!.raw) > indent) throw new Error(`line ${lines[i]!.n}: bad indentation`);
    return map;
  }
  const doc = block(0);
  if (i !== lines.length) throw new Error(`line ${lines[i]!.n}: bad indentation`);
  return doc;
}

/** `${VAR:-default}` as compose resolves it with VAR unset. */
const interpolate = (v: string) => v.replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1');

describe('docker-compose.yml', () => {
  const doc = parseYamlSubset(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8')) as Record<string, Record<string, Record<string, Yaml>>>;
  const services = doc.services!;
  const bridges = Object.keys(services).filter((n) => n.startsWith('bridge'));

  it('parses and has Redis, two bridge replicas and a proxy', () => {
    expect(Object.keys(services).sort()).toEqual(['bridge-a', 'bridge-b', 'proxy', 'redis', 'sim']);
    expect(bridges).toHaveLength(2);
    expect(String(services.redis!.image)).toMatch(/^redis:/);
    expect(String(services.proxy!.image)).toMatch(/^nginx:/);
  });

  it('gives each replica a valid cluster configuration pointing at the Redis service', () => {
    for (const name of bridges) {
      const s = services[name]!;
      expect(s.build).toBe('.');
      const env = Object.fromEntries(Object.entries(s.environment as Record<string, string>).map(([k, v]) => [k, interpolate(v)]));
      for (const k of Object.keys(env)) expect(k in SETTINGS, `${name}: ${k} is a setting`).toBe(true);
      const c = loadConfig(env, []);
      expect(c.REDIS_URL).toBe('redis://redis:6379');
      expect(new URL(c.UPSTREAM_URL!).hostname).toBe('sim');
      expect(c.TRUST_PROXY).toBe(true);
      expect((s.depends_on as Record<string, Record<string, string>>).redis!.condition).toBe('service_healthy');
    }
    // Both replicas share one cluster (same prefix) and poll the same upstream.
    const envs = bridges.map((n) => JSON.stringify(services[n]!.environment));
    expect(new Set(envs).size).toBe(1);
  });

  it('puts nginx in front with the committed config: both replicas, WebSocket upgrade, the image’s port', () => {
    const volumes = services.proxy!.volumes as string[];
    const mount = volumes.find((v) => v.endsWith(':/etc/nginx/nginx.conf:ro'))!;
    const main = readFileSync(join(ROOT, mount.split(':')[0]!), 'utf8');
    const proxyMount = volumes.find((v) => v.endsWith(':/etc/nginx/krx-bridge-proxy.conf:ro'))!;
    const conf = main + readFileSync(join(ROOT, proxyMount.split(':')[0]!), 'utf8');
    for (const name of bridges) expect(conf).toMatch(new RegExp(`server\\s+${name}:8080\\b`));
    expect(conf).toMatch(/proxy_http_version\s+1\.1;/);
    expect(conf).toMatch(/proxy_set_header\s+Upgrade\s+\$http_upgrade;/);
    expect(conf).toMatch(/proxy_set_header\s+Connection\s+\$connection_upgrade;/);
    expect(conf).toMatch(/proxy_set_header\s+X-Forwarded-For\s+\$remote_addr;/);
    // Braces balance (a cheap syntax check without nginx).
    const code = conf.replace(/#.*$/gm, '').replace(/'[^']*'/g, '');
    expect(code.split('{').length).toBe(code.split('}').length);
    const expose = parseDockerfile(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'))
      .at(-1)!
      .instructions.find((i) => i.op === 'EXPOSE')!.args;
    expect(conf).toMatch(new RegExp(`server\\s+bridge-a:${expose}\\b`));
    expect(services.proxy!.ports).toEqual(['8080:8080']);
  });

  it('the YAML reader refuses what it does not understand', () => {
    expect(() => parseYamlSubset('a:\n\tb: 1')).toThrow(/unsupported/);
    expect(() => parseYamlSubset('a: 1\na: 2')).toThrow(/duplicate/);
    expect(() => parseYamlSubset('a:\n  b: 1\n c: 2')).toThrow(/indentation/);
    expect(() => parseYamlSubset('x: &anchor 1')).toThrow(/unsupported/);
    expect(parseYamlSubset('a:\n  b: "q"\n  c:\n    - 1\n    - two\n  d: ["x", "y"]')).toEqual({ a: { b: 'q', c: ['1', 'two'], d: ['x', 'y'] } });
  });
});
