import { crc32 } from '../protocol/crc32.js';

/**
 * The line format of the state files: `<crc32 of the JSON, 8 hex> <JSON>\n`.
 * A line whose checksum does not match (a torn or damaged write) is told
 * apart from a good one. Pure.
 */

/** One line for `value`. */
export function encodeLine(value: unknown): string {
  const json = JSON.stringify(value);
  return `${crc32(json).toString(16).padStart(8, '0')} ${json}\n`;
}

/** What a line holds: its value, or why it cannot be read. */
export type DecodedLine = { ok: true; value: unknown } | { ok: false; reason: string };

/** Reads one line (without its newline). */
export function decodeLine(line: string): DecodedLine {
  if (line.length < 10 || line[8] !== ' ') return { ok: false, reason: 'not a state line' };
  const json = line.slice(9);
  if (crc32(json).toString(16).padStart(8, '0') !== line.slice(0, 8)) return { ok: false, reason: 'checksum mismatch' };
  try {
    return { ok: true, value: JSON.parse(json) as unknown };
  } catch {
    return { ok: false, reason: 'not JSON' };
  }
}
