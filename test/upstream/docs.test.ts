import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CATALOGUE, endpoint } from '../../src/upstream/catalogue.js';
import { SECTION_END, SECTION_START, catalogueMarkdown, catalogueRow, currentSection, provisionInWords, replaceSection } from '../../src/upstream/docs.js';

const README = readFileSync(new URL('../../docs/UPSTREAM.md', import.meta.url), 'utf8');

describe('docs/UPSTREAM.md', () => {
  it('is the generated table (run `npm run docs` after changing the catalogue)', () => {
    expect(currentSection(README)).toBe(catalogueMarkdown());
  });

  it('lists every entry once', () => {
    const section = currentSection(README);
    for (const e of CATALOGUE) expect(section.split(`| \`${e.id}\` |`)).toHaveLength(2);
  });
});

describe('catalogue docs', () => {
  it('renders one row per entry with the query, limits and provision', () => {
    expect(catalogueRow(endpoint('v3.realtime.multiquote.price'))).toBe(
      '| `v3.realtime.multiquote.price` | `/v3/market/realtime/{marketcode}/multiquote/stocks/price` | `isuCd*` | wrapped | realtime | realtime, during the sessions (08:30–18:00 on trading days); 400 at other hours | ≤ 20 codes |',
    );
    expect(catalogueRow(endpoint('v3.closed.history'))).toBe(
      '| `v3.closed.history` | `/v3/market/closed/{marketcode}/{issuecode}/history` | `trnsmCycleTpCd*`, `inqStrtDd*`, `inqEndDd*`, `reqCnt` | wrapped | closing | daily from 06:30 | ≤ 100 rows |',
    );
    expect(catalogueRow(endpoint('v3.extra.holiday'))).toContain('| bare | extra (ended 2024-06-30) | realtime | — |');
  });

  it('says provision rules in words', () => {
    expect(provisionInWords({ type: 'realtime', strict: true })).toBe('realtime, during the sessions (08:30–18:00 on trading days); 400 at other hours');
    expect(provisionInWords({ type: 'batch', at: '06:30' })).toBe('daily from 06:30');
    expect(provisionInWords({ type: 'afterClose', at: '15:40' })).toBe(
      "the last trading day's until 08:30; 400 from 08:30 until 15:40 on trading days; then today's",
    );
  });

  it('replaces only the text between the markers', () => {
    const doc = `# t\n\nbefore\n${SECTION_START}\nold\n${SECTION_END}\nafter\n`;
    const out = replaceSection(doc, 'new table');
    expect(out).toBe(`# t\n\nbefore\n${SECTION_START}\nnew table\n${SECTION_END}\nafter\n`);
    expect(currentSection(out)).toBe('new table');
    expect(replaceSection(out, 'new table')).toBe(out);
    expect(() => replaceSection('no markers', 'x')).toThrow(/catalogue:start/);
    expect(() => replaceSection(`${SECTION_END}\n${SECTION_START}`, 'x')).toThrow();
  });
});
