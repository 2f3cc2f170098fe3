import { SETTINGS, flagOf, defaultConfig } from './config.js';

/**
 * The configuration table of docs/CONFIGURATION.md, generated from SETTINGS so that the
 * documentation cannot drift from what the bridge accepts.
 */

/** Marker lines around the generated section in docs/CONFIGURATION.md. */
export const SETTINGS_START = '<!-- settings:start -->';
/** End marker of the generated section. */
export const SETTINGS_END = '<!-- settings:end -->';

function shown(v: unknown): string {
  if (v === undefined) return '–';
  if (Array.isArray(v)) return v.length ? `\`${v.join(',')}\`` : '–';
  return `\`${String(v)}\``;
}

/** The Markdown table of every setting: variable, flag, default, meaning. */
export function settingsMarkdown(): string {
  const defaults = defaultConfig() as Record<string, unknown>;
  const rows = Object.entries(SETTINGS).map(
    ([name, s]) => `| \`${name}\` | \`--${flagOf(name)}\` | ${shown(defaults[name])} | ${s.text.replace(/\|/g, '\\|')} |`,
  );
  return ['| variable | flag | default | meaning |', '|---|---|---|---|', ...rows, ''].join('\n');
}

/** Markdown text with the section between the settings markers replaced by `table`. */
export function replaceSettings(readme: string, table: string): string {
  const a = readme.indexOf(SETTINGS_START);
  const b = readme.indexOf(SETTINGS_END);
  if (a < 0 || b < a) throw new Error('docs/CONFIGURATION.md has no settings markers');
  return `${readme.slice(0, a + SETTINGS_START.length)}\n${table}${readme.slice(b)}`;
}
