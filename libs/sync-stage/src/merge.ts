import type { MergeEngine, MergeOutcome, PgMergeStore } from '@syncline/conflicts';
import type { LogEvent, LogTransaction } from '@syncline/log';
import { splitEcho } from './echo';
import type { Receipt } from './receipts';
import type { Touched } from './touched';

/** Who made an edit in Syncline (an API key), and the conflict it settles, if any. */
export interface UserEdit {
  userId: string;
  resolves?: string;
}

/** The edit an event carries if it was made in Syncline (origin `{ kind: 'user', userId }`). */
export function userEditOf(event: Pick<LogEvent, 'origin'>): UserEdit | undefined {
  const origin = event.origin;
  if (origin?.kind !== 'user' || typeof origin.userId !== 'string' || origin.userId === '') return undefined;
  return typeof origin.resolves === 'string'
    ? { userId: origin.userId, resolves: origin.resolves }
    : { userId: origin.userId };
}

/**
 * A provider's report of a record of the entity: the receipts of our writes it reflects are
 * applied (the connection's synced heads move to what we wrote; their keys go to `applied`),
 * what it reports is sorted against our writes (splitEcho), and the rest is merged into the
 * entity's document as the connection's change. A delete unlinks the record and is noted on
 * the entry; the target's own delete policies decide what it owes (see owed-writes.ts).
 */
export async function mergeReport(
  tx: LogTransaction,
  engine: MergeEngine,
  store: PgMergeStore,
  entry: Touched,
  event: LogEvent,
  ofRecord: Receipt[],
  applied: string[],
): Promise<void> {
  const { entityId } = entry;
  for (const receipt of ofRecord) {
    if (receipt.applied) continue;
    // A report from before the write (a read or notification that raced it) is merged
    // against what the source held then; a later report applies the receipt.
    if (event.eventTime < receipt.sentAt) break;
    receipt.applied = true;
    applied.push(receipt.key);
    // A write made for another entity (a create that the provider matched to a record
    // linked elsewhere, or an entity since merged) says nothing about this one's heads.
    if (receipt.entityId !== entityId) continue;
    await engine.markSeen(entityId, event.workspaceId, event.connectionId, receipt.heads, store);
  }
  const { fields, echo, held } = splitEcho(event, ofRecord);
  if (event.op === 'delete') {
    entry.deletedIn.push({ connectionId: event.connectionId, at: event.eventTime.toISOString() });
    await tx.query(
      'DELETE FROM source_link WHERE connection_id = $1 AND entity_type = $2 AND external_id = $3',
      [event.connectionId, event.entityType, event.externalId],
    );
    return;
  }
  entry.outcome = await engine.applyInbound(
    {
      entityId,
      workspaceId: event.workspaceId,
      entityType: event.entityType,
      source: { kind: 'connection', id: event.connectionId },
      eventKey: `${event.connectionId}:${event.eventKey}`,
      eventTime: event.eventTime,
      fields,
      fieldTimes: event.fieldTimes,
      ...(echo ? { echo } : {}),
      ...(held ? { held } : {}),
    },
    store,
  );
}

/**
 * A person's edit, made in Syncline: merged at the current heads (they saw the current
 * view), as that person. One that settles an open conflict of the entity resolves it.
 */
export async function applyUserEdit(
  tx: LogTransaction,
  engine: MergeEngine,
  store: PgMergeStore,
  entityId: string,
  event: LogEvent,
  edit: UserEdit,
): Promise<MergeOutcome> {
  const ref = { entityId, workspaceId: event.workspaceId, entityType: event.entityType };
  const eventKey = `${event.connectionId}:${event.eventKey}`;
  if (edit.resolves !== undefined) {
    // Conflicts the batch recorded are read too.
    await store.flush();
    const { rows } = await tx.query<{ field: string }>(
      `SELECT field FROM merge_conflict WHERE id::text = $1 AND entity_id = $2 AND status = 'open'`,
      [edit.resolves, entityId],
    );
    const field = rows[0]?.field;
    if (field !== undefined && Object.hasOwn(event.fields, field))
      return engine.resolveConflict(
        {
          ...ref,
          conflictId: edit.resolves,
          field,
          value: event.fields[field],
          userId: edit.userId,
          at: event.eventTime,
          eventKey,
        },
        store,
      );
  }
  return engine.applyInbound(
    {
      ...ref,
      source: { kind: 'user', id: edit.userId },
      eventKey,
      eventTime: event.eventTime,
      fields: event.fields,
    },
    store,
  );
}
