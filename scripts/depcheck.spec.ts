import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// `npm run depcheck` runs dependency-cruiser with the repository's .dependency-cruiser.cjs.
// These tests run the same config over a small fixture monorepo with one violation of each
// rule, so a rule that silently stops matching (a regex typo) fails here.

const ROOT = join(__dirname, '..');
const CLI = join(ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruiser.mjs');

interface Violation {
  rule: { name: string };
  from: string;
  to: string;
}

type Files = Record<string, string>;

const manifest = (name: string, dependencies: Record<string, string> = {}, devDependencies = {}) =>
  JSON.stringify({ name, main: 'src/index.ts', dependencies, devDependencies });

const PACKAGES = [
  'libs/core',
  'libs/log',
  'libs/identity',
  'libs/conflicts',
  'libs/connectors',
  'libs/jobs',
  'libs/sync-stage',
  'apps/emulators',
  'apps/sync-api',
  'apps/workers',
  'apps/web',
];
const ws = (...names: string[]) => Object.fromEntries(names.map((n) => [`@syncline/${n}`, '*']));

/** A monorepo in which every import named by a test below is the only one of its kind. */
const FIXTURE: Files = {
  'package.json': JSON.stringify({ name: 'fixture', private: true, workspaces: ['apps/*', 'libs/*'] }),
  'tsconfig.json': JSON.stringify({ compilerOptions: { module: 'preserve', moduleResolution: 'bundler' } }),
  'node_modules/left-pad/package.json': JSON.stringify({ name: 'left-pad', main: 'index.js' }),
  'node_modules/left-pad/index.js': 'module.exports = 1;',
  'node_modules/test-kit/package.json': JSON.stringify({ name: 'test-kit', main: 'index.js' }),
  'node_modules/test-kit/index.js': 'module.exports = 1;',

  'libs/core/package.json': manifest('@syncline/core'),
  'libs/core/src/index.ts': 'export const core = 1;\n',
  'libs/core/src/unified-fields.ts': 'export const fields = 1;\n',
  'libs/log/package.json': manifest('@syncline/log', { ...ws('core', 'identity') }),
  'libs/log/src/index.ts':
    "import { core } from '@syncline/core';\nexport const log = core;\nexport * from './cycle';\n",
  'libs/log/src/undeclared-npm.ts': "import pad from 'left-pad';\nexport const p = pad;\n",
  'libs/log/src/cycle.ts': "import { identity } from '@syncline/identity';\nexport const c = identity;\n",
  'libs/identity/package.json': manifest('@syncline/identity', { ...ws('log') }),
  'libs/identity/src/index.ts': "import { log } from '@syncline/log';\nexport const identity = log;\n",
  'libs/conflicts/package.json': manifest('@syncline/conflicts'),
  'libs/conflicts/src/index.ts': "import { core } from '@syncline/core';\nexport const conflicts = core;\n",
  'libs/connectors/package.json': manifest('@syncline/connectors', ws('core', 'log'), {
    ...ws('emulators'),
    'test-kit': '*',
  }),
  'libs/connectors/src/index.ts': "import { log } from '@syncline/log';\nexport const connectors = log;\n",
  'libs/connectors/src/dev-only.ts': "import kit from 'test-kit';\nexport const k = kit;\n",
  'libs/connectors/src/hubspot.int-spec.ts':
    "import kit from 'test-kit';\nimport { emulators } from '@syncline/emulators';\nexport const t = [kit, emulators];\n",
  'libs/jobs/package.json': manifest('@syncline/jobs', ws('core')),
  'libs/jobs/src/index.ts': "import { core } from '../../core/src/index';\nexport const jobs = core;\n",
  'libs/jobs/src/moved.ts': "import { gone } from './no-such-file';\nexport const m = gone;\n",
  'libs/sync-stage/package.json': manifest(
    '@syncline/sync-stage',
    ws('core', 'log', 'conflicts', 'connectors'),
  ),
  'libs/sync-stage/src/index.ts':
    "import { log } from '@syncline/log';\nimport { conflicts } from '@syncline/conflicts';\nimport { connectors } from '@syncline/connectors';\nexport const stage = [log, conflicts, connectors];\n",

  'apps/emulators/package.json': manifest('@syncline/emulators', ws('core')),
  'apps/emulators/src/index.ts': "import { core } from '@syncline/core';\nexport const emulators = core;\n",
  'apps/sync-api/package.json': manifest(
    '@syncline/sync-api',
    ws('core', 'jobs', 'workers'),
    ws('emulators'),
  ),
  'apps/sync-api/src/index.ts': "import { jobs } from '@syncline/jobs';\nexport const api = jobs;\n",
  'apps/sync-api/src/dry-run.service.ts':
    "import { workers } from '@syncline/workers';\nexport const d = workers;\n",
  'apps/sync-api/src/oauth.service.ts':
    "import { emulators } from '@syncline/emulators';\nexport const o = emulators;\n",
  'apps/sync-api/src/testing/test-app.ts':
    "import { emulators } from '@syncline/emulators';\nexport const a = emulators;\n",
  'apps/workers/package.json': manifest(
    '@syncline/workers',
    ws('core', 'sync-stage', 'jobs'),
    ws('sync-api'),
  ),
  'apps/workers/src/index.ts':
    "import { stage } from '@syncline/sync-stage';\nimport { jobs } from '@syncline/jobs';\nexport const workers = [stage, jobs];\n",
  'apps/workers/src/workers.int-spec.ts':
    "import { a } from '../../sync-api/src/testing/test-app';\nimport { workers } from './index';\nexport const t = [a, workers];\n",
  'apps/workers/src/api-client.ts': "import { api } from '@syncline/sync-api';\nexport const c = api;\n",
  'apps/web/package.json': manifest('@syncline/web', {}, ws('core')),
  'apps/web/src/main.ts': "import { core } from '@syncline/core';\nexport const m = core;\n",
  'apps/web/src/fields.spec.ts':
    "import { fields } from '../../../libs/core/src/unified-fields';\nexport const f = fields;\n",
  'apps/web/src/core.spec.ts':
    "import { core } from '../../../libs/core/src/index';\nexport const c = core;\n",
};

let dir: string;

function cruise(): Violation[] {
  const out = execFileSync(
    process.execPath,
    [CLI, '--config', '.dependency-cruiser.cjs', '--output-type', 'json', 'apps', 'libs'],
    {
      cwd: dir,
      encoding: 'utf8',
    },
  );
  return (JSON.parse(out) as { summary: { violations: Violation[] } }).summary.violations;
}

let violations: Violation[];
const rulesFrom = (from: string) =>
  violations
    .filter((v) => v.from === from)
    .map((v) => v.rule.name)
    .sort();

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'depcheck-'));
  for (const [file, text] of Object.entries(FIXTURE)) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    writeFileSync(join(dir, file), text);
  }
  mkdirSync(join(dir, 'node_modules/@syncline'), { recursive: true });
  for (const pkg of PACKAGES)
    symlinkSync(join(dir, pkg), join(dir, 'node_modules/@syncline', pkg.split('/')[1] ?? ''));
  copyFileSync(join(ROOT, '.dependency-cruiser.cjs'), join(dir, '.dependency-cruiser.cjs'));
  violations = cruise();
}, 60_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('npm run depcheck', () => {
  it('refuses an npm package the importing package.json does not declare', () => {
    expect(rulesFrom('libs/log/src/undeclared-npm.ts')).toEqual(['npm-package-not-in-package-json']);
  });

  it('refuses a workspace package the importing package.json does not declare', () => {
    expect(rulesFrom('libs/conflicts/src/index.ts')).toEqual(['workspace-package-not-in-package-json']);
  });

  it('refuses a devDependency in production code, and allows it in tests', () => {
    expect(rulesFrom('libs/connectors/src/dev-only.ts')).toEqual(['dev-dependency-in-production-code']);
    expect(rulesFrom('libs/connectors/src/hubspot.int-spec.ts')).toEqual([]);
  });

  it('refuses connectors → identity, conflicts or log', () => {
    expect(rulesFrom('libs/connectors/src/index.ts')).toEqual(['connectors-not-to-identity-conflicts-log']);
  });

  it('refuses the API → the workers', () => {
    expect(rulesFrom('apps/sync-api/src/dry-run.service.ts')).toEqual(['api-not-to-workers']);
  });

  it('refuses the emulators outside tests, and allows them in tests', () => {
    expect(rulesFrom('apps/sync-api/src/oauth.service.ts')).toEqual([
      'emulators-only-from-tests',
      'workspace-dev-dependency-in-production-code',
    ]);
    expect(rulesFrom('apps/sync-api/src/testing/test-app.ts')).toEqual([]);
  });

  it("lets the workers' tests, and only they, start the API's test app", () => {
    expect(rulesFrom('apps/workers/src/workers.int-spec.ts')).toEqual([]);
    expect(rulesFrom('apps/workers/src/api-client.ts')).toEqual([
      'workers-import-only-libs',
      'workspace-dev-dependency-in-production-code',
    ]);
  });

  it('keeps the web app to its own code', () => {
    expect(rulesFrom('apps/web/src/main.ts')).toEqual([
      'web-imports-only-its-own-code',
      'workspace-dev-dependency-in-production-code',
    ]);
    // Its tests may read core's field list, that one file and nothing else.
    expect(rulesFrom('apps/web/src/fields.spec.ts')).toEqual([]);
    expect(rulesFrom('apps/web/src/core.spec.ts')).toEqual(['web-imports-only-its-own-code']);
  });

  it('refuses a relative path into another package', () => {
    expect(rulesFrom('libs/jobs/src/index.ts')).toEqual(['relative-import-into-another-package']);
  });

  it('refuses a cycle between packages', () => {
    // log → identity → log: each arrow is refused by itself, and the cycle is named once.
    expect(rulesFrom('libs/log/src/cycle.ts')).toContain('lib-imports-only-core');
    expect(rulesFrom('libs/identity/src/index.ts')).toEqual([
      'lib-imports-only-core',
      'no-cycle-between-packages',
    ]);
  });

  it('refuses an import that resolves to nothing', () => {
    expect(rulesFrom('libs/jobs/src/moved.ts')).toEqual(['unresolvable-import']);
  });

  it('allows the arrows the architecture allows', () => {
    for (const file of [
      'libs/sync-stage/src/index.ts',
      'apps/sync-api/src/index.ts',
      'apps/workers/src/index.ts',
      'apps/emulators/src/index.ts',
    ]) {
      expect(rulesFrom(file), file).toEqual([]);
    }
  });
});
