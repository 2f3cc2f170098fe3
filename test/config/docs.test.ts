import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SETTINGS } from '../../src/config/config.js';
import { SETTINGS_END, SETTINGS_START, settingsMarkdown } from '../../src/config/docs.js';
import { SimEnv } from '../../src/sim/env.js';

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const CONFIG = readFileSync(new URL('../../docs/CONFIGURATION.md', import.meta.url), 'utf8');
const SIMULATOR = readFileSync(new URL('../../docs/SIMULATOR.md', import.meta.url), 'utf8');

describe('docs/CONFIGURATION.md', () => {
  it('is the table generated from SETTINGS (run `npm run docs` after changing them)', () => {
    const a = CONFIG.indexOf(SETTINGS_START) + SETTINGS_START.length + 1;
    expect(CONFIG.slice(a, CONFIG.indexOf(SETTINGS_END))).toBe(settingsMarkdown());
    for (const name of Object.keys(SETTINGS)) expect(CONFIG).toContain(`| \`${name}\` |`);
  });

  it('documents every simulator setting', () => {
    for (const name of Object.keys(SimEnv.shape)) expect(SIMULATOR, name).toContain(`| \`${name}\` |`);
  });

  it('README starts with the two commands', () => {
    const first = README.split('\n').slice(0, 15).join('\n');
    expect(first).toContain('npm ci && npm start');
    expect(first).toContain('npm test');
  });
});
