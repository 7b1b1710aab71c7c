import { describe, it } from 'vitest';
import { checkKappa } from './testing/log-fold-history';

/**
 * The Kappa property of log-fold.int-spec.ts, exploring (`npm run test:kappa`, not `npm test`):
 * a new seed each run unless KAPPA_SEED is set, more runs (KAPPA_RUNS). A history it finds is
 * printed with its seed; once fixed it is kept in log-fold-cases.int-spec.ts.
 */
describe('the log is the only truth (exploring new histories)', () => {
  it('live state equals the fold of the same log from zero into a fresh group, table by table', async () => {
    await checkKappa({
      partitions: Number(process.env.KAPPA_PARTITIONS ?? 4),
      numRuns: Number(process.env.KAPPA_RUNS ?? 60),
      ...(process.env.KAPPA_SEED === undefined ? {} : { seed: Number(process.env.KAPPA_SEED) }),
    });
  }, 1_800_000);
});
