/**
 * CRC-32 (IEEE 802.3, the zlib/PNG polynomial) and the canonical row
 * serialisation it is computed over. Pure functions that run unchanged in
 * Node and browsers. See docs/PROTOCOL.md §Checksums.
 */

const TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

const encoder = new TextEncoder();

/** CRC-32 of the UTF-8 bytes of a string, as an unsigned 32-bit integer. */
export function crc32(text: string): number {
  const bytes = encoder.encode(text);
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) c = TABLE[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/**
 * The canonical serialisation of a flat row: JSON with the keys in
 * ascending code-unit order, no whitespace. Values are serialised as by
 * `JSON.stringify`.
 */
export function canonicalJson(row: Readonly<Record<string, unknown>>): string {
  const keys = Object.keys(row).sort();
  let out = '{';
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    if (i > 0) out += ',';
    out += JSON.stringify(k) + ':' + JSON.stringify(row[k] ?? null);
  }
  return out + '}';
}

/** The checksum a snapshot or patch carries: CRC-32 of the canonical row. */
export function rowChecksum(row: Readonly<Record<string, unknown>>): number {
  return crc32(canonicalJson(row));
}
