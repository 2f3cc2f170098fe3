import { copyFile, mkdir, rm, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { readFileSync } from 'node:fs';
import { build } from 'esbuild';

/**
 * Builds the browser side of the bridge into a static directory (default
 * dist/public/, which the bridge serves when it exists):
 * - index.html, app.js and app.css: the demo page (src/demo/), bundled with
 *   the SDK and lightweight-charts;
 * - sdk/krx-client.js: the SDK alone as a browser ES module, for plain pages;
 * - examples/minimal.html: the minimal example page, which imports it.
 * `npm run build` runs it after tsc; tests call `buildDemo` with a temporary
 * directory.
 */

const root = fileURLToPath(new URL('..', import.meta.url));

/** Options of `buildDemo`. */
export interface BuildDemoOptions {
  /** Output directory; default `dist/public` of the project. It is emptied first. */
  readonly outDir?: string;
  /** Minify; default true. */
  readonly minify?: boolean;
  /** Write linked source maps; default true. */
  readonly sourcemap?: boolean;
}

/** One written file and its size. */
export interface BuiltFile {
  /** Path relative to the output directory. */
  readonly file: string;
  readonly bytes: number;
  /** Size gzip-compressed (level 9), bytes. */
  readonly gzipBytes: number;
}

/** Browsers the bundles target (ES2022: every evergreen browser of the last three years). */
const TARGET = ['es2022', 'chrome100', 'firefox100', 'safari15.4'];

/** Builds the page, the SDK bundle and the example page; resolves with the sizes of the files a browser loads. */
export async function buildDemo(opts: BuildDemoOptions = {}): Promise<BuiltFile[]> {
  const outDir = opts.outDir ?? join(root, 'dist', 'public');
  const minify = opts.minify ?? true;
  const sourcemap = (opts.sourcemap ?? true) ? 'linked' : false;
  await rm(outDir, { recursive: true, force: true });
  await mkdir(join(outDir, 'examples'), { recursive: true });
  const common = {
    bundle: true,
    platform: 'browser',
    format: 'esm',
    target: TARGET,
    minify,
    sourcemap,
    legalComments: 'linked',
    logLevel: 'warning',
    absWorkingDir: root,
  } as const;
  await Promise.all([
    build({
      ...common,
      entryPoints: [
        { in: 'src/demo/main.ts', out: 'app' },
        { in: 'src/demo/styles.css', out: 'app' },
      ],
      outdir: outDir,
    }),
    build({ ...common, entryPoints: ['src/client/index.ts'], outfile: join(outDir, 'sdk', 'krx-client.js') }),
    copyFile(join(root, 'src/demo/index.html'), join(outDir, 'index.html')),
    copyFile(join(root, 'examples/minimal.html'), join(outDir, 'examples', 'minimal.html')),
  ]);
  const shipped = ['index.html', 'app.js', 'app.css', 'sdk/krx-client.js', 'examples/minimal.html'];
  return Promise.all(
    shipped.map(async (file) => {
      const path = join(outDir, file);
      return { file, bytes: (await stat(path)).size, gzipBytes: gzipSync(readFileSync(path), { level: 9 }).length };
    }),
  );
}

/** One line per file: `app.js  212.4 kB  (gzip 68.1 kB)`. */
export function sizeReport(files: readonly BuiltFile[]): string {
  const kb = (n: number) => `${(n / 1000).toFixed(1)} kB`;
  const width = Math.max(...files.map((f) => f.file.length));
  return files.map((f) => `  ${f.file.padEnd(width)}  ${kb(f.bytes).padStart(9)}  (gzip ${kb(f.gzipBytes)})`).join('\n');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const outDir = process.argv[2];
  buildDemo(outDir !== undefined ? { outDir } : {}).then(
    (files) => {
      const where = relative(process.cwd(), outDir ?? join(root, 'dist', 'public')) || '.';
      process.stdout.write(`demo page built into ${where}/\n${sizeReport(files)}\n`);
    },
    (err: unknown) => {
      process.stderr.write(`build-demo: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
