import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../bridge/cli.js';

/**
 * The SDK on its own (`packages/client`, published as krx-bridge-client):
 * packed, installed into an empty folder, counted, imported at run time, and
 * type-checked by a consumer under `nodenext`, `bundler` and `node10`
 * resolution, as is `krx-bridge/client` of the whole package.
 */

const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

const CONSUMER = (from: string) => `import { KrxClient, viewOf, type RowView, type PriceRow } from '${from}';
const c: KrxClient | undefined = undefined;
const v: RowView = viewOf({ isuSrtCd: '005930', trdPrc: 1 } as PriceRow, 0);
export const price: number | undefined = v.price;
export { c };
`;

function typecheck(dir: string, resolution: 'nodenext' | 'bundler' | 'node10', from: string): string {
  const module = resolution === 'nodenext' ? 'nodenext' : resolution === 'bundler' ? 'esnext' : 'commonjs';
  writeFileSync(join(dir, 'consumer.ts'), CONSUMER(from));
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        noEmit: true,
        module,
        moduleResolution: resolution,
        target: 'es2022',
        lib: ['es2023', 'dom'],
        esModuleInterop: true,
        skipLibCheck: false,
        types: [],
      },
      files: ['consumer.ts'],
    }),
  );
  try {
    execFileSync(process.execPath, [TSC, '-p', dir], { cwd: dir, encoding: 'utf8' });
    return 'ok';
  } catch (err) {
    return String((err as { stdout?: string }).stdout ?? err);
  }
}

describe('krx-bridge-client, installed on its own', () => {
  const work = mkdtempSync(join(tmpdir(), 'krx-sdk-'));
  const app = join(work, 'app');
  beforeAll(() => {
    const json = execFileSync('npm', ['pack', '--json', '--pack-destination', work], {
      cwd: join(ROOT, 'packages', 'client'),
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const packed = (JSON.parse(json.slice(json.indexOf('['))) as { filename: string }[])[0]!;
    execFileSync('mkdir', ['-p', app]);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'bot', version: '1.0.0', private: true, type: 'module' }));
    execFileSync('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', join(work, packed.filename)], { cwd: app, stdio: 'ignore' });
  }, 180_000);
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('brings only what the SDK uses: eventemitter3', () => {
    const installed = readdirSync(join(app, 'node_modules')).filter((d) => !d.startsWith('.'));
    expect(installed.sort()).toEqual(['eventemitter3', 'krx-bridge-client']);
  });

  it('imports and runs', () => {
    const out = execFileSync(
      process.execPath,
      ['--input-type=module', '-e', "const m = await import('krx-bridge-client'); console.log(typeof m.KrxClient, m.viewOf({ trdPrc: 5 }, 0).price)"],
      { cwd: app, encoding: 'utf8' },
    );
    expect(out.trim()).toBe('function 5');
  });

  it.each(['nodenext', 'bundler', 'node10'] as const)('type-checks under %s resolution', (resolution) => {
    expect(typecheck(app, resolution, 'krx-bridge-client')).toBe('ok');
  });
});

describe('krx-bridge/client of the whole package', () => {
  beforeAll(() => {
    // Its types are the built ones.
    if (!existsSync(join(ROOT, 'dist', 'client', 'index.d.ts'))) execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'ignore' });
  }, 120_000);

  it('has the version and dependency ranges of the whole package', () => {
    const root = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string; dependencies: Record<string, string> };
    const sdk = JSON.parse(readFileSync(join(ROOT, 'packages', 'client', 'package.json'), 'utf8')) as { version: string; dependencies: Record<string, string> };
    expect(sdk.version).toBe(root.version);
    for (const [name, range] of Object.entries(sdk.dependencies)) expect(range, name).toBe(root.dependencies[name]);
  });

  it.each(['nodenext', 'bundler', 'node10'] as const)('type-checks under %s resolution', (resolution) => {
    // The repository as an installed package: its built types, found through exports or typesVersions.
    const dir = mkdtempSync(join(tmpdir(), 'krx-sub-'));
    execFileSync('mkdir', ['-p', join(dir, 'node_modules')]);
    execFileSync('ln', ['-s', ROOT, join(dir, 'node_modules', 'krx-bridge')]);
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'c', private: true, type: 'module' }));
    try {
      expect(typecheck(dir, resolution, 'krx-bridge/client')).toBe('ok');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
