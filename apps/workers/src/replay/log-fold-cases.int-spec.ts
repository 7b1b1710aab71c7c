import { describe, it } from 'vitest';
import { kappaHolds } from './testing/log-fold-history';

/**
 * Histories the Kappa property found, kept as cases of their own so they stay fixed whatever
 * seed the property runs on.
 */
describe('the log is the only truth: histories found by the property', () => {
  it('look-alikes of one CRM sharing a phone fold the same in one batch and one at a time', async () => {
    // Found on 2026-12-04 (seed -1285376401, one partition).
    await kappaHolds(
      [
        { kind: 'edit', system: 'a', person: 0, at: 0, phone: '+44 20 7946 0001', alias: true },
        { kind: 'edit', system: 'a', person: 0, at: 0, alias: true },
        { kind: 'edit', system: 'a', person: 0, at: 0, phone: '+44 20 7946 0001' },
        { kind: 'edit', system: 'a', person: 0, at: 0 },
      ],
      { partitions: 1, replayBatch: 1 },
    );
  }, 120_000);

  it('an edit made in Syncline just before a record that joins two entities stays before the join', async () => {
    await kappaHolds(
      [
        { kind: 'edit', system: 'a', person: 0, at: 0, phone: '+44 20 7946 0001', alias: true },
        { kind: 'live', batchSize: 50 },
        { kind: 'user-edit', person: 0, jobTitle: 'CTO' },
        { kind: 'edit', system: 'a', person: 0, at: 10, phone: '+44 20 7946 0001' },
      ],
      { partitions: 1, replayBatch: 1 },
    );
  }, 120_000);

  it('an entity holding two records of one CRM is owed its update on the same record live and folded', async () => {
    // Found on 2026-12-04 (seed -1117172361, one partition).
    await kappaHolds(
      [
        { kind: 'edit', system: 'a', person: 1, at: 1, jobTitle: 'CTO', phone: '+44 20 7946 0001' },
        { kind: 'edit', system: 'b', person: 1, at: 1 },
        { kind: 'live', batchSize: 1 },
        { kind: 'edit', system: 'a', person: 1, at: 0, phone: '+44 20 7946 0001', alias: true },
        { kind: 'edit', system: 'a', person: 0, at: 105 },
      ],
      { partitions: 1, replayBatch: 7 },
    );
  }, 120_000);

  it('a write whose receipt a fold meets before the edit that owed it is queued as sent', async () => {
    // Found on 2026-12-05 (seed 13, one partition): folded seven at a time, the receipt of the
    // Syncline edit's write came in the batch before that edit, which then queued it pending.
    await kappaHolds(
      [
        { kind: 'edit', system: 'a', person: 0, at: 0 },
        { kind: 'edit', system: 'a', person: 0, at: 0, twice: 'new-key' },
        { kind: 'push', system: 'a', echo: 'after-receipt', foldClaims: false },
        { kind: 'user-edit', person: 0, jobTitle: 'CTO' },
        { kind: 'push', system: 'a', echo: 'none', foldClaims: false },
        { kind: 'edit', system: 'a', person: 0, at: 0 },
        { kind: 'dismiss' },
      ],
      { partitions: 1, replayBatch: 7 },
    );
  }, 120_000);
  it('a policy saved after two edits of one field in the same batch does not settle them', async () => {
    // Live, the three are one batch; folded from zero, one at a time. A stage that put a batch's
    // policies in force before its edits would settle the edits by the new set live only.
    await kappaHolds(
      [
        { kind: 'edit', system: 'a', person: 0, at: 0 },
        { kind: 'live', batchSize: 50 },
        { kind: 'edit', system: 'a', person: 0, at: 400, jobTitle: 'Analyst' },
        { kind: 'edit', system: 'b', person: 0, at: 401, jobTitle: 'Admiral' },
        { kind: 'policy', jobTitle: 'manual', phone: 'b-first' },
        { kind: 'live', batchSize: 50 },
        { kind: 'edit', system: 'a', person: 0, at: 402, jobTitle: 'CTO' },
      ],
      { partitions: 1, replayBatch: 1 },
    );
  }, 120_000);
});
