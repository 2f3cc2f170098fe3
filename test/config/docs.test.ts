import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SETTINGS } from '../../src/config/config.js';
import { SETTINGS_END, SETTINGS_START, settingsMarkdown } from '../../src/config/docs.js';
import { SimEnv } from '../../src/sim/env.js';

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

describe('README configuration', () => {
  it('is the table generated from SETTINGS (run `npm run docs` after changing them)', () => {
    const a = README.indexOf(SETTINGS_START) + SETTINGS_START.length + 1;
    expect(README.slice(a, README.indexOf(SETTINGS_END))).toBe(settingsMarkdown());
    for (const name of Object.keys(SETTINGS)) expect(README).toContain(`| \`${name}\` |`);
  });

  it('documents every simulator setting', () => {
    for (const name of Object.keys(SimEnv.shape)) expect(README, name).toContain(`| \`${name}\` |`);
  });

  it('starts with the two quick-start commands', () => {
    const quick = README.slice(README.indexOf('## Quick start'), README.indexOf('## Quick start') + 400);
    expect(quick).toContain('npm ci && npm start');
    expect(quick).toContain('npm test');
  });
});
