import type { LogTransaction } from '@syncline/log';
import { TargetConnections } from './connections';
import { oweAssociations } from './relation-writeback';

/** Subjects weighed per transaction when a whole workspace is weighed. */
const WORKSPACE_CHUNK = 500;

/**
 * A connection just reconciled (its backfill linked) is owed the associations the other CRMs
 * make between records it holds too: weighed here once, over every entity carrying a resolved
 * CRM pair (the stage weighs a pair only when one of its ends is in a batch, and before this
 * the connection was not eligible). Pairs to records it lacks follow their creates as usual.
 * Each chunk is its own transaction; the keys are the stage's, so nothing is owed twice.
 * Returns the connections owed a write (the other CRMs may be owed this one's own associations).
 */
export async function oweReconciledAssociations(
  pool: { connect(): Promise<LogTransaction & { release(): void }> },
  workspaceId: string,
): Promise<string[]> {
  const client = await pool.connect();
  const owed = new Set<string>();
  try {
    const { rows } = await client.query<{ id: string; entity_type: string }>(
      `SELECT DISTINCT r.from_id::text AS id, r.from_type AS entity_type FROM entity_relation r
        WHERE r.workspace_id = $1 AND r.kind = 'crm' AND r.to_id IS NOT NULL ORDER BY 1`,
      [workspaceId],
    );
    // Read now, not cached: the connection was just reconciled.
    const list = await new TargetConnections(0).of(client, workspaceId);
    for (let i = 0; i < rows.length; i += WORKSPACE_CHUNK) {
      await client.query('BEGIN');
      try {
        const subjects = rows
          .slice(i, i + WORKSPACE_CHUNK)
          .map((r) => ({ entityId: r.id, workspaceId, entityType: r.entity_type, frozen: false }));
        const to = await oweAssociations(client, subjects, [], async () => list);
        for (const id of to) owed.add(id);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
    }
  } finally {
    client.release();
  }
  return [...owed];
}
