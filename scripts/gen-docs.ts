/**
 * Regenerates the endpoint table of README.md (between the catalogue
 * markers) from src/upstream/catalogue.ts. Run with `npm run docs`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { catalogueMarkdown, replaceSection } from '../src/upstream/docs.js';

const readmePath = fileURLToPath(new URL('../README.md', import.meta.url));
const before = readFileSync(readmePath, 'utf8');
const after = replaceSection(before, catalogueMarkdown());
if (after === before) {
  console.log('README.md catalogue section is up to date');
} else {
  writeFileSync(readmePath, after);
  console.log('README.md catalogue section regenerated');
}
