import type { Queryable } from '@syncline/core';
import type { LinkReason } from './operations';
import { possibleDuplicateIdFor } from './stable-id';

/**
 * Identity's tables written for a decision made outside the resolver: a record the sync stage
 * learned to be an entity's (a provider refused to create the entity because the record holds
 * its unique value), and a pair put up for review on the same evidence.
 */

export interface RecordRef {
  workspaceId: string;
  connectionId: string;
  entityType: string;
  externalId: string;
}

/** The entity a record is linked to, if any. */
export async function linkedEntityOf(tx: Queryable, record: RecordRef): Promise<string | undefined> {
  const { rows } = await tx.query<{ entity_id: string }>(
    `SELECT entity_id::text FROM source_link WHERE connection_id = $1 AND entity_type = $2 AND external_id = $3`,
    [record.connectionId, record.entityType, record.externalId],
  );
  return rows[0]?.entity_id;
}

/**
 * Links the record to the entity unless it is linked already (or the entity is gone). Returns
 * whether this call made the link.
 */
export async function linkRecordOnce(
  tx: Queryable,
  record: RecordRef,
  entityId: string,
  reason: LinkReason,
): Promise<boolean> {
  const { rowCount } = await tx.query(
    `INSERT INTO source_link (workspace_id, connection_id, entity_type, external_id, entity_id, link_reason)
     SELECT $1, $2, $3, $4, e.id, $6 FROM entity e WHERE e.id = $5 AND e.workspace_id = $1
     ON CONFLICT DO NOTHING`,
    [
      record.workspaceId,
      record.connectionId,
      record.entityType,
      record.externalId,
      entityId,
      JSON.stringify(reason),
    ],
  );
  return (rowCount ?? 0) > 0;
}

/** Puts two entities up for review (once per pair; a pair reviewed already stays as it was). */
export async function proposePossibleDuplicate(
  tx: Queryable,
  pair: { workspaceId: string; entityType: string; entityA: string; entityB: string },
  evidence: readonly string[],
  score = 1,
): Promise<void> {
  await tx.query(
    `INSERT INTO possible_duplicate (id, workspace_id, entity_type, entity_a, entity_b, score, evidence)
     VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (id) DO NOTHING`,
    [
      possibleDuplicateIdFor(pair.entityA, pair.entityB),
      pair.workspaceId,
      pair.entityType,
      pair.entityA,
      pair.entityB,
      score,
      JSON.stringify(evidence),
    ],
  );
}
