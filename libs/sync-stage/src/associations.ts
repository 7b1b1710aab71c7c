import type { EntityType, Queryable } from '@syncline/core';
import type { IdentityService } from '@syncline/identity';

/** The activity types that have participants, and the roles they carry. */
export const ACTIVITY_TYPES = ['meeting', 'email_activity'] as const satisfies readonly EntityType[];

/** One address of an activity in one role, before it is resolved to a person. */
export interface ActivityParty {
  role: 'organizer' | 'attendee' | 'from' | 'to' | 'cc' | 'bcc';
  address: unknown;
}

const list = (value: unknown): unknown[] =>
  value === undefined || value === null ? [] : Array.isArray(value) ? value : [value];

/** The time an activity happened: a meeting's start, a mail's sentAt (else occurredAt). */
export function occurredAtOf(entityType: EntityType, values: Record<string, unknown>): Date | undefined {
  const candidates = entityType === 'meeting' ? [values.startAt] : [values.sentAt, values.occurredAt];
  for (const value of candidates) {
    if (typeof value !== 'string') continue;
    const at = Date.parse(value);
    if (!Number.isNaN(at)) return new Date(at);
  }
  return undefined;
}

/**
 * The parties of an activity's merged view. Google lists the organizer among the attendees
 * (`organizer: true`): that entry counts as organizer only, so "attendee" means invited.
 */
export function partiesOf(entityType: EntityType, values: Record<string, unknown>): ActivityParty[] {
  if (entityType === 'meeting')
    return [
      ...list(values.organizer).map((address) => ({ role: 'organizer' as const, address })),
      ...list(values.attendees).map((address) => ({
        role:
          typeof address === 'object' &&
          address !== null &&
          (address as { organizer?: unknown }).organizer === true
            ? ('organizer' as const)
            : ('attendee' as const),
        address,
      })),
    ];
  if (entityType === 'email_activity')
    return (['from', 'to', 'cc', 'bcc'] as const).flatMap((role) =>
      list(values[role]).map((address) => ({ role, address })),
    );
  return [];
}

/** An activity of the batch as the sync stage left it. */
export interface ActivityState {
  entityId: string;
  workspaceId: string;
  entityType: EntityType;
  /** Its merged view. */
  values: Record<string, unknown>;
  /** Merged into another activity: the survivor's rows carry it now. */
  frozen: boolean;
}

interface AssociationRow {
  workspace_id: string;
  activity_id: string;
  activity_type: string;
  role: string;
  email: string;
  party_id: string | null;
  occurred_at: string;
}

/**
 * Rewrites the associations of the batch's activities from their merged views, in the sync
 * stage's transaction: rows the view no longer has are deleted, the others upserted by
 * (activity, role, address) and only touched when they differ, so a replay of the same
 * events leaves every row as it was. An activity merged into another, deleted in every
 * source that had it (no source link left) or without a time (a timeline cannot place it)
 * has no rows.
 */
export async function writeAssociations(
  tx: Queryable,
  identity: IdentityService,
  activities: readonly ActivityState[],
): Promise<void> {
  const ofType = activities.filter((a) => (ACTIVITY_TYPES as readonly string[]).includes(a.entityType));
  if (ofType.length === 0) return;
  const { rows: linked } = await tx.query<{ entity_id: string }>(
    'SELECT DISTINCT entity_id::text AS entity_id FROM source_link WHERE entity_id = ANY($1::uuid[])',
    [ofType.map((a) => a.entityId)],
  );
  const held = new Set(linked.map((r) => r.entity_id));
  const rows: AssociationRow[] = [];
  for (const activity of ofType) {
    if (activity.frozen || !held.has(activity.entityId)) continue;
    const at = occurredAtOf(activity.entityType, activity.values);
    if (at === undefined) continue;
    const parties = partiesOf(activity.entityType, activity.values);
    // One lookup for all of the activity's addresses, not one per party.
    const people = new Map(
      (
        await identity.peopleByEmail(
          tx,
          activity.workspaceId,
          parties.map((p) => p.address),
        )
      ).map((p) => [p.email, p.personId]),
    );
    const seen = new Set<string>();
    for (const party of parties) {
      const email = identity.emailOf(activity.workspaceId, party.address);
      if (email === undefined) continue;
      const key = `${party.role}|${email}`;
      if (seen.has(key)) continue;
      seen.add(key);
      rows.push({
        workspace_id: activity.workspaceId,
        activity_id: activity.entityId,
        activity_type: activity.entityType,
        role: party.role,
        email,
        party_id: people.get(email) ?? null,
        occurred_at: at.toISOString(),
      });
    }
  }
  await tx.query(
    `DELETE FROM entity_association a
      WHERE a.activity_id = ANY($1::uuid[])
        AND NOT (a.role || '|' || a.email = ANY(
              SELECT r.role || '|' || r.email FROM jsonb_to_recordset($2::jsonb) AS r(activity_id uuid, role text, email text)
               WHERE r.activity_id = a.activity_id))`,
    [ofType.map((a) => a.entityId), JSON.stringify(rows)],
  );
  if (rows.length === 0) return;
  await tx.query(
    `INSERT INTO entity_association (workspace_id, activity_id, activity_type, role, email, party_id, occurred_at)
     SELECT workspace_id, activity_id, activity_type, role, email, party_id, occurred_at
       FROM jsonb_to_recordset($1::jsonb) AS r(workspace_id uuid, activity_id uuid, activity_type text, role text,
            email text, party_id uuid, occurred_at timestamptz)
     ON CONFLICT (activity_id, role, email) DO UPDATE
        SET activity_type = EXCLUDED.activity_type, party_id = EXCLUDED.party_id, occurred_at = EXCLUDED.occurred_at
      WHERE (entity_association.activity_type, entity_association.party_id, entity_association.occurred_at)
            IS DISTINCT FROM (EXCLUDED.activity_type, EXCLUDED.party_id, EXCLUDED.occurred_at)`,
    [JSON.stringify(rows)],
  );
}

/**
 * Addresses no person had when their activity was written are given to the batch's people
 * that now hold them (a contact read after the mail, under `bare-address` participants).
 */
export async function claimBareAddresses(tx: Queryable, personIds: readonly string[]): Promise<void> {
  if (personIds.length === 0) return;
  await tx.query(
    `UPDATE entity_association a SET party_id = COALESCE(e.merged_into, e.id)
       FROM match_key m JOIN entity e ON e.id = m.entity_id
      WHERE a.party_id IS NULL AND m.entity_id = ANY($1::uuid[]) AND m.entity_type = 'person'
        AND m.kind = 'email' AND a.workspace_id = m.workspace_id AND a.email = m.value`,
    [personIds],
  );
}
