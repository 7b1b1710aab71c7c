import type { EntityType, Queryable, SourceChangeInput } from '@syncline/core';
import { linkedEntityOf, linkRecordOnce, proposePossibleDuplicate, toMatchRecord } from '@syncline/identity';
import type { LogEvent } from '@syncline/log';
import { z } from 'zod';

/** The rule a link made from a provider's "already exists" refusal is recorded under. */
export const EXISTING_RECORD_RULE = 'provider-existing-record';

/**
 * The deterministic keys a provider also holds unique (HubSpot: a contact's address, a company's
 * domain where the portal says so): one shared with the record the provider named is as good as
 * the record itself telling us it is the entity's.
 */
const UNIQUE_KINDS: Partial<Record<EntityType, readonly string[]>> = {
  person: ['email'],
  company: ['domain'],
};

const uniqueKeys = (entityType: EntityType, fields: Record<string, unknown>): string[] => {
  const kinds = UNIQUE_KINDS[entityType] ?? [];
  return toMatchRecord(entityType, fields).keys.filter((k) => kinds.includes(k.slice(0, k.indexOf(':'))));
};

/**
 * Whether an entity's values (`owner`) hold one of the unique values a write carries: a record
 * of that entity holding it is holding its own, not a value on its way out.
 */
export const holdsUniqueValueOf = (
  entityType: EntityType,
  write: Record<string, unknown>,
  owner: Record<string, unknown>,
): boolean => {
  const theirs = new Set(uniqueKeys(entityType, owner));
  return uniqueKeys(entityType, write).some((k) => theirs.has(k));
};

/** What becomes of a create the provider refused because `existing` already holds its unique value. */
export type ExistingRecordDecision =
  /** The record is linked to the write's entity already: the create is done. */
  | { kind: 'linked-already' }
  /** Link the record to the write's entity, for these shared keys. */
  | { kind: 'link'; evidence: string[] }
  /** The record is another entity's: the two are put up for review. */
  | { kind: 'review'; otherEntityId: string; evidence: string[] }
  /** Linked nowhere and no key agrees: left to identity, when the record's own change arrives. */
  | { kind: 'unresolved'; evidence: string[] };

/**
 * Decides on a record the provider named when it refused to create the write's entity there
 * (see ConnectorError.existing). Evidence is the keys both hold: the unique kinds above (normalised
 * by identity's own rules) and our entity id, where the record carries it (`syncline_id`: a record
 * an earlier create of this entity made).
 *
 * | the record is linked to | a key agrees | decision        |
 * |-------------------------|--------------|-----------------|
 * | the write's entity      | either       | linked-already  |
 * | another entity          | either       | review the pair |
 * | nothing                 | yes          | link            |
 * | nothing                 | no           | unresolved      |
 */
export function judgeExistingRecord(
  write: { entityId: string; entityType: EntityType; fields: Record<string, unknown> },
  existing: { fields?: Record<string, unknown> | undefined; origin?: Record<string, unknown> | undefined },
  linkedTo: string | undefined,
): ExistingRecordDecision {
  const ours = uniqueKeys(write.entityType, write.fields);
  const theirs = new Set(uniqueKeys(write.entityType, existing.fields ?? {}));
  const shared = ours.filter((k) => theirs.has(k));
  const tagged = existing.origin?.synclineId ?? existing.origin?.synclineEntityId;
  if (typeof tagged === 'string' && tagged.toLowerCase() === write.entityId.toLowerCase())
    shared.push(`syncline_id:${write.entityId}`);
  if (linkedTo === write.entityId) return { kind: 'linked-already' };
  const refused = ['provider-refused-create', ...(shared.length > 0 ? shared : ours)];
  if (linkedTo !== undefined) return { kind: 'review', otherEntityId: linkedTo, evidence: refused };
  return shared.length > 0 ? { kind: 'link', evidence: shared } : { kind: 'unresolved', evidence: refused };
}

/** The field of an `existing` event's `fields` that carries the refused create. */
export const REFUSED_FIELD = 'refused';

const values = z.record(z.string(), z.unknown());

const refusedSchema = z.strictObject({
  idempotencyKey: z.string().min(1).max(400),
  entityId: z.uuid(),
  /** What the create carried. */
  fields: values,
  /** The provider's answer, as the outbox keeps it. */
  refusal: z.string().max(2_000),
  /** The record the provider named, as it reported it. */
  record: z.strictObject({ fields: values, origin: values.optional() }),
  refusedAt: z.iso.datetime({ offset: true }).transform((v) => new Date(v)),
});

export type RefusedCreate = z.input<typeof refusedSchema>;

/**
 * The `existing` event of a create the provider refused because `record` (one of its own, on
 * whose partition the event goes) holds the create's unique value. Keyed by the refusal's
 * time too: a create refused again (owed again since) is judged again on the links then.
 */
export function refusedCreateChange(
  target: { workspaceId: string; connectionId: string; entityType: EntityType; externalId: string },
  refused: RefusedCreate,
): SourceChangeInput {
  return {
    ...target,
    op: 'existing',
    eventKey: `existing:${target.connectionId}:${refused.idempotencyKey}:${target.externalId}:${Date.parse(refused.refusedAt)}`,
    eventTime: refused.refusedAt,
    fields: { [REFUSED_FIELD]: refused },
  };
}

/**
 * Folds an `existing` event: judges the record on its link at this place in the log
 * (judgeExistingRecord) and settles the refused create's outbox rows on the decision:
 * - linked (now or already): the rows are done (`sent`: nothing was written, so no receipt),
 *   and associations that waited for the entity's record in the connection are owed;
 * - another entity's: the pair is put up for review, the rows set aside;
 * - linked nowhere, no key agreeing: the rows set aside; identity links the record when its
 *   own change (appended after this event) is merged.
 * A set-aside row is owed again once the entity changes. The pusher sets the rows aside itself
 * once the event is on the log, only those still `sending`: folded first, the decision stands;
 * folded after, it settles the row the pusher set aside. The row (one per create key) is waited
 * for, not skipped: the pusher's statement is short and waits on nothing the stage holds.
 * Returns the connections owed a push.
 */
export async function foldRefusedCreate(tx: Queryable, event: LogEvent): Promise<string[]> {
  const parsed = refusedSchema.safeParse(event.fields[REFUSED_FIELD]);
  if (!parsed.success) throw new Error(`malformed existing event ${event.eventKey}: ${parsed.error.message}`);
  const refused = parsed.data;
  const record = {
    workspaceId: event.workspaceId,
    connectionId: event.connectionId,
    entityType: event.entityType,
    externalId: event.externalId,
  };
  const write = { entityId: refused.entityId, entityType: event.entityType, fields: refused.fields };
  let decision = judgeExistingRecord(write, refused.record, await linkedEntityOf(tx, record));
  if (decision.kind === 'link') {
    const reason = { rule: EXISTING_RECORD_RULE, evidence: decision.evidence, score: 1 };
    if (!(await linkRecordOnce(tx, record, refused.entityId, reason))) {
      // Linked meanwhile: decided on that link. Still linked nowhere: the entity is gone (erased
      // meanwhile), so nothing is linked and nothing owed to it.
      decision = judgeExistingRecord(write, refused.record, await linkedEntityOf(tx, record));
      if (decision.kind === 'link') return [];
    }
  }
  if (decision.kind === 'review')
    await proposePossibleDuplicate(
      tx,
      {
        workspaceId: event.workspaceId,
        entityType: event.entityType,
        entityA: refused.entityId,
        entityB: decision.otherEntityId,
      },
      decision.evidence,
    );
  const linked = decision.kind === 'link' || decision.kind === 'linked-already';
  const note =
    decision.kind === 'review'
      ? `linked to entity ${decision.otherEntityId}: put up for review`
      : linked
        ? 'linked to that record'
        : 'linked nowhere, no key agrees: left to identity';
  await tx.query(
    `UPDATE outbox o
        SET status = CASE WHEN $4 THEN 'sent' ELSE 'superseded' END,
            sent_at = CASE WHEN $4 THEN COALESCE(o.sent_at, $5) ELSE o.sent_at END,
            claimed_at = CASE WHEN $4 THEN o.claimed_at END, last_error = $3
      WHERE o.connection_id = $1 AND o.idempotency_key = $2 AND o.status IN ('pending', 'sending', 'superseded')`,
    [event.connectionId, refused.idempotencyKey, `${refused.refusal} (${note})`, linked, refused.refusedAt],
  );
  if (!linked) return [];
  const { rows } = await tx.query<{ connection_id: string }>(
    `UPDATE outbox SET status = 'pending', claimed_at = NULL
      WHERE connection_id = $1 AND status = 'waiting' AND (entity_id = $2 OR fields->>'toId' = $2::text)
      RETURNING connection_id::text`,
    [event.connectionId, refused.entityId],
  );
  return rows.length > 0 ? [event.connectionId] : [];
}
