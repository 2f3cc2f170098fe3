import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * README.md as a front door: short, every link resolves, and every command
 * it shows is run by a test (the table below says which; this file checks
 * the table is complete and each test still holds the command).
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** Every command of the README's shell blocks, and the test that runs it. */
const COVERED: Readonly<Record<string, string>> = {
  'npm ci && npm start': 'test/bridge/e2e.test.ts', // `npm start`'s build and command, as a user runs it
  'npm test': '.ci/run',
  'npm run test:all': 'vitest.config.ts',
  "UPSTREAM_URL=https://<the provider's base URL> UPSTREAM_API_KEY=<your key> npm start": 'test/bridge/around-the-clock.test.ts', // UPSTREAM_URL and UPSTREAM_API_KEY against an upstream process
  'npx krx-bridge': 'test/package/pack.test.ts',
  'npx krx-bridge tail price.kospi.005930 quote.kosdaq.*': 'test/cli/cli.test.ts',
  'npx krx-bridge get history kospi 005930 --count 3': 'test/package/pack.test.ts',
  'npx krx-bridge sim': 'test/package/pack.test.ts',
  'npm run lint': '.ci/run',
  'npm run docs': 'test/config/docs.test.ts',
  'npm run build:kernel': 'test/upstream/kernel.test.ts',
  'npm run bench': '.ci/run',
};

/** What each covering file must contain for the command to count as run there. */
const EVIDENCE: Readonly<Record<string, string>> = {
  'npm ci && npm start': 'scripts.start',
  'npm test': 'npm test',
  'npm run test:all': 'npm run test:all',
  "UPSTREAM_URL=https://<the provider's base URL> UPSTREAM_API_KEY=<your key> npm start": 'UPSTREAM_API_KEY',
  'npx krx-bridge': "'krx-bridge', '--port'",
  'npx krx-bridge tail price.kospi.005930 quote.kosdaq.*': "'tail', 'price.kospi.005930', 'quote.kosdaq.*'",
  'npx krx-bridge get history kospi 005930 --count 3': "'krx-bridge', 'get', 'history', 'kospi', '005930', '--count', '3'",
  'npx krx-bridge sim': "'krx-bridge', 'sim', '--sim-port'",
  'npm run lint': 'npm run lint',
  'npm run docs': 'settingsMarkdown',
  'npm run build:kernel': 'compileKernel',
  'npm run bench': 'npm run bench',
};

function commands(md: string): string[] {
  const out: string[] = [];
  for (const block of md.matchAll(/```sh\n([\s\S]*?)```/g)) {
    for (const line of block[1]!.split('\n')) {
      const cmd = line.replace(/\s+#.*$/, '').trim();
      if (cmd) out.push(cmd);
    }
  }
  return out;
}

describe('README.md', () => {
  it('is under 150 lines', () => {
    expect(README.split('\n').length).toBeLessThan(150);
  });

  it('links only to files that exist', () => {
    const links = [...README.matchAll(/\]\(([^)#]+)(#[^)]*)?\)/g)].map((m) => m[1]!).filter((l) => !/^[a-z]+:/.test(l));
    expect(links.length).toBeGreaterThan(5);
    for (const l of links) expect(existsSync(join(ROOT, l)), l).toBe(true);
  });

  it('shows only commands a test runs', () => {
    const shown = commands(README);
    expect(shown.length).toBeGreaterThan(5);
    for (const cmd of shown) {
      const file = COVERED[cmd];
      expect(file, `no test runs: ${cmd}`).toBeDefined();
      expect(readFileSync(join(ROOT, file!), 'utf8'), `${file} no longer runs: ${cmd}`).toContain(EVIDENCE[cmd]!);
    }
  });
});

describe('the docs the README links to', () => {
  it('link only to files that exist', () => {
    for (const doc of ['docs/DEMO.md', 'docs/SIMULATOR.md', 'docs/DEPLOYMENT.md', 'docs/CONFIGURATION.md', 'docs/OPERATIONS.md']) {
      const text = readFileSync(join(ROOT, doc), 'utf8');
      for (const m of text.matchAll(/\]\(([^)#]+)(#[^)]*)?\)/g)) {
        const l = m[1]!;
        if (/^[a-z]+:/.test(l)) continue;
        expect(existsSync(join(ROOT, dirname(doc), l)), `${doc}: ${l}`).toBe(true);
      }
    }
  });
});
