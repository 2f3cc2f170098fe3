import { execFile } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * `npm run build` bundles the demo: its build script runs scripts/build-demo.ts
 * after tsc, and that script, run as the build runs it, writes the page, the
 * SDK bundle and the example page where the bridge serves them.
 */

const root = fileURLToPath(new URL('../../', import.meta.url));
const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

describe('the demo build', () => {
  it('is part of npm run build, after tsc', async () => {
    const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts.build).toMatch(/^tsc -p tsconfig\.build\.json && tsx scripts\/build-demo\.ts$/);
  });

  it('writes index.html, app.js, app.css, sdk/krx-client.js and examples/minimal.html, and reports their sizes', async () => {
    const out = await mkdtemp(join(tmpdir(), 'krx-build-'));
    dirs.push(out);
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'scripts/build-demo.ts', out], { cwd: root });
    expect(stdout).toMatch(/app\.js\s+[\d.]+ kB\s+\(gzip [\d.]+ kB\)/);
    const files = (await readdir(out, { recursive: true })).map(String).sort();
    expect(files).toEqual(expect.arrayContaining(['app.css', 'app.js', 'examples/minimal.html', 'index.html', 'sdk/krx-client.js']));
    const html = await readFile(join(out, 'index.html'), 'utf8');
    expect(html).toContain('<script type="module" src="app.js"></script>');
    expect(html).toContain('href="app.css"');
    const sdk = await readFile(join(out, 'sdk/krx-client.js'), 'utf8');
    expect(sdk).toMatch(/export\s*\{[^}]*KrxClient/);
    expect(sdk).not.toMatch(/\bnode:|require\(/);
    expect(await readFile(join(out, 'examples/minimal.html'), 'utf8')).toContain("from '/sdk/krx-client.js'");
  }, 30_000);
});
