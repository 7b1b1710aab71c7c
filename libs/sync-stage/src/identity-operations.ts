import type { MergeEngine, PgMergeStore } from '@syncline/conflicts';
import type { EntityType } from '@syncline/core';
import {
  identityOperationOf,
  type MovedLink,
  type OperationPayload,
  providerMergeOf,
  providerMergeOperationId,
} from '@syncline/identity';
import type { LogEvent, LogTransaction } from '@syncline/log';
import { latestCreateSql } from './idempotency-key';
import type { OutboxRow } from './outbox/outbox-row';
import { type Folds, undoProviderMerges } from './provider-merges';
import { seeWritten } from './receipts';
import { type Touched, touchedEntry } from './touched';

/** A merge or unmerge of the batch as the identity stage applied it (its stored payload). */
export interface AppliedOperation {
  kind: 'merge' | 'unmerge';
  operationId: string;
  /** For an unmerge, the merge it undoes. */
  undoes?: string;
  workspaceId: string;
  entityType: EntityType;
  survivorId: string;
  absorbedId: string;
  /** The links the merge moved to the survivor, or the unmerge gave back. */
  links: MovedLink[];
  requestedBy?: string;
  /** Made by identity itself (a record naming both): it never asks a provider to merge. */
  joined?: boolean;
}

export const appliedOf = (payload: OperationPayload): AppliedOperation => {
  const common = {
    operationId: payload.operationId,
    workspaceId: payload.workspaceId,
    entityType: payload.entityType,
    survivorId: payload.survivorId,
    absorbedId: payload.absorbedId,
    ...(payload.requestedBy === undefined ? {} : { requestedBy: payload.requestedBy }),
  };
  return payload.kind === 'merge'
    ? { ...common, kind: 'merge', links: payload.movedLinks, ...(payload.reason ? { joined: true } : {}) }
    : { ...common, kind: 'unmerge', undoes: payload.undoes, links: payload.restoredLinks };
};

/** The batch's merges and unmerges that the identity stage applied (a refused one is not stored). */
export async function identityOperations(
  tx: LogTransaction,
  events: readonly LogEvent[],
): Promise<Map<number, AppliedOperation>> {
  const intents = new Map<number, string>();
  events.forEach((e, i) => {
    if (e.op !== 'merge') return;
    const intent = identityOperationOf(e.op, e.fields);
    // A dismissal moves no entity: identity applied it, nothing follows here.
    if (intent?.kind === 'dismiss') return;
    if (intent !== undefined) intents.set(i, intent.operationId);
    // A provider's merge notice made a merge of ours if identity found two entities to merge.
    else if (providerMergeOf(e.op, e.fields) !== undefined) intents.set(i, providerMergeOperationId(e));
  });
  const out = new Map<number, AppliedOperation>();
  if (intents.size === 0) return out;
  const { rows } = await tx.query<{ id: string; payload: OperationPayload }>(
    'SELECT id, payload FROM identity_operation WHERE id = ANY($1::uuid[])',
    [[...intents.values()]],
  );
  const stored = new Map(rows.map((r) => [r.id, r.payload]));
  for (const [i, operationId] of intents) {
    const payload = stored.get(operationId);
    if (payload !== undefined) out.set(i, appliedOf(payload));
  }
  return out;
}

/**
 * The documents follow a merge of entities: the survivor takes in the absorbed entity's
 * values (EntityDocument.absorb), so every connection now linked to it is owed the union
 * through the outbox below; the absorbed entity's view is saved once more and frozen, its
 * pending writes are dropped (the survivor's carry everything) and its open conflicts
 * close, standing again on the survivor. An unmerge gives back: the split-off entity takes
 * its connections back with the edits they made while merged and is owed to them again,
 * the survivor's document gives back what it took in, and conflicts follow.
 */
export async function applyIdentityOperation(
  tx: LogTransaction,
  engine: MergeEngine,
  store: PgMergeStore,
  event: LogEvent,
  op: AppliedOperation,
  touched: Map<string, Touched>,
  foldWrites: OutboxRow[],
  folds: ReadonlyMap<string, Folds>,
): Promise<void> {
  const ref = (entityId: string) => ({ entityId, workspaceId: op.workspaceId, entityType: op.entityType });
  const survivor = touchedEntry(touched, ref(op.survivorId));
  const absorbed = touchedEntry(touched, ref(op.absorbedId));
  const by = { kind: 'user', id: op.requestedBy ?? (op.joined ? 'identity' : 'identity-review') } as const;
  if (op.kind === 'merge') {
    const { connections, folded } = folds.get(op.operationId) ?? { connections: [], folded: [] };
    await seeWritten(tx, engine, store, ref(op.absorbedId));
    survivor.outcome = await engine.absorb(
      ref(op.survivorId),
      ref(op.absorbedId),
      { operationId: op.operationId, workspaceId: op.workspaceId, at: event.eventTime, connections },
      store,
    );
    absorbed.outcome = await engine.outcome(ref(op.absorbedId), store);
    // A provider merge this operation owes (queued under the absorbed entity) is no such write.
    await tx.query(
      `UPDATE outbox SET status = 'superseded' WHERE entity_id = $1 AND status = 'pending' AND op <> 'merge'`,
      [op.absorbedId],
    );
    await store.flush();
    await tx.query(
      `UPDATE merge_conflict SET status = 'resolved', resolved_by = $2, resolved_at = now(),
              resolution = jsonb_build_object('mergedInto', $3::text)
        WHERE entity_id = $1 AND status = 'open'`,
      [op.absorbedId, `merge:${op.operationId}`, op.survivorId],
    );
    foldWrites.push(...folded);
  } else {
    // A connection that also has a record of the survivor of its own stays with it.
    const { rows: shared } = await tx.query<{ connection_id: string }>(
      'SELECT DISTINCT connection_id FROM source_link WHERE entity_id = $1 AND connection_id = ANY($2::uuid[])',
      [op.survivorId, op.links.map((l) => l.connectionId)],
    );
    const keep = new Set(shared.map((r) => r.connection_id));
    const connections = [...new Set(op.links.map((l) => l.connectionId))].filter((c) => !keep.has(c));
    await undoProviderMerges(tx, op);
    // The copies the merge folded are archived: each entity a copy was made for (the split-off
    // one, or the survivor, whose copy the merge folded in favour of the absorbed entity's own
    // record) is owed a new one, under a create key of its own (`flags.createAgain`), so its
    // receipt is not dropped on the log as a repeat of the first create's. A record folded by
    // the provider's merge was the split-off entity's own.
    const { rows: owners } = await tx.query<{ connection_id: string; entity_id: string }>(
      `WITH folded AS (SELECT flags->'folded' AS keys FROM entity WHERE id = $1),
            unlinked AS (
              DELETE FROM source_link l USING folded f
               WHERE l.entity_id = $1
                 AND f.keys ? (l.connection_id::text || '|' || l.entity_type || '|' || l.external_id)
              RETURNING l.connection_id, l.entity_type, l.external_id)
       SELECT DISTINCT u.connection_id::text, COALESCE(created.entity_id, $1)::text AS entity_id
         FROM unlinked u
         ${latestCreateSql('u')}
        ORDER BY 1, 2`,
      [op.absorbedId],
    );
    await tx.query(`UPDATE entity SET flags = flags - 'folded' WHERE id = $1`, [op.absorbedId]);
    for (const entityId of [...new Set(owners.map((o) => o.entity_id))])
      await tx.query(
        `UPDATE entity SET flags = jsonb_set(flags, '{createAgain}',
                COALESCE(flags->'createAgain', '{}'::jsonb) || $2::jsonb)
          WHERE id = $1`,
        [
          entityId,
          JSON.stringify(
            Object.fromEntries(
              owners.filter((o) => o.entity_id === entityId).map((o) => [o.connection_id, op.operationId]),
            ),
          ),
        ],
      );
    const at = event.eventTime;
    await seeWritten(tx, engine, store, ref(op.survivorId));
    absorbed.outcome = await engine.splitOff(
      ref(op.absorbedId),
      ref(op.survivorId),
      { operationId: op.operationId, connections, by, at },
      store,
    );
    survivor.outcome = await engine.retract(
      ref(op.survivorId),
      { mergeOperationId: op.undoes ?? '', operationId: op.operationId, by, at },
      store,
    );
    await store.flush();
    await tx.query(
      `UPDATE merge_conflict SET status = 'open', resolution = NULL, resolved_by = NULL, resolved_at = NULL
        WHERE entity_id = $1 AND resolved_by = $2`,
      [op.absorbedId, `merge:${op.undoes}`],
    );
    await tx.query(
      `UPDATE merge_conflict SET status = 'resolved', resolved_by = $2, resolved_at = now()
        WHERE entity_id = $1 AND status = 'open' AND NOT (id = ANY($3::uuid[]))`,
      [
        op.survivorId,
        `unmerge:${op.operationId}`,
        await engine.standingConflictIds(ref(op.survivorId), store),
      ],
    );
  }
  // Either side may stand merged into another entity (the absorbed one, or a survivor merged since).
  const { rows: merged } = await tx.query<{ id: string }>(
    'SELECT id FROM entity WHERE id = ANY($1::uuid[]) AND merged_into IS NOT NULL',
    [[op.survivorId, op.absorbedId]],
  );
  const frozen = new Set(merged.map((r) => r.id));
  survivor.frozen = frozen.has(op.survivorId);
  absorbed.frozen = frozen.has(op.absorbedId);
}
