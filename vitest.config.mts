import swc from 'unplugin-swc';
import { defineConfig } from 'vitest/config';

// One runner, three tiers chosen by file name. Integration and e2e files share the
// machine's PostgreSQL and Redis, each in a database and key prefix of its own.
const swcPlugin = () =>
  swc.vite({
    swcrc: false,
    module: { type: 'es6' },
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
      target: 'es2023',
      keepClassNames: true,
    },
  });

export default defineConfig({
  plugins: [swcPlugin()],
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['{apps,libs,prisma,bench,scripts}/**/*.spec.ts'],
          environment: 'node',
        },
      },
      {
        test: {
          name: 'int',
          include: ['{apps,libs,prisma,bench}/**/*.int-spec.ts'],
          globalSetup: ['test/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          pool: 'forks',
          maxWorkers: 2,
        },
      },
      {
        test: {
          // The Kappa property (the live state equals a fold of the same log from zero) over new
          // seeds, as long as asked (`npm run test:kappa`); the int tier checks a fixed seed
          // (log-fold.int-spec.ts).
          name: 'kappa',
          include: ['apps/**/*.kappa-spec.ts'],
          globalSetup: ['test/global-setup.ts'],
          testTimeout: 1_800_000,
          hookTimeout: 60_000,
          pool: 'forks',
          maxWorkers: 1,
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['e2e/**/*.e2e-spec.ts'],
          // The chaos scenario (about 3 minutes) runs with the others. Run before two-way-sync it
          // used to make that file's manual-policy test fail: a pusher's claim raced the merge
          // of its target's report (fixed in outbox-claim.ts).
          globalSetup: ['test/global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          pool: 'forks',
          maxWorkers: 1,
        },
      },
    ],
  },
});
