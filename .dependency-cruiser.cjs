// The dependency rules of src/ (`npm run lint:deps`): no cycles, the protocol and the SDK stand alone, and the server's layers
// import only downwards, in the order data flows (../shared/STYLE.md §1). Type-only imports count: a declaration file carries them.

/**
 * The server's layers from the lowest up; each may import only itself and the layers before it. A layer is a folder under
 * src/ or a single module (src/log.ts). docs/ARCHITECTURE.md describes each. The public entry, src/index.ts, sits at the
 * top with the command line.
 */
const LAYERS = [
  ['protocol', ['protocol/']],
  ['market', ['market/']],
  ['base', ['config/', 'metrics/', 'log.ts', 'guard.ts', 'version.ts', 'bytes.ts']],
  ['upstream', ['upstream/']],
  ['sim', ['sim/']],
  ['state', ['state/']],
  ['bus', ['bus/']],
  ['poller', ['poller/']],
  ['persist', ['persist/']],
  ['recorder', ['recorder/']],
  ['cluster', ['cluster/']],
  ['topology', ['topology/']],
  ['access', ['access/']],
  ['lookups', ['lookups/']],
  ['gateway', ['gateway/']],
  ['replay', ['replay/']],
  ['http', ['http/']],
  ['bridge', ['bridge/']],
  ['cli', ['cli/', 'cli.ts', 'index.ts']],
];

const literal = (s) => s.replace(/[.]/g, '\\.');
/** A path pattern matching the files of the given layer entries. */
const pathOf = (entries) => `^src/(${entries.map(literal).join('|')})`;

/** One rule per layer that has a layer above it: none of its files imports a file of a higher layer. */
const noUpward = LAYERS.slice(0, -1).map(([name, entries], i) => ({
  name: `layer-${name}`,
  comment: `${name} is below ${LAYERS.slice(i + 1)
    .map(([n]) => n)
    .join(', ')}: it may not import them (layers import downwards only)`,
  severity: 'error',
  from: { path: pathOf(entries) },
  to: { path: pathOf(LAYERS.slice(i + 1).flatMap(([, e]) => e)) },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'A cycle makes its modules one unit that can be neither understood nor tested apart.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'protocol-stands-alone',
      comment: 'src/protocol/ is the wire vocabulary that the server, the SDK and the demo share: zod and itself only.',
      severity: 'error',
      from: { path: '^src/protocol/' },
      to: { pathNot: ['^src/protocol/', '(^|/)node_modules/zod/'] },
    },
    {
      name: 'client-stands-alone',
      comment: 'src/client/ is the SDK package (packages/client), for browsers and Node: itself, the protocol and eventemitter3, its one dependency.',
      severity: 'error',
      from: { path: '^src/client/' },
      to: { pathNot: ['^src/(client|protocol)/', '(^|/)node_modules/eventemitter3/'] },
    },
    {
      name: 'client-not-to-zod',
      comment:
        'The SDK package does not depend on zod: the protocol modules it reaches, types included, must not import it (src/protocol/wire.ts holds the plain types).',
      severity: 'error',
      from: { path: '^src/client/' },
      to: { path: '(^|/)node_modules/zod/', reachable: true },
    },
    {
      name: 'demo-on-the-sdk',
      comment: 'src/demo/ is a browser page built on the SDK: itself, the SDK, the protocol and its npm libraries.',
      severity: 'error',
      from: { path: '^src/demo/' },
      to: { pathNot: ['^src/(demo|client|protocol)/', '(^|/)node_modules/'] },
    },
    ...noUpward,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // `import type` counts: it is a dependency of the declaration files, and of the design.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    // Keep a symlinked node_modules (a worktree's) under its own name, so the npm-package patterns above match.
    preserveSymlinks: true,
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
  },
};
