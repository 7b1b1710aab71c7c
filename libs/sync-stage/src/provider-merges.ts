import type { EntityType } from '@syncline/core';
import type { LogTransaction } from '@syncline/log';
import type { TargetConnection } from './connections';
import { foldArchiveKey, foldedKeySql, latestCreateSql, providerMergeKey } from './idempotency-key';
import type { AppliedOperation } from './identity-operations';
import type { OutboxRow } from './outbox/outbox-row';
import { canMergeIn } from './writeback-rules';

/** What a merge folds: the moved connections left with only the absorbed entity's record, and the writes owed. */
export interface Folds {
  connections: string[];
  folded: OutboxRow[];
}

/**
 * After a merge a connection may hold two records of the survivor: its own and the one it
 * had of the absorbed entity. When one of the two is a copy we created there (the other
 * entity's record written to it: a receipt of our create), the copy is unlinked and
 * archived in the provider, and the connection goes on with the record it had of its own
 * (of the survivor, or of the absorbed entity, whose view the survivor then takes over).
 * The create rows of archived copies are set aside, so an unmerge can create the copy again.
 *
 * When both are the provider's own records (one each, neither made by us) and the provider
 * merges records itself (HubSpot), the connection is owed that merge: the absorbed entity's
 * record is folded into the survivor's own one, which stays the survivor's record there and
 * is owed the union like any other. The record merged away is folded at once, before the
 * provider confirms: it is about to be gone, so nothing is written to it from here on, and
 * its late reports (notifications, the provider's own merge notice, a delete) are nobody's
 * news. Elsewhere (Google, say) two records a person made in one system both stay linked.
 *
 * Folded records stay linked, to the absorbed entity and listed in its `flags.folded` (a
 * provider merge in `flags.providerMerged` too, record → the record it went into), so that
 * an unmerge finds them (see applyIdentityOperation). Returns the moved connections that now
 * carry only the absorbed entity's record, and the archive and merge writes.
 */
export async function foldMirrors(
  tx: LogTransaction,
  op: AppliedOperation,
  connectionsOf: () => Promise<readonly TargetConnection[]>,
  options: { providerMerges?: boolean },
): Promise<Folds> {
  const moved = op.links;
  const { rows } = await tx.query<{
    connection_id: string;
    entity_type: EntityType;
    external_id: string;
    moved: boolean;
    created_for: string | null;
    created_key: string | null;
  }>(
    `SELECT l.connection_id, l.entity_type, l.external_id,
            (l.connection_id, l.entity_type, l.external_id) IN (
              SELECT * FROM unnest($2::uuid[], $3::text[], $4::text[])) AS moved,
            created.entity_id::text AS created_for, created.idempotency_key AS created_key
       FROM source_link l
       ${latestCreateSql('l')}
      WHERE l.entity_id = $1 AND l.connection_id = ANY($2::uuid[])
      ORDER BY l.connection_id, l.external_id`,
    [
      op.survivorId,
      moved.map((l) => l.connectionId),
      moved.map((l) => l.entityType),
      moved.map((l) => l.externalId),
    ],
  );
  const providers = new Map((await connectionsOf()).map((c) => [c.id, c.provider] as const));
  const connections: string[] = [];
  const dropped: { connectionId: string; entityType: EntityType; externalId: string; createKey: string }[] =
    [];
  const merged: { connectionId: string; entityType: EntityType; externalId: string; into: string }[] = [];
  for (const connectionId of [...new Set(rows.map((r) => r.connection_id))]) {
    const links = rows.filter((r) => r.connection_id === connectionId);
    const own = links.filter((r) => !r.moved);
    const theirs = links.filter((r) => r.moved);
    const drop = (list: typeof links) =>
      dropped.push(
        ...list.map((r) => ({
          connectionId,
          entityType: r.entity_type,
          externalId: r.external_id,
          createKey: r.created_key ?? '',
        })),
      );
    const provider = providers.get(connectionId);
    const [mine, other] = [own[0], theirs[0]];
    if (own.length === 0) connections.push(connectionId);
    else if (theirs.every((r) => r.created_for === op.absorbedId)) drop(theirs);
    else if (own.every((r) => r.created_for === op.survivorId)) {
      drop(own);
      connections.push(connectionId);
    } else if (
      own.length === 1 &&
      theirs.length === 1 &&
      mine?.created_for === null &&
      other?.created_for === null &&
      provider !== undefined &&
      canMergeIn(provider, op.entityType) &&
      // Identity's own join asks no provider to merge: both records stay linked.
      op.joined !== true
    )
      merged.push({
        connectionId,
        entityType: other.entity_type,
        externalId: other.external_id,
        into: mine.external_id,
      });
  }
  const folds = [...dropped, ...merged];
  if (folds.length === 0) return { connections, folded: [] };
  // The copy stays linked, to the absorbed entity and marked folded: its late reports (the
  // notifications of our create, its archive) then find a link, so neither identity nor an
  // echo of our id links it anew, and the merge stage leaves them be (entitiesOf).
  const keyOf = (d: { connectionId: string; entityType: string; externalId: string }) =>
    `${d.connectionId}|${d.entityType}|${d.externalId}`;
  await tx.query(
    `UPDATE source_link SET entity_id = $4 WHERE (connection_id, entity_type, external_id) IN (
       SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[]))`,
    [
      folds.map((d) => d.connectionId),
      folds.map((d) => d.entityType),
      folds.map((d) => d.externalId),
      op.absorbedId,
    ],
  );
  await tx.query(
    `UPDATE entity SET flags = jsonb_set(
              jsonb_set(flags, '{folded}', COALESCE(flags->'folded', '[]'::jsonb) || $2::jsonb),
              '{providerMerged}', COALESCE(flags->'providerMerged', '{}'::jsonb) || $3::jsonb)
      WHERE id = $1`,
    [
      op.absorbedId,
      JSON.stringify(folds.map(keyOf)),
      JSON.stringify(Object.fromEntries(merged.map((m) => [keyOf(m), m.into]))),
    ],
  );
  if (dropped.length > 0)
    await tx.query(
      `UPDATE outbox SET idempotency_key = ${foldedKeySql('idempotency_key', '$3')}
        WHERE (connection_id, idempotency_key) IN (SELECT * FROM unnest($1::uuid[], $2::text[]))`,
      [dropped.map((d) => d.connectionId), dropped.map((d) => d.createKey), op.operationId],
    );
  // Under the absorbed entity, whose one link in the connection is the folded record: the write
  // goes there alone (never coalesced with the survivor's update of the record it keeps).
  const archives: OutboxRow[] = dropped.map((d) => ({
    workspace_id: op.workspaceId,
    entity_id: op.absorbedId,
    entity_type: d.entityType,
    connection_id: d.connectionId,
    op: 'delete',
    external_id: d.externalId,
    fields: {},
    prior: {},
    heads: [],
    idempotency_key: foldArchiveKey(op.absorbedId, d.connectionId, op.operationId, d.externalId),
  }));
  // One merge per operation and record, whatever retries or replays meet it again.
  const merges: OutboxRow[] =
    options.providerMerges === false
      ? []
      : merged.map((m) => ({
          workspace_id: op.workspaceId,
          entity_id: op.absorbedId,
          entity_type: m.entityType,
          connection_id: m.connectionId,
          op: 'merge',
          external_id: m.into,
          fields: { mergedExternalId: m.externalId },
          prior: {},
          heads: [],
          idempotency_key: providerMergeKey(op.absorbedId, m.connectionId, op.operationId, m.externalId),
        }));
  return { connections, folded: [...archives, ...merges] };
}

/**
 * An unmerge meets the records the merge had the provider merge (foldMirrors). HubSpot cannot
 * undo a merge: where ours was sent, the split-off entity's record there is gone (its id
 * answers as the survivor's record), so it stays folded, is unlinked with the folded copies,
 * and the entity is owed a new record in that connection, made with its own values by the
 * normal create path: `flags.recreateIn` lets the create through where a person, company or
 * deal is otherwise created only from another CRM (canCreateIn), and tells the push to key
 * it on our id, never on an address the survivor's record took over in the merge. Where the
 * merge was still waiting it is called off (and where it was refused, nothing happened):
 * the record comes back linked to the split-off entity, as it was.
 */
export async function undoProviderMerges(tx: LogTransaction, op: AppliedOperation): Promise<void> {
  const { rows } = await tx.query<{ key: string }>(
    `SELECT jsonb_object_keys(flags->'providerMerged') AS key FROM entity
      WHERE id = $1 AND jsonb_typeof(flags->'providerMerged') = 'object'`,
    [op.absorbedId],
  );
  if (rows.length === 0) return;
  const records = rows.map(({ key }) => {
    const [connectionId = '', , ...rest] = key.split('|');
    const outboxKey = providerMergeKey(op.absorbedId, connectionId, op.undoes ?? '', rest.join('|'));
    return { key, connectionId, outboxKey };
  });
  await tx.query(
    `UPDATE outbox SET status = 'superseded', last_error = 'called off by unmerge ' || $3
      WHERE (connection_id, idempotency_key) IN (SELECT * FROM unnest($1::uuid[], $2::text[]))
        AND status = 'pending'`,
    [records.map((r) => r.connectionId), records.map((r) => r.outboxKey), op.operationId],
  );
  // Sent, or on its way (a pusher holds it): the provider has merged, or is merging, the record.
  const { rows: sent } = await tx.query<{ connection_id: string; idempotency_key: string }>(
    `SELECT connection_id::text AS connection_id, idempotency_key FROM outbox
      WHERE (connection_id, idempotency_key) IN (SELECT * FROM unnest($1::uuid[], $2::text[]))
        AND status IN ('sent', 'sending')`,
    [records.map((r) => r.connectionId), records.map((r) => r.outboxKey)],
  );
  const merged = new Set(sent.map((r) => `${r.connection_id}|${r.idempotency_key}`));
  const gone = records.filter((r) => merged.has(`${r.connectionId}|${r.outboxKey}`));
  const back = records.filter((r) => !merged.has(`${r.connectionId}|${r.outboxKey}`));
  await tx.query(
    `UPDATE entity SET flags = jsonb_set(
              jsonb_set(flags - 'providerMerged', '{folded}', COALESCE(
                (SELECT jsonb_agg(k) FROM jsonb_array_elements_text(flags->'folded') AS k
                  WHERE NOT k = ANY($2::text[])), '[]'::jsonb)),
              '{recreateIn}', COALESCE(flags->'recreateIn', '[]'::jsonb) || $3::jsonb)
      WHERE id = $1`,
    [op.absorbedId, back.map((r) => r.key), JSON.stringify([...new Set(gone.map((r) => r.connectionId))])],
  );
}
