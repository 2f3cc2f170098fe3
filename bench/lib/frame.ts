/**
 * Pre-framed WebSocket text frames (RFC 6455 §5.2, server to client, so
 * unmasked): the floor peer builds one buffer per client per tick and
 * writes it to the TCP socket as is. Pure functions.
 */

/** Bytes of the frame header for a payload of `len` bytes. */
export function headerLength(len: number): number {
  return len < 126 ? 2 : len < 65_536 ? 4 : 10;
}

/** Writes a FIN text-frame header for `len` payload bytes at offset 0; returns the header length. */
export function writeHeader(buf: Buffer, len: number): number {
  buf[0] = 0x81;
  if (len < 126) {
    buf[1] = len;
    return 2;
  }
  if (len < 65_536) {
    buf[1] = 126;
    buf.writeUInt16BE(len, 2);
    return 4;
  }
  buf[1] = 127;
  buf.writeUInt32BE(Math.floor(len / 2 ** 32), 2);
  buf.writeUInt32BE(len >>> 0, 6);
  return 10;
}

/**
 * One text frame whose payload is the JSON array of the given serialised
 * JSON values: `[a,b,…]`. `bytes` is the sum of their lengths.
 */
export function arrayFrame(parts: readonly Buffer[], bytes: number): Buffer {
  const len = bytes + parts.length + 1;
  const out = Buffer.allocUnsafe(headerLength(len) + len);
  let o = writeHeader(out, len);
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
