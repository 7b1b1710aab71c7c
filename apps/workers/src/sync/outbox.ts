import type { EntityType } from '@syncline/core';

/** An outbox row as the push job claims it. */
export interface OutboxRow {
  id: string;
  workspace_id: string;
  entity_id: string;
  entity_type: EntityType;
  op: 'create' | 'update' | 'delete';
  external_id: string | null;
  fields: Record<string, unknown>;
  /** What the target held of these fields when the row was written (never-held fields absent). */
  prior: Record<string, unknown>;
  heads: string[];
  idempotency_key: string;
}

/** One write to send: every pending row of one target record, folded in order. */
export interface CoalescedWrite {
  entityId: string;
  workspaceId: string;
  entityType: EntityType;
  op: 'create' | 'update' | 'delete';
  externalId: string | null;
  fields: Record<string, unknown>;
  /** What the target held of these fields before the first of the folded rows. */
  prior: Record<string, unknown>;
  heads: string[];
  idempotencyKey: string;
  rowIds: string[];
  /** The target record's version as last seen: the write applies only if it is still current. */
  expectedVersion?: string;
}

/**
 * Folds a connection's claimed rows (in id order) into one write per target record: later
 * values win field by field, a delete wins over everything before it, and a record that has
 * a link by now is updated instead of created (`linked` is the target's current external id
 * per entity). Rows that no longer lead anywhere (an update of a record no longer linked)
 * come back in `dropped`.
 */
export function coalesce(
  rows: readonly OutboxRow[],
  linked: ReadonlyMap<string, string>,
): { writes: CoalescedWrite[]; dropped: string[] } {
  const byEntity = new Map<string, CoalescedWrite>();
  for (const row of rows) {
    const current = byEntity.get(row.entity_id);
    if (current === undefined || row.op === 'delete' || current.op === 'delete') {
      byEntity.set(row.entity_id, {
        entityId: row.entity_id,
        workspaceId: row.workspace_id,
        entityType: row.entity_type,
        op: row.op,
        externalId: row.external_id,
        fields: { ...row.fields },
        prior: { ...row.prior },
        heads: row.heads,
        idempotencyKey: row.idempotency_key,
        rowIds: [...(current?.rowIds ?? []), row.id],
      });
      continue;
    }
    // What the target held before the first write of a field, not before a later one.
    for (const field of Object.keys(row.fields))
      if (!Object.hasOwn(current.fields, field) && Object.hasOwn(row.prior, field))
        current.prior[field] = row.prior[field];
    current.fields = { ...current.fields, ...row.fields };
    current.heads = row.heads;
    current.rowIds.push(row.id);
    // A create keeps its per-entity key; an update takes the latest row's key.
    if (current.op === 'create' && row.op === 'create') current.idempotencyKey = row.idempotency_key;
    if (current.op === 'update') {
      current.idempotencyKey = row.idempotency_key;
      if (row.op === 'create') current.op = 'create';
    }
  }
  const writes: CoalescedWrite[] = [];
  const dropped: string[] = [];
  for (const write of byEntity.values()) {
    const externalId = linked.get(write.entityId);
    if (write.op === 'create' && externalId !== undefined) {
      write.op = 'update';
      write.externalId = externalId;
      write.idempotencyKey = `${write.idempotencyKey}.as-update.${write.heads.join('').slice(0, 16)}`;
    } else if (write.op !== 'create') {
      if (externalId === undefined && write.op === 'update') {
        dropped.push(...write.rowIds);
        continue;
      }
      write.externalId = externalId ?? write.externalId;
    }
    writes.push(write);
  }
  return { writes, dropped };
}
