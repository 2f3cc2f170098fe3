import { headerLength, writeTextHeader } from '../../src/gateway/frame.js';

/**
 * Pre-framed WebSocket text frames (RFC 6455 §5.2, server to client, so
 * unmasked): the floor peer builds one buffer per client per tick and
 * writes it to the TCP socket as is. The header is written by the
 * gateway's own frame functions. Pure functions.
 */

/**
 * One text frame whose payload is the JSON array of the given serialised
 * JSON values: `[a,b,…]`. `bytes` is the sum of their lengths.
 */
export function arrayFrame(parts: readonly Buffer[], bytes: number): Buffer {
  const len = bytes + parts.length + 1;
  const out = Buffer.allocUnsafe(headerLength(len) + len);
  let o = writeTextHeader(out, len);
  out[o++] = 0x5b;
  for (let i = 0; i < parts.length; i++) {
    if (i > 0) out[o++] = 0x2c;
    const p = parts[i]!;
    p.copy(out, o);
    o += p.length;
  }
  out[o] = 0x5d;
  return out;
}
