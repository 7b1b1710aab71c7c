import type { MergeOutcome } from '@syncline/conflicts';
import type { EntityType, ProviderKey } from '@syncline/core';
import type { TargetConnection } from './connections';
import { createKey, deleteKey, updateKey } from './idempotency-key';
import type { OutboxRow } from './outbox/outbox-row';
import { belongsIn, canCreateIn, isInvitationCopy, isWritable, writableField } from './writeback-rules';

/** An entity as a batch left it, and where its records stand in the workspace's connections. */
export interface OwingEntity {
  entityId: string;
  workspaceId: string;
  entityType: EntityType;
  /** What its merge came to: its values and heads, and what each connection is owed and holds. */
  outcome: MergeOutcome;
  /** Connections whose record of it this batch deleted. */
  deletedIn: readonly { connectionId: string }[];
  /** Its record in each connection that has one: connection → external id. */
  linked: ReadonlyMap<string, string>;
  /** Connections where its record was ever deleted (`flags.deletedIn`): never created there again. */
  everDeletedIn: ReadonlySet<string>;
  /** Connections where the provider merged its own record away at our asking (`flags.recreateIn`). */
  recreateIn: ReadonlySet<string>;
  /** Connections where an unmerge unlinked the copy we made: connection → that operation (`flags.createAgain`). */
  createAgain: ReadonlyMap<string, string>;
}

/**
 * The writes an entity owes the workspace's connections (`targets`) after a batch, one row per
 * target at most, each carrying everything the target is owed at the entity's heads:
 *
 * | the target                                        | owes                                   |
 * |---------------------------------------------------|----------------------------------------|
 * | cannot write the type, or is disconnected         | nothing                                |
 * | holds a record, the batch deleted one elsewhere    | `delete` unless its policy is `unlink` (or it is the one deleted) |
 * | holds a record                                    | `update` of the fields it is owed and can write, if any |
 * | holds an invitation to a meeting another person organizes (isInvitationCopy) | nothing      |
 * | holds none: not live, not reconciled, or deleted there once | nothing                      |
 * | holds none, may not be created there (canCreateIn) unless recreated | nothing              |
 * | holds none, is another person's calendar or task list (belongsIn) | nothing                 |
 * | holds none                                        | `create` of every non-null value       |
 *
 * Creates wait for the target's reconcile (see OutboxSweep.reconcile): before it, the target's
 * own copy of the record may not be linked yet.
 */
export function owedWrites(entity: OwingEntity, targets: readonly TargetConnection[]): OutboxRow[] {
  const { outcome, linked } = entity;
  const providersLinked = new Set<ProviderKey>();
  for (const c of targets) if (linked.has(c.id)) providersLinked.add(c.provider);
  const rows: OutboxRow[] = [];
  for (const target of targets) {
    if (!isWritable(target.provider, entity.entityType)) continue;
    if (target.status === 'disconnected') continue;
    const externalId = linked.get(target.id);
    const base = {
      workspace_id: entity.workspaceId,
      entity_id: entity.entityId,
      entity_type: entity.entityType,
      connection_id: target.id,
      heads: outcome.heads,
    };
    if (entity.deletedIn.length > 0 && externalId !== undefined) {
      if (target.deletePolicy !== 'unlink' && !entity.deletedIn.some((d) => d.connectionId === target.id))
        rows.push({
          ...base,
          op: 'delete',
          external_id: externalId,
          fields: {},
          prior: {},
          idempotency_key: deleteKey(entity.entityId, target.id),
        });
      continue;
    }
    if (externalId !== undefined) {
      const owed = (outcome.owed.get(target.id) ?? []).filter((f) =>
        writableField(target.provider, entity.entityType, f),
      );
      if (owed.length === 0) continue;
      if (isInvitationCopy(target, entity.entityType, outcome.values)) continue;
      rows.push({
        ...base,
        op: 'update',
        external_id: externalId,
        fields: Object.fromEntries(owed.map((f) => [f, outcome.values[f] ?? null])),
        prior: outcome.held.get(target.id) ?? {},
        idempotency_key: updateKey(entity.entityId, target.id, outcome.heads),
      });
      continue;
    }
    if (target.status !== 'live' || !target.reconciled || entity.everDeletedIn.has(target.id)) continue;
    if (
      !canCreateIn(target.provider, entity.entityType, providersLinked) &&
      !entity.recreateIn.has(target.id)
    )
      continue;
    if (!belongsIn(target, entity.entityType, outcome.values, targets)) continue;
    const fields = Object.fromEntries(
      Object.entries(outcome.values).filter(([, v]) => v !== null && v !== undefined),
    );
    if (Object.keys(fields).length === 0) continue;
    rows.push({
      ...base,
      op: 'create',
      external_id: null,
      fields,
      prior: {},
      idempotency_key: createKey(entity.entityId, target.id, entity.createAgain.get(target.id)),
    });
  }
  return rows;
}
