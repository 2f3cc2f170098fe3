import { CATALOGUE, type Endpoint } from './catalogue.js';
import { type Provision } from '../market/provision.js';

/**
 * The endpoint table of docs/UPSTREAM.md, generated from the catalogue so the two
 * cannot drift apart. Pure functions; `scripts/gen-docs.ts` writes the file.
 */

/** Marker line that opens the generated section. */
export const SECTION_START = '<!-- catalogue:start -->';
/** Marker line that closes the generated section. */
export const SECTION_END = '<!-- catalogue:end -->';

/** A provision rule in words (times KST). */
export function provisionInWords(p: Provision): string {
  switch (p.type) {
    case 'realtime':
      return p.strict ? 'realtime, during the sessions (08:30–18:00 on trading days); 400 at other hours' : 'realtime';
    case 'batch':
      return `daily from ${p.at}`;
    case 'afterClose':
      return `the last trading day's until 08:30; 400 from 08:30 until ${p.at} on trading days; then today's`;
  }
}

function queryCell(e: Endpoint): string {
  if (e.query.length === 0) return '—';
  return e.query
    .map((name) => {
      // The mark sits inside the code span: a bare `*` could open Markdown emphasis.
      const mark = e.requiredQuery.includes(name) ? '*' : '';
      return name === 'fields' ? `\`?<field>&…${mark}\` (flags)` : `\`${name}${mark}\``;
    })
    .join(', ');
}

function limitsCell(e: Endpoint): string {
  const parts: string[] = [];
  if (e.limits.maxCodes !== undefined) parts.push(`≤ ${e.limits.maxCodes} codes`);
  if (e.limits.maxRows !== undefined) parts.push(`≤ ${e.limits.maxRows} rows`);
  return parts.length ? parts.join(', ') : '—';
}

/** One Markdown table row of an entry. */
export function catalogueRow(e: Endpoint): string {
  const kind = e.ended ? `${e.kind} (ended ${e.ended})` : e.kind;
  const cells = [`\`${e.id}\``, `\`${e.path}\``, queryCell(e), e.envelope, kind, provisionInWords(e.provision), limitsCell(e)];
  return `| ${cells.join(' | ')} |`;
}

/**
 * The Markdown of the catalogue section: a count, the table (id, path,
 * query params, envelope, kind, provision, limits) and a legend.
 */
export function catalogueMarkdown(entries: readonly Endpoint[] = CATALOGUE): string {
  return [
    `${entries.length} endpoints. A trailing \`*\` marks a required query parameter; times are KST.`,
    '',
    '| id | path | query params | envelope | kind | provision | limits |',
    '|---|---|---|---|---|---|---|',
    ...entries.map(catalogueRow),
  ].join('\n');
}

/**
 * `readme` with the text between the section markers replaced by
 * `markdown`. Throws when the markers are missing or out of order.
 */
export function replaceSection(readme: string, markdown: string): string {
  const start = readme.indexOf(SECTION_START);
  const end = readme.indexOf(SECTION_END);
  if (start < 0 || end < 0 || end < start) throw new Error(`docs/UPSTREAM.md needs ${SECTION_START} … ${SECTION_END}`);
  return `${readme.slice(0, start + SECTION_START.length)}\n${markdown}\n${readme.slice(end)}`;
}

/** The text currently between the section markers of `readme` (without the surrounding newlines). */
export function currentSection(readme: string): string {
  const start = readme.indexOf(SECTION_START);
  const end = readme.indexOf(SECTION_END);
  if (start < 0 || end < 0 || end < start) throw new Error(`docs/UPSTREAM.md needs ${SECTION_START} … ${SECTION_END}`);
  return readme
    .slice(start + SECTION_START.length, end)
    .replace(/^\n/, '')
    .replace(/\n$/, '');
}
