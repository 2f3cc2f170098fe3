import type { Endpoint } from './catalogue.js';
import { ListReader, type ListDelta, type PlainReason } from './listread.js';
import { normaliseBody, type Normalised } from './normalise.js';

/**
 * A successful response's body, from its bytes to the normalised value:
 * through the caller's `ListReader` when it has one and the body is a list
 * it can read incrementally, the plain way (`JSON.parse`, `normaliseBody`)
 * otherwise. Both ways give the same value. Pure but for the reader's
 * memory of the last body.
 */

/** A body read: the normalised value, the list delta of an incremental read, or why the body is unusable. */
export type BodyRead =
  | {
      readonly ok: true;
      readonly value: Normalised;
      /** How the rows relate to the reader's last read (incremental reads only). */
      readonly delta?: ListDelta;
      /** Why a reader was given but the body was read the plain way. */
      readonly plain?: PlainReason;
    }
  | {
      readonly ok: false;
      /** `json`: the bytes are not JSON; `shape`: JSON that is not the endpoint's body. */
      readonly kind: 'json' | 'shape';
      readonly reason: string;
      /** Why a reader was given but the body was read the plain way. */
      readonly plain?: PlainReason;
    };

/** Reads the body of a 2xx response of `e` (see the module comment). */
export function readBody(e: Endpoint, bytes: Buffer, reader?: ListReader): BodyRead {
  let plain: PlainReason | undefined;
  if (reader !== undefined && ListReader.handles(e.response)) {
    const r = reader.read(e.response, bytes);
    if (r.ok) return { ok: true, value: r.value.value, delta: r.value.delta };
    plain = r.reason;
  }
  const why = plain !== undefined ? { plain } : {};
  let body: unknown;
  try {
    body = JSON.parse(bytes.toString('utf8'));
  } catch (err) {
    return { ok: false, kind: 'json', reason: jsonErrorText(err instanceof Error ? err.message : String(err)), ...why };
  }
  const n = normaliseBody(e.response, body);
  if (!n.ok) return { ok: false, kind: 'shape', reason: n.reason, ...why };
  return { ok: true, value: n.value, ...why };
}

/**
 * A `JSON.parse` error's text without the excerpt of the body V8 quotes in
 * it (`Unexpected token 'x', ..."<excerpt>"... is not valid JSON`). V8 cuts
 * the excerpt where it likes, so a secret the upstream echoed there (the
 * API key) could be left in part and not be matched by a scrub; the
 * excerpt goes, the unexpected character and the texts that quote nothing
 * (`... in JSON at position 12`) stay.
 */
export function jsonErrorText(message: string): string {
  const token = /^Unexpected token '(.)', /su.exec(message);
  if (token) return `Unexpected token '${token[1]}' in JSON`;
  return message.includes('"') ? 'not valid JSON' : message;
}
