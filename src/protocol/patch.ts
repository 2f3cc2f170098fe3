import type { Row } from './row.js';
import type { PatchOp } from './wire.js';

/**
 * Diffs of flat rows as RFC 6902 operations, and their application. Rows are
 * flat (field name to scalar), so a field-by-field compare suffices: no
 * generic object walk. Pure functions.
 */

/** Escapes a field name as a JSON Pointer reference token (RFC 6901). */
export function pointer(field: string): string {
  if (field.indexOf('~') < 0 && field.indexOf('/') < 0) return '/' + field;
  return '/' + field.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** The field a one-token JSON Pointer names, or undefined for any other pointer. */
export function fieldOf(path: string): string | undefined {
  if (path.length < 2 || path[0] !== '/' || path.indexOf('/', 1) >= 0) return undefined;
  const token = path.slice(1);
  return token.indexOf('~') < 0 ? token : token.replace(/~1/g, '/').replace(/~0/g, '~');
}

/** Whether two row values are equal (objects of unknown fields by value). */
export function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  // Unknown upstream fields may hold objects; compare them by value.
  if (a !== null && b !== null && typeof a === 'object' && typeof b === 'object') {
    return JSON.stringify(a) === JSON.stringify(b);
  }
  return false;
}

/**
 * The operations that turn `prev` into `next`: `replace` for a changed field,
 * `add` for a new one, `remove` for one that disappeared. Empty when equal.
 */
export function diffRows(prev: Readonly<Row>, next: Readonly<Row>): PatchOp[] {
  const ops: PatchOp[] = [];
  for (const k in next) {
    const v = next[k];
    if (!(k in prev)) ops.push({ op: 'add', path: pointer(k), value: v });
    else if (!same(prev[k], v)) ops.push({ op: 'replace', path: pointer(k), value: v });
  }
  for (const k in prev) {
    if (!(k in next)) ops.push({ op: 'remove', path: pointer(k) });
  }
  return ops;
}

/**
 * A new row: `row` with `ops` applied. Returns undefined when an operation
 * cannot apply to a flat row (unknown op, nested path, remove/replace of a
 * missing field), so the caller can resync instead of diverging.
 */
export function applyOps(row: Readonly<Row>, ops: readonly PatchOp[]): Row | undefined {
  const out: Row = { ...row };
  for (const op of ops) {
    const f = fieldOf(op.path);
    if (f === undefined) return undefined;
    if (op.op === 'add') out[f] = op.value as Row[string];
    else if (op.op === 'replace') {
      if (!(f in out)) return undefined;
      out[f] = op.value as Row[string];
    } else if (op.op === 'remove') {
      if (!(f in out)) return undefined;
      delete out[f];
    } else return undefined;
  }
  return out;
}
