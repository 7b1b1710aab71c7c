import type { EntityType } from '@syncline/core';
import { asUpdateKey } from '../idempotency-key';
import type { ClaimedOutboxRow } from './outbox-row';

/** One write to send: every pending row of one target record, folded in order. */
export interface CoalescedWrite {
  entityId: string;
  workspaceId: string;
  entityType: EntityType;
  op: 'create' | 'update' | 'delete' | 'merge';
  externalId: string | null;
  /** `merge`: the record folded into `externalId`. */
  mergedExternalId?: string;
  /** `create`: the target merged the entity's own record away at our asking (see PushWrite). */
  afterProviderMerge?: boolean;
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
 * come back in `dropped`. A provider merge is a write of its own, sent as it was queued: it
 * names both records itself, and folds into nothing.
 */
export function coalesce(
  rows: readonly ClaimedOutboxRow[],
  linked: ReadonlyMap<string, string>,
): { writes: CoalescedWrite[]; dropped: string[] } {
  const byEntity = new Map<string, CoalescedWrite>();
  for (const row of rows) {
    if (row.op === 'merge') {
      const merged = row.fields.mergedExternalId;
      byEntity.set(`merge:${row.id}`, {
        entityId: row.entity_id,
        workspaceId: row.workspace_id,
        entityType: row.entity_type,
        op: 'merge',
        externalId: row.external_id,
        ...(typeof merged === 'string' ? { mergedExternalId: merged } : {}),
        fields: {},
        prior: {},
        heads: row.heads,
        idempotencyKey: row.idempotency_key,
        rowIds: [row.id],
      });
      continue;
    }
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
        ...(row.after_provider_merge === true ? { afterProviderMerge: true } : {}),
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
    if (row.after_provider_merge === true) current.afterProviderMerge = true;
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
    if (write.op === 'merge') {
      writes.push(write);
      continue;
    }
    const externalId = linked.get(write.entityId);
    if (write.op === 'create' && externalId !== undefined) {
      write.op = 'update';
      write.externalId = externalId;
      write.idempotencyKey = asUpdateKey(write.idempotencyKey, write.heads);
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
