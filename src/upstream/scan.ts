/**
 * Byte-level reading of JSON text (RFC 8259) as the upstream sends it:
 * where a value, a string or an object's fields start and end, without
 * making a string or an object. Pure functions over a `Uint8Array`; they
 * find structure and check the grammar of scalars, and leave decoding to
 * `JSON.parse` wherever there is anything to decode.
 *
 * Every function returns an index past what it read, or a negative
 * number: `NOT_JSON` when the bytes are not JSON, `NESTED` when a value is
 * an object or an array where a scalar was asked for.
 */

/** Returned when the bytes are not JSON. */
export const NOT_JSON = -1;
/** Returned by `scalarEnd` for an object or array value. */
export const NESTED = -2;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/** The index of the first byte at or after `i` that is not JSON whitespace (space, tab, LF, CR). */
export function skipWs(b: Uint8Array, i: number, end: number): number {
  while (i < end) {
    const c = b[i]!;
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return i;
    i++;
  }
  return i;
}

function digitAt(b: Uint8Array, i: number, end: number): boolean {
  if (i >= end) return false;
  const c = b[i]!;
  return c >= ZERO && c <= NINE;
}

/**
 * The end of the string token that starts at `i` (a quote): the index past
 * its closing quote. A raw control character or a missing closing quote is
 * `NOT_JSON`; escapes are skipped, not checked (`JSON.parse` checks them
 * when the string is decoded).
 */
export function stringEnd(b: Uint8Array, i: number, end: number): number {
  for (i++; i < end; i++) {
    const c = b[i]!;
    if (c === QUOTE) return i + 1;
    if (c === BACKSLASH) i++;
    else if (c < 0x20) return NOT_JSON;
  }
  return NOT_JSON;
}

/** The end of the number token that starts at `i`, checked against JSON's number grammar. */
export function numberEnd(b: Uint8Array, i: number, end: number): number {
  if (i < end && b[i] === MINUS) i++;
  if (digitAt(b, i, end) && b[i] === ZERO) i++;
  else if (digitAt(b, i, end)) while (digitAt(b, ++i, end));
  else return NOT_JSON;
  if (i < end && b[i] === DOT) {
    if (!digitAt(b, ++i, end)) return NOT_JSON;
    while (digitAt(b, ++i, end));
  }
  if (i < end && (b[i] === 0x65 || b[i] === 0x45)) {
    i++;
    if (i < end && (b[i] === PLUS || b[i] === MINUS)) i++;
    if (!digitAt(b, i, end)) return NOT_JSON;
    while (digitAt(b, ++i, end));
  }
  return i;
}

const TRUE = [0x74, 0x72, 0x75, 0x65];
const FALSE = [0x66, 0x61, 0x6c, 0x73, 0x65];
const NULL = [0x6e, 0x75, 0x6c, 0x6c];

function literalEnd(b: Uint8Array, i: number, end: number, word: readonly number[]): number {
  if (i + word.length > end) return NOT_JSON;
  for (let k = 0; k < word.length; k++) if (b[i + k] !== word[k]) return NOT_JSON;
  return i + word.length;
}

/** The end of the scalar value (string, number, true, false, null) that starts at `i`; `NESTED` for an object or array. */
export function scalarEnd(b: Uint8Array, i: number, end: number): number {
  if (i >= end) return NOT_JSON;
  const c = b[i]!;
  if (c === QUOTE) return stringEnd(b, i, end);
  if (c === MINUS || (c >= ZERO && c <= NINE)) return numberEnd(b, i, end);
  if (c === 0x74) return literalEnd(b, i, end, TRUE);
  if (c === 0x66) return literalEnd(b, i, end, FALSE);
  if (c === 0x6e) return literalEnd(b, i, end, NULL);
  if (c === OPEN_BRACE || c === OPEN_BRACKET) return NESTED;
  return NOT_JSON;
}

/**
 * The end of the object or array that starts at `i`: the index past its
 * matching bracket, counting brackets outside strings. Only the nesting is
 * checked; `JSON.parse` checks the rest when the value is decoded.
 */
export function compositeEnd(b: Uint8Array, i: number, end: number): number {
  let depth = 0;
  while (i < end) {
    const c = b[i]!;
    if (c === QUOTE) {
      i = stringEnd(b, i, end);
      if (i < 0) return NOT_JSON;
      continue;
    }
    if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
    else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      if (--depth === 0) return i + 1;
      if (depth < 0) return NOT_JSON;
    }
    i++;
  }
  return NOT_JSON;
}

/**
 * The first `[` of a JSON object's text that is not inside a string, from
 * `i` (the object's `{`): where the envelope of a list body ends and its
 * list begins. `NOT_JSON` when there is none.
 */
export function firstArray(b: Uint8Array, i: number, end: number): number {
  while (i < end) {
    const c = b[i]!;
    if (c === OPEN_BRACKET) return i;
    if (c === QUOTE) {
      i = stringEnd(b, i, end);
      if (i < 0) return NOT_JSON;
    } else i++;
  }
  return NOT_JSON;
}

/**
 * The fields of one flat JSON object: for each, where its key token (with
 * quotes) and its value token start and end. Reused from row to row: the
 * arrays grow to the widest object seen.
 */
export class FieldScan {
  /** Fields found by the last `scan`. */
  count = 0;
  /** Index past the object's `}` after the last successful `scan`. */
  end = 0;
  /** Per field `f`: key start at `4f`, key end at `4f+1`, value start at `4f+2`, value end at `4f+3`. */
  spans = new Int32Array(64);
  /** After a failed `scan`: false when it stopped at a nested value (the object may still be JSON). */
  flat = true;

  /**
   * Reads the object that starts at `i` (its `{`). Returns true when it is
   * a well-formed object whose values are all scalars; false when it is not
   * (`flat` then says whether it failed on a nested value rather than on
   * bytes that are not JSON).
   */
  scan(b: Uint8Array, i: number, end: number): boolean {
    this.count = 0;
    this.flat = true;
    i = skipWs(b, i + 1, end);
    if (b[i] === CLOSE_BRACE) {
      this.end = i + 1;
      return true;
    }
    for (;;) {
      if (b[i] !== QUOTE) return false;
      const ks = i;
      const ke = stringEnd(b, i, end);
      if (ke < 0) return false;
      i = skipWs(b, ke, end);
      if (b[i] !== COLON) return false;
      const vs = skipWs(b, i + 1, end);
      const ve = scalarEnd(b, vs, end);
      if (ve < 0) {
        this.flat = ve !== NESTED;
        return false;
      }
      this.push(ks, ke, vs, ve);
      i = skipWs(b, ve, end);
      if (b[i] === COMMA) i = skipWs(b, i + 1, end);
      else if (b[i] === CLOSE_BRACE) {
        this.end = i + 1;
        return true;
      } else return false;
    }
  }

  private push(ks: number, ke: number, vs: number, ve: number): void {
    const at = this.count * 4;
    if (at + 4 > this.spans.length) {
      const grown = new Int32Array(this.spans.length * 2);
      grown.set(this.spans);
      this.spans = grown;
    }
    const s = this.spans;
    s[at] = ks;
    s[at + 1] = ke;
    s[at + 2] = vs;
    s[at + 3] = ve;
    this.count++;
  }
}

/** Where `integerEnd` puts the value it read. */
export interface ScannedInteger {
  value: number;
}

/**
 * The end of the number token at `i` when it is one that `JSON.stringify`
 * writes back byte for byte (a safe integer, no leading zero, not `-0`),
 * its value put in `out`: one pass for both. -1 for any other token (a
 * fraction, an exponent, a leading zero, `-0`, more than 2^53 − 1, not a
 * number), to be read the general way. Up to 15 digits every step of
 * reading is exact; a sixteenth digit is taken when the result is still at
 * most 2^53 − 1 (a larger result, rounded or not, stays above it).
 */
export function integerEnd(b: Uint8Array, i: number, end: number, out: ScannedInteger): number {
  const negative = i < end && b[i] === MINUS;
  const s = negative ? i + 1 : i;
  let k = s;
  let v = 0;
  while (k < end) {
    const d = b[k]! - ZERO;
    if (d < 0 || d > 9) break;
    v = v * 10 + d;
    k++;
  }
  const digits = k - s;
  if (digits < 1 || digits > 16 || (b[s] === ZERO && (digits > 1 || negative)) || v > Number.MAX_SAFE_INTEGER) return -1;
  if (k < end && (b[k] === DOT || b[k] === 0x65 || b[k] === 0x45)) return -1;
  out.value = negative ? -v : v;
  return k;
}

const scratch: ScannedInteger = { value: 0 };

/** The value of the number token `[s, e)` when `integerEnd` reads all of it, or NaN for any other token. */
export function canonicalInteger(b: Uint8Array, s: number, e: number): number {
  return integerEnd(b, s, e, scratch) === e ? scratch.value : NaN;
}

/** Whether byte `c` after a number's digits would make it a longer number (a digit, `.`, `e`, `E`, `+`, `-`). */
export function numberGoesOn(c: number): boolean {
  return (c >= ZERO && c <= NINE) || c === DOT || c === 0x65 || c === 0x45 || c === PLUS || c === MINUS;
}

/** Whether the bytes of a string token (quotes included) are printable ASCII with no escape. */
export function plainAsciiString(b: Uint8Array, s: number, e: number): boolean {
  for (let i = s + 1; i < e - 1; i++) {
    const c = b[i]!;
    if (c < 0x20 || c > 0x7e || c === BACKSLASH || c === QUOTE) return false;
  }
  return true;
}
