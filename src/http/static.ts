import { createReadStream } from 'node:fs';
import { pipeline } from 'node:stream';
import { realpath, stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, relative, resolve, sep } from 'node:path';
import { BASE_HEADERS, pageHeaders } from './headers.js';

/**
 * Serving files from a static directory (the demo page and its assets):
 * content types by extension, no path traversal (also not through
 * symbolic links), `index.html` for directories.
 */

/** Content types by file extension. */
export const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.htm': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.wasm': 'application/wasm',
};

/** The content type of a file name (`application/octet-stream` when unknown). */
export function contentType(file: string): string {
  return CONTENT_TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream';
}

/**
 * The file under `root` a URL path names, or undefined when the path is
 * malformed or leaves `root`. Pure (no file system access).
 */
export function resolveUnder(root: string, urlPath: string): string | undefined {
  let rel: string;
  try {
    rel = decodeURIComponent(urlPath);
  } catch {
    return undefined;
  }
  if (rel.includes('\0') || rel.includes('\\')) return undefined;
  const base = resolve(root);
  const file = resolve(base, '.' + (rel.startsWith('/') ? rel : '/' + rel));
  return file === base || file.startsWith(base + sep) ? file : undefined;
}

async function findFile(root: string, urlPath: string): Promise<string | undefined> {
  const rootReal = await realpath(root).catch(() => undefined);
  if (rootReal === undefined) return undefined;
  let file = resolveUnder(rootReal, urlPath);
  if (file === undefined) return undefined;
  try {
    if ((await stat(file)).isDirectory()) file = join(file, 'index.html');
    const real = await realpath(file);
    if (!real.startsWith(rootReal + sep)) return undefined;
    return (await stat(real)).isFile() ? real : undefined;
  } catch {
    return undefined;
  }
}

/** Options of `serveStatic`. */
export interface StaticOptions {
  /** Serve `.map` source maps; default false (they show the whole source, and weigh more than the code). */
  readonly sourceMaps?: boolean;
}

/**
 * Serves the file `urlPath` names under `root`; resolves false (nothing
 * sent) when there is no such file inside `root`, or it is a source map
 * and `sourceMaps` is off. HTML pages get the security headers of
 * headers.ts (the example pages under `examples/` may run their inline
 * script). The file is closed when its response is written or abandoned
 * (the client went, also with the response still queued behind others on a
 * pipelined connection).
 */
export async function serveStatic(root: string, urlPath: string, req: IncomingMessage, res: ServerResponse, opts: StaticOptions = {}): Promise<boolean> {
  const file = await findFile(root, urlPath);
  if (file === undefined) return false;
  if (!opts.sourceMaps && extname(file).toLowerCase() === '.map') return false;
  const info = await stat(file);
  const type = contentType(file);
  const isExample = relative(await realpath(root), file).split(sep)[0] === 'examples';
  const security = type.startsWith('text/html') ? pageHeaders(isExample ? 'example' : 'app') : BASE_HEADERS;
  res.writeHead(200, {
    'Content-Type': type,
    'Content-Length': info.size,
    ...security,
    'Cache-Control': 'no-cache',
    'Last-Modified': info.mtime.toUTCString(),
  });
  if (req.method === 'HEAD') {
    res.end();
    return true;
  }
  // The connection went while the file was looked up: open nothing for it.
  if (req.socket.destroyed) {
    res.destroy();
    return true;
  }
  await new Promise<void>((done) => {
    const stream = createReadStream(file);
    // Settled when the file is closed, whichever way: read to its end, or destroyed with the response.
    stream.once('close', done);
    // A failed read or a response that closes first (the client went) destroys the other, and the file is closed.
    pipeline(stream, res, () => {});
    // A response queued behind others on a pipelined connection never closes when the connection goes; its request does.
    req.once('close', () => {
      if (req.socket.destroyed) stream.destroy();
    });
  });
  return true;
}
