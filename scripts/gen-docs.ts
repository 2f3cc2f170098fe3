/**
 * Regenerates the generated parts of the documentation: the endpoint table
 * of docs/UPSTREAM.md and the configuration table of docs/CONFIGURATION.md
 * (from src/upstream/catalogue.ts and src/config/config.ts), the error-code table of
 * docs/PROTOCOL.md, docs/protocol.schema.json and the plain wire types of
 * src/protocol/wire.ts (from src/protocol/).
 * Run with `npm run docs`; tests fail when any of them is out of date.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { catalogueMarkdown, replaceSection } from '../src/upstream/docs.js';
import { errorTable, protocolJsonSchema } from '../src/protocol/docs.js';
import { replaceSettings, settingsMarkdown } from '../src/config/docs.js';
import { wireTypes } from './wire-types.js';

function update(relative: string, transform: (before: string) => string): void {
  const path = fileURLToPath(new URL(`../${relative}`, import.meta.url));
  let before = '';
  try {
    before = readFileSync(path, 'utf8');
  } catch {
    // A generated file that does not exist yet is written from scratch.
  }
  const after = transform(before);
  if (after === before) console.log(`${relative} is up to date`);
  else {
    writeFileSync(path, after);
    console.log(`${relative} regenerated`);
  }
}

update('docs/CONFIGURATION.md', (s) => replaceSettings(s, settingsMarkdown()));
update('docs/UPSTREAM.md', (s) => replaceSection(s, catalogueMarkdown()));
update('docs/PROTOCOL.md', (s) => s.replace(/(<!-- errors:start -->\n)[\s\S]*?(<!-- errors:end -->)/, `$1${errorTable()}$2`));
update('src/protocol/wire.ts', () => wireTypes());
update('docs/protocol.schema.json', () => `${JSON.stringify(protocolJsonSchema(), null, 2)}\n`);
