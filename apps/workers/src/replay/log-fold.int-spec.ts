import { describe, it } from 'vitest';
import { checkKappa } from './testing/log-fold-history';

/**
 * The Kappa property: whatever happened live (edits in two CRMs, webhooks duplicated and out
 * of order, edits made in Syncline, merges and unmerges, our writes with their claims,
 * receipts and echoes in any order, a worker dying before its batch commits, batches of 1 to
 * 50 events, another workspace's edits of the same people on the same partition), folding the
 * same log from offset zero into a fresh group with another batch size gives the same derived
 * state, table by table. The log has four partitions, as a deployment has several; a
 * workspace's events are all on one of them (libs/log's partitioner), which is what makes the
 * log's order the only order. The neighbour is left out of the fold from zero: the states
 * agree only if nothing of its own reached the history's workspace (an identity cache shared
 * across workspaces was tried and fails here at once).
 */
describe('the log is the only truth', () => {
  it('live state equals the fold of the same log from zero into a fresh group, table by table', async () => {
    // A fixed seed in `npm test`, so a run that lands is a run that can be repeated; new seeds
    // are explored by `npm run test:kappa` (a new one each run), and each history found there
    // is kept in log-fold-cases.int-spec.ts once fixed.
    await checkKappa({
      partitions: 4,
      numRuns: Number(process.env.KAPPA_RUNS ?? 25),
      seed: Number(process.env.KAPPA_SEED ?? 2),
    });
  }, 900_000);
});
