import type { FieldType } from '../../src/upstream/fields.js';
import { matchPath } from '../../src/upstream/paths.js';
import { unwrap } from '../../src/upstream/normalise.js';

/** JSON type name of a value. */
export function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

function declaredType(t: FieldType | undefined): string | undefined {
  if (t === undefined) return undefined;
  return t === 'n' ? 'number' : 'string';
}

/**
 * Helpers shared by the simulator tests: comparing body shapes.
 */

/**
 * Differences between an example body and an actual one: same keys, same
 * JSON type per key (recursively, first row of arrays); null in the example
 * allows null or the field's declared type.
 */
export function shapeDiff(example: unknown, actual: unknown, declared: (key: string) => FieldType | undefined, path = '$'): string[] {
  const te = typeOf(example);
  const ta = typeOf(actual);
  if (te === 'null') {
    const d = declaredType(declared(path.split('.').pop()!));
    return ta === 'null' || ta === d ? [] : [`${path}: example null, got ${ta} (declared ${d ?? 'unknown'})`];
  }
  if (te !== ta) return [`${path}: example ${te}, got ${ta}`];
  if (te === 'array') {
    const e = (example as unknown[])[0];
    const a = (actual as unknown[])[0];
    if (e === undefined) return [];
    if (a === undefined) return [`${path}: example has rows, got none`];
    return shapeDiff(e, a, declared, `${path}[0]`);
  }
  if (te !== 'object') return [];
  const eo = example as Record<string, unknown>;
  const ao = actual as Record<string, unknown>;
  const out: string[] = [];
  for (const k of Object.keys(eo)) {
    if (!(k in ao)) out.push(`${path}.${k}: missing`);
    else out.push(...shapeDiff(eo[k], ao[k], declared, `${path}.${k}`));
  }
  for (const k of Object.keys(ao)) if (!(k in eo)) out.push(`${path}.${k}: not in the example`);
  return out;
}

/** The declared type of a field of an entry's response, looked up by name (top level or row). */
export function declaredOf(pathname: string): (key: string) => FieldType | undefined {
  const m = matchPath(pathname);
  const spec = m?.endpoint.response;
  return (key) => {
    const top = spec?.top[key];
    if (top) return top;
    const row = spec?.list?.row;
    return row && typeof row === 'object' ? row[key] : undefined;
  };
}

/** The body without its envelope (for comparing results). */
export function inner(body: unknown): Record<string, unknown> {
  return unwrap(body)?.body ?? {};
}
