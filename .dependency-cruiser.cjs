/**
 * The allowed dependencies between Syncline's packages, checked by `npm run depcheck`
 * (and by `.ci/run` before the tests). docs/architecture.md explains them in prose.
 *
 * Three kinds of rule:
 * - the arrows: which packages each package may import (ARROWS, and TEST_ARROWS for the
 *   few a package's tests need besides);
 * - declarations: every import of an npm or workspace package is declared in the
 *   importing package's own package.json (production code only from "dependencies");
 * - hygiene: no relative path into another package, no import that does not resolve.
 *
 * The graph the arrows allow is layered (core, then the stage libraries and the emulators,
 * then sync-stage, then the API, then the workers), so packages cannot form a cycle; the
 * `no-cycle-between-packages` rule says so to anyone who breaks the layering.
 */
const fs = require('node:fs');
const path = require('node:path');

/** Test code, by file name: it may use devDependencies and the TEST_ARROWS. */
const TEST_CODE = [
  '[.](spec|int-spec|e2e-spec|kappa-spec)[.]tsx?$',
  '/testing/', // test helpers beside the code they test
  '-testing[.]ts$', // apps/sync-api/src/connections/oauth-testing.ts
  '[.]harness[.]ts$|[.]contract-harness[.]ts$', // the connectors' contract harnesses
  '^libs/connectors/src/contract/contract-suite[.]ts$', // the connectors' shared contract suite
  '^libs/[^/]+/test/', // e.g. libs/conflicts/test: probes the benches share with tests
];

/** Build configuration: runs in Node at build time, so it may use devDependencies. */
const BUILD_CONFIG = ['^apps/web/vite[.]config[.]ts$'];

/**
 * What each package may import besides itself and the npm packages its package.json
 * declares. One rule per row; the rule's name is what a violation prints.
 */
const ARROWS = [
  // [package, may import, rule name, why]
  ['libs/core', [], 'core-imports-no-package', 'core is the base every package shares'],
  ['libs/log', ['libs/core'], 'lib-imports-only-core', 'a stage library stands on core alone'],
  ['libs/identity', ['libs/core'], 'lib-imports-only-core', 'a stage library stands on core alone'],
  ['libs/conflicts', ['libs/core'], 'lib-imports-only-core', 'a stage library stands on core alone'],
  ['libs/insights', ['libs/core'], 'lib-imports-only-core', 'a stage library stands on core alone'],
  ['libs/jobs', ['libs/core'], 'lib-imports-only-core', 'the job map is shared by both apps'],
  [
    'libs/connectors',
    ['libs/core'],
    'connectors-not-to-identity-conflicts-log',
    'a connector translates one provider; what becomes of its changes is the stages’ business',
  ],
  [
    'libs/sync-stage',
    ['libs/core', 'libs/log', 'libs/identity', 'libs/conflicts', 'libs/connectors', 'libs/insights'],
    'sync-stage-imports-only-stage-libs',
    'the sync stage composes the stage libraries; libs never import apps',
  ],
  [
    'apps/emulators',
    ['libs/core'],
    'emulators-import-only-core',
    'an emulator copies the provider, never our mappers (a shared bug would pass every test)',
  ],
  [
    'apps/sync-api',
    ['libs/'],
    'api-not-to-workers',
    'apps import libs; the API never imports the workers (work crosses by jobs in libs/jobs)',
  ],
  ['apps/workers', ['libs/'], 'workers-import-only-libs', 'apps import libs, never other apps'],
  ['apps/web', [], 'web-imports-only-its-own-code', 'a browser app: its own code and npm packages'],
];

/** What a package's test code may import besides its ARROWS (the emulators: see below). */
const TEST_ARROWS = {
  // The workers' integration tests start the real API beside the workers (test-app.ts) and
  // read its test helpers (openapi/testing: a workspace's rows).
  'apps/workers': ['apps/sync-api/src/(openapi/)?testing/'],
  // fields.spec.ts keeps the browser's copy of the field list equal to the server's: it
  // imports that one file, never the package (whose index pulls in Prisma and pino).
  'apps/web': ['libs/core/src/unified-fields[.]ts$'],
};

/** Who may start the emulators: tests, e2e, benchmarks and the demo. */
const EMULATOR_USERS = [...TEST_CODE, '^apps/emulators/', '^e2e/', '^bench/', '^scripts/demo', '^test/'];

/** Every workspace package: its folder, and the workspace packages its package.json declares. */
function workspacePackages() {
  const byName = new Map();
  const packages = [];
  for (const group of ['apps', 'libs']) {
    for (const name of fs.readdirSync(path.join(__dirname, group))) {
      const file = path.join(__dirname, group, name, 'package.json');
      if (!fs.existsSync(file)) continue;
      const manifest = JSON.parse(fs.readFileSync(file, 'utf8'));
      const pkg = { dir: `${group}/${name}`, manifest };
      byName.set(manifest.name, pkg.dir);
      packages.push(pkg);
    }
  }
  const dirsOf = (deps) => Object.keys(deps ?? {}).flatMap((n) => (byName.has(n) ? [byName.get(n)] : []));
  return packages.map(({ dir, manifest }) => ({
    dir,
    name: manifest.name,
    deps: dirsOf(manifest.dependencies),
    devDeps: dirsOf(manifest.devDependencies),
  }));
}

const folder = (dir) => `^${dir}/`;
/** TEST_CODE narrowed to one package's folder. */
const testCodeIn = (dir) =>
  TEST_CODE.flatMap((t) =>
    !t.startsWith('^') ? [`^${dir}/(.*)(${t})`] : t.startsWith(`^${dir}/`) ? [t] : [],
  );
const PACKAGE_CODE = '^(apps|libs)/[^/]+/';

function arrowRules() {
  return ARROWS.flatMap(([dir, may, name, why]) => {
    const allowed = [
      folder(dir),
      '^apps/emulators/',
      ...may.map((d) => (d.endsWith('/') ? `^${d}` : folder(d))),
    ];
    const extra = (TEST_ARROWS[dir] ?? []).map((p) => `^${p}`);
    const rule = (from, pathNot) => ({
      name,
      severity: 'error',
      comment: `${dir}: ${why}. It may import: ${may.length ? may.join(', ') : 'no other package'}.`,
      from,
      to: { path: '^(apps|libs)/', pathNot },
    });
    if (extra.length === 0) return [rule({ path: folder(dir) }, allowed)];
    return [
      rule({ path: folder(dir), pathNot: TEST_CODE }, allowed),
      rule({ path: testCodeIn(dir) }, [...allowed, ...extra]),
    ];
  });
}

function declarationRules() {
  return workspacePackages().flatMap(({ dir, name, deps, devDeps }) => {
    const devOnly = devDeps.filter((d) => !deps.includes(d));
    const rules = [
      {
        name: 'workspace-package-not-in-package-json',
        severity: 'error',
        comment: `${dir} imports a workspace package that ${dir}/package.json does not declare: add "@syncline/<name>": "*" (to devDependencies if only tests use it).`,
        from: { path: folder(dir) },
        to: { path: '^(apps|libs)/', pathNot: [folder(dir), ...deps.map(folder), ...devDeps.map(folder)] },
      },
    ];
    if (devOnly.length > 0) {
      rules.push({
        name: 'workspace-dev-dependency-in-production-code',
        severity: 'error',
        comment: `${name} declares this package in devDependencies only, yet production code imports it.`,
        from: { path: folder(dir), pathNot: [...TEST_CODE, ...BUILD_CONFIG] },
        to: { path: devOnly.map(folder) },
      });
    }
    return rules;
  });
}

module.exports = {
  forbidden: [
    ...arrowRules(),
    {
      name: 'emulators-only-from-tests',
      severity: 'error',
      comment:
        'The emulators are started by tests (spec files, testing/ helpers), e2e/, bench/ and the demo (scripts/demo*) only.',
      from: { pathNot: EMULATOR_USERS },
      to: { path: '^apps/emulators/' },
    },
    ...declarationRules(),
    {
      name: 'npm-package-not-in-package-json',
      severity: 'error',
      comment:
        'An npm package the nearest package.json does not declare: add it there with the root’s version range (devDependencies if only tests use it).',
      from: {},
      to: { dependencyTypes: ['npm-no-pkg', 'npm-unknown'] },
    },
    {
      name: 'dev-dependency-in-production-code',
      severity: 'error',
      comment: 'Production code imports a package its package.json lists under devDependencies only.',
      from: { path: PACKAGE_CODE, pathNot: [...TEST_CODE, ...BUILD_CONFIG] },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'relative-import-into-another-package',
      severity: 'error',
      comment:
        'Import another package by its name (@syncline/<name>), through its index, not by a relative path.',
      from: { path: '^(apps|libs)/([^/]+)/', pathNot: TEST_CODE },
      to: { path: '^(apps|libs)/', pathNot: '^$1/$2/', dependencyTypes: ['local'] },
    },
    {
      name: 'no-cycle-between-packages',
      severity: 'error',
      comment: 'A cycle of imports through more than one package.',
      from: { path: '^(apps|libs)/([^/]+)/' },
      to: { circular: true, via: { pathNot: '^$1/$2/' } },
    },
    {
      name: 'unresolvable-import',
      severity: 'error',
      comment: 'An import that resolves to no file (moved or deleted?).',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: ['^apps/web/dist/', '/generated/'] },
    tsConfig: { fileName: 'tsconfig.json' },
    // `import type` couples packages as much as a value import does.
    tsPreCompilationDeps: true,
    // Each package's own package.json, never the root's merged in.
    combinedDependencies: false,
    skipAnalysisNotInRules: true,
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['main', 'types'],
      extensions: ['.ts', '.tsx', '.d.ts', '.js', '.mjs', '.cjs', '.json'],
    },
  },
};
