/**
 * Plain-text tables for the benchmark's console report. Pure functions.
 */

/** A number with `digits` decimals and thousands separators; `–` for NaN or missing. */
export function num(v: number | undefined, digits = 0): string {
  if (v === undefined || !Number.isFinite(v)) return '–';
  return v.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/**
 * A table with a header row and a rule: the first column left-aligned,
 * the others right-aligned, columns two spaces apart.
 */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const all = [header, ...rows];
  const widths = header.map((_, c) => Math.max(...all.map((r) => (r[c] ?? '').length)));
  const line = (r: readonly string[]): string =>
    widths
      .map((w, c) => {
        const cell = r[c] ?? '';
        return c === 0 ? cell.padEnd(w) : cell.padStart(w);
      })
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}
