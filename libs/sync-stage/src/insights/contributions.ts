import type { EntityType, Queryable } from '@syncline/core';
import type { IdentityService } from '@syncline/identity';
import {
  type ActivityDiff,
  type ActivityKind,
  type Contribution,
  contributionDiffs,
  contributionsOf,
  personId,
} from '@syncline/insights';
import { ACTIVITY_TYPES } from '../associations';

/** An activity the batch left, as the sync stage holds it (its merged view). */
export interface ActivityAfter {
  entityId: string;
  workspaceId: string;
  entityType: EntityType;
  values: Record<string, unknown>;
  /** The connection whose event made this version, where the batch had one. */
  connectionId: string | undefined;
}

/** A row of activity_contribution: one activity's contribution to one record. */
export interface StoredRow {
  activity_id: string;
  entity_id: string;
  kind: ActivityKind;
  event_time: Date;
  thread_id: string | null;
  connection_id: string;
  workspace_id: string;
}

const isActivity = (type: string): type is 'meeting' | 'email_activity' =>
  (ACTIVITY_TYPES as readonly string[]).includes(type);

/**
 * What the batch changed in what activities count for, as ±1 diffs per workspace, in the
 * sync stage's transaction and after its associations are written. Each activity's new
 * contributions are computed from its merged view and its parties as `entity_association`
 * holds them now (a party through the person it was merged into); the old ones are those
 * stored the last time (activity_contribution), which are then replaced. So the diffs take
 * the windows from one version of an activity to the next whatever happened between: an
 * edit, a delete, a cancel, a merge of the activity or of one of its people.
 *
 * An activity counts for its people (contributionsOf) and, once, for each company and deal of
 * theirs (entity_relation).
 *
 * `activities` are the batch's activities; `movedPeople` are people a merge, unmerge or claim
 * of a bare address moved, or whose companies or deals changed: their activities are
 * recounted too, their views read back.
 * `ours` gives each workspace's own addresses (its connections' accounts), which count for
 * nothing.
 */
export async function contributionChanges(
  tx: Queryable,
  identity: IdentityService,
  activities: readonly ActivityAfter[],
  movedPeople: readonly string[],
  ours: (workspaceId: string) => Promise<readonly string[]>,
): Promise<ContributionChanges> {
  const byId = new Map<string, ActivityAfter>();
  for (const a of activities) if (isActivity(a.entityType)) byId.set(a.entityId, a);
  const moved = new Set<string>();
  for (const a of await activitiesOf(tx, movedPeople, byId)) {
    byId.set(a.entityId, a);
    moved.add(a.entityId);
  }
  if (byId.size === 0) return { diffs: new Map(), replaced: new Map() };
  const ids = [...byId.keys()].sort();
  const stored = await tx.query<StoredRow>(
    `SELECT activity_id, entity_id, kind, event_time, thread_id, connection_id, workspace_id
       FROM activity_contribution WHERE activity_id = ANY($1::uuid[])`,
    [ids],
  );
  const before = groupBy(stored.rows, (r) => r.activity_id);
  const parties = await partiesOf(tx, ids);
  const gone = await goneFromTheirOwners(tx, ids);
  const ownPeople = new Map<string, Set<string>>();
  // What each activity counts for per person first: their companies and deals are read at once.
  const counted: { id: string; activity: ActivityAfter; connectionId: string; people: Contribution[] }[] = [];
  for (const id of ids) {
    const activity = byId.get(id)!;
    const { workspaceId } = activity;
    let own = ownPeople.get(workspaceId);
    if (own === undefined) {
      own = await peopleOf(tx, identity, workspaceId, await ours(workspaceId));
      ownPeople.set(workspaceId, own);
    }
    const connectionId = activity.connectionId ?? before.get(id)?.[0]?.connection_id;
    // An activity no connection ever reported (none in the batch, none stored) counts for nothing.
    if (connectionId === undefined) continue;
    const people = gone.has(id)
      ? []
      : contributionsOf(
          {
            activityId: id,
            entityType: activity.entityType as 'meeting' | 'email_activity',
            values: activity.values,
            parties: parties.get(id) ?? [],
            sourceConnectionId: connectionId,
          },
          own,
        );
    counted.push({ id, activity, connectionId, people });
  }
  const organisations = await organisationsOf(tx, [
    ...new Set(counted.flatMap((c) => c.people.map((p) => p.person as string))),
  ]);
  const diffs = new Map<string, ActivityDiff[]>();
  const replaced = new Map<string, Set<string>>();
  const changedActivities: string[] = [];
  const rows: StoredRow[] = [];
  for (const { id, activity, connectionId, people } of counted) {
    const old = (before.get(id) ?? []).map(contributionOfRow);
    const now = [...people, ...theirOrganisations(people, organisations)];
    const changed = contributionDiffs(id, old, now, connectionId);
    if (changed.length === 0) continue;
    changedActivities.push(id);
    const { workspaceId } = activity;
    if (moved.has(id)) {
      // Moved between records, not changed: the records it left and joined are replaced whole.
      const ids = replaced.get(workspaceId) ?? new Set<string>();
      for (const d of changed) for (const person of d.personIds) ids.add(person);
      replaced.set(workspaceId, ids);
    } else {
      const list = diffs.get(workspaceId) ?? [];
      list.push(...changed);
      diffs.set(workspaceId, list);
    }
    for (const c of now)
      rows.push({
        activity_id: id,
        entity_id: c.person,
        kind: c.kind,
        event_time: new Date(c.eventTime),
        thread_id: c.threadId ?? null,
        connection_id: connectionId,
        workspace_id: activity.workspaceId,
      });
  }
  await replaceStored(tx, changedActivities, rows);
  return { diffs, replaced };
}

/** The providers whose records are the activity itself, per type: a mailbox's mail, a calendar's meeting. */
const OWNERS = {
  email_activity: ['gmail', 'microsoft-mail'],
  meeting: ['google-calendar', 'microsoft-calendar'],
} as const;

/**
 * Activities deleted where they live: a mail deleted from the mailboxes that held it (Gmail's
 * permanent delete, not its Trash), a meeting deleted from the calendars that held it. They
 * count for nothing, whatever copies the CRMs keep (a CRM's logged copy of a mail is our own
 * write, and a delete there is not followed by default: `unlink`). A mail only a CRM ever
 * held (logged there by hand) counts for as long as it is there. A mail that comes back (a
 * mailbox reports it again, and is linked again) counts again.
 */
async function goneFromTheirOwners(tx: Queryable, ids: readonly string[]): Promise<Set<string>> {
  const { rows } = await tx.query<{ id: string }>(
    `SELECT e.id FROM entity e
       JOIN (VALUES ('email_activity', $2::text[]), ('meeting', $3::text[])) AS o(entity_type, providers)
         ON o.entity_type = e.entity_type
      WHERE e.id = ANY($1::uuid[])
        AND EXISTS (SELECT 1 FROM jsonb_array_elements(COALESCE(e.flags->'deletedIn', '[]'::jsonb)) d
                      JOIN connection c ON c.id::text = d->>'connectionId'
                     WHERE c.provider::text = ANY(o.providers))
        AND NOT EXISTS (SELECT 1 FROM source_link l JOIN connection c ON c.id = l.connection_id
                         WHERE l.entity_id = e.id AND c.provider::text = ANY(o.providers))`,
    [ids, OWNERS.email_activity, OWNERS.meeting],
  );
  return new Set(rows.map((r) => r.id));
}

/** What a batch changed in what activities count for, per workspace. */
export interface ContributionChanges {
  /** ±1 diffs of the batch's own activities (new, edited, deleted, cancelled). */
  diffs: Map<string, ActivityDiff[]>;
  /**
   * Records whose activities moved to or from them (a merge, an unmerge, an address claimed, a
   * new company or deal): no late events, so each is replaced whole from what it counts for now.
   */
  replaced: Map<string, Set<string>>;
}

/**
 * A company or deal counts an activity once if any of its people took part: the people's
 * contributions under the organisation's id, one per (kind, time, thread) however many of its
 * people were there.
 */
function theirOrganisations(
  people: readonly Contribution[],
  organisations: ReadonlyMap<string, readonly string[]>,
): Contribution[] {
  const out = new Map<string, Contribution>();
  for (const c of people)
    for (const org of organisations.get(c.person) ?? []) {
      const key = `${org}|${c.kind}|${c.eventTime}|${c.threadId ?? ''}`;
      if (!out.has(key)) out.set(key, { ...c, person: personId(org) });
    }
  return [...out.values()].sort((a, b) => (a.person < b.person ? -1 : a.person > b.person ? 1 : 0));
}

/** The relation rows between a person and a company or deal, either way round. */
const PERSON_ORGANISATION = `
  SELECT CASE WHEN r.from_type = 'person' THEN r.from_id ELSE r.to_id END AS person,
         CASE WHEN r.from_type = 'person' THEN r.to_id ELSE r.from_id END AS organisation
    FROM entity_relation r
   WHERE (r.from_type = 'person' AND r.to_type IN ('company', 'deal'))
      OR (r.to_type = 'person' AND r.from_type IN ('company', 'deal'))`;

/**
 * Each person's companies and deals (entity_relation: a CRM's associations, a company derived
 * from the address's domain), both ends through the record a merge kept, live ones only.
 */
async function organisationsOf(tx: Queryable, people: readonly string[]): Promise<Map<string, string[]>> {
  if (people.length === 0) return new Map();
  const { rows } = await tx.query<{ person: string; organisation: string }>(
    `SELECT DISTINCT COALESCE(p.merged_into, p.id) AS person, COALESCE(o.merged_into, o.id) AS organisation
       FROM (${PERSON_ORGANISATION}) po
       JOIN entity p ON p.id = po.person
       JOIN entity o ON o.id = po.organisation
      WHERE po.person IN (SELECT id FROM entity WHERE id = ANY($1::uuid[]) OR merged_into = ANY($1::uuid[]))
      ORDER BY 1, 2`,
    [people],
  );
  const out = new Map<string, string[]>();
  for (const r of rows) out.set(r.person, [...(out.get(r.person) ?? []), r.organisation]);
  return out;
}

/**
 * Who works where and on which deals, for the people, companies and deals given: read before
 * and after a batch writes relations, the people whose pairs differ are those whose activities
 * count for other organisations now.
 */
export async function organisationPairs(tx: Queryable, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const { rows } = await tx.query<{ person: string; organisation: string }>(
    `SELECT person, organisation FROM (${PERSON_ORGANISATION}) po
      WHERE po.person = ANY($1::uuid[]) OR po.organisation = ANY($1::uuid[])`,
    [ids],
  );
  return new Set(rows.map((r) => `${r.person}|${r.organisation}`));
}

/** The people of the pairs in one set and not the other. */
export function peopleMoved(before: ReadonlySet<string>, after: ReadonlySet<string>): string[] {
  const people = new Set<string>();
  for (const pair of before) if (!after.has(pair)) people.add(pair.split('|')[0]!);
  for (const pair of after) if (!before.has(pair)) people.add(pair.split('|')[0]!);
  return [...people];
}

/**
 * What the workspace's records count for now, in (record, time) order: every record's, or
 * those of `entityIds`. The windows are folded again from these (a rebuild, a replacement).
 */
export async function storedContributions(
  tx: Queryable,
  workspaceId: string,
  entityIds?: readonly string[],
): Promise<StoredRow[]> {
  const { rows } = await tx.query<StoredRow>(
    `SELECT activity_id, entity_id, kind, event_time, thread_id, connection_id, workspace_id
       FROM activity_contribution
      WHERE workspace_id = $1 AND ($2::uuid[] IS NULL OR entity_id = ANY($2::uuid[]))
      ORDER BY entity_id, event_time, activity_id, kind`,
    [workspaceId, entityIds ?? null],
  );
  return rows;
}

const contributionOfRow = (r: StoredRow): Contribution => ({
  person: personId(r.entity_id),
  kind: r.kind,
  eventTime: r.event_time.getTime(),
  threadId: r.thread_id ?? undefined,
});

export function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = out.get(k);
    if (list === undefined) out.set(k, [item]);
    else list.push(item);
  }
  return out;
}

/** The activities the moved people take part in that the batch did not touch, with their views. */
async function activitiesOf(
  tx: Queryable,
  people: readonly string[],
  known: ReadonlyMap<string, ActivityAfter>,
): Promise<ActivityAfter[]> {
  if (people.length === 0) return [];
  const { rows } = await tx.query<{
    id: string;
    workspace_id: string;
    entity_type: EntityType;
    fields: Record<string, unknown> | null;
  }>(
    `SELECT e.id, e.workspace_id, e.entity_type, e.fields FROM entity e
      WHERE e.id IN (SELECT activity_id FROM entity_association WHERE party_id = ANY($1::uuid[])
                     UNION SELECT activity_id FROM activity_contribution WHERE entity_id = ANY($1::uuid[]))`,
    [people],
  );
  return rows
    .filter((r) => !known.has(r.id))
    .map((r) => ({
      entityId: r.id,
      workspaceId: r.workspace_id,
      entityType: r.entity_type,
      values: r.fields ?? {},
      connectionId: undefined,
    }));
}

/** Each activity's parties with a person, through the person a merge kept. */
async function partiesOf(
  tx: Queryable,
  ids: readonly string[],
): Promise<Map<string, { role: string; personId: string }[]>> {
  const { rows } = await tx.query<{ activity_id: string; role: string; person_id: string }>(
    `SELECT a.activity_id, a.role, COALESCE(e.merged_into, e.id) AS person_id
       FROM entity_association a JOIN entity e ON e.id = a.party_id
      WHERE a.activity_id = ANY($1::uuid[])`,
    [ids],
  );
  const out = new Map<string, { role: string; personId: string }[]>();
  for (const r of groupBy(rows, (row) => row.activity_id))
    out.set(
      r[0],
      r[1].map((row) => ({ role: row.role, personId: row.person_id })),
    );
  return out;
}

/** The people holding the workspace's own addresses. */
async function peopleOf(
  tx: Queryable,
  identity: IdentityService,
  workspaceId: string,
  addresses: readonly string[],
): Promise<Set<string>> {
  if (addresses.length === 0) return new Set();
  const people = await identity.peopleByEmail(tx, workspaceId, addresses);
  return new Set(people.flatMap((p) => (p.personId === null ? [] : [p.personId])));
}

async function replaceStored(
  tx: Queryable,
  activityIds: readonly string[],
  rows: StoredRow[],
): Promise<void> {
  if (activityIds.length === 0) return;
  await tx.query('DELETE FROM activity_contribution WHERE activity_id = ANY($1::uuid[])', [
    [...new Set(activityIds)],
  ]);
  if (rows.length === 0) return;
  await tx.query(
    `INSERT INTO activity_contribution (activity_id, entity_id, kind, event_time, thread_id, connection_id, workspace_id)
     SELECT activity_id, entity_id, kind, event_time, thread_id, connection_id, workspace_id
       FROM jsonb_to_recordset($1::jsonb) AS r(activity_id uuid, entity_id uuid, kind text, event_time timestamptz,
            thread_id text, connection_id uuid, workspace_id uuid)`,
    [JSON.stringify(rows)],
  );
}
