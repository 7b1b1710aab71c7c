import { type AssociableType, associationsOf, type EntityType } from '@syncline/core';
import { isFreeMailDomain, registrableDomain } from '@syncline/identity';
import type { LogEvent, LogTransaction } from '@syncline/log';

/**
 * Entity-to-entity associations (`entity_relation`), written by the sync stage in the
 * transaction that commits the log offsets, from the batch's events and the state the batch
 * left, so a replay of the same events writes the same rows (see the table's comment in
 * schema.prisma). Three steps, in this order, after identity has linked the batch's records:
 *
 * 1. `writeCarried`: a change that carries its record's associations (ASSOCIATIONS_FIELD)
 *    replaces that record's rows of the types it names; a delete drops the record's rows and
 *    unresolves the rows that point at it.
 * 2. `refreshEnds`: rows whose carrying or associated record is linked to an entity of the
 *    batch take that link's entity: an associated record that arrives later resolves the rows
 *    waiting for it, and a merge or unmerge moves them with the links.
 * 3. `writeDerived`: the batch's people, and the people of the batch's companies' domains,
 *    get a `derived` company by the registrable domain of their addresses while no CRM gives
 *    them one.
 *
 * The `crm` pairs are then written back to the other CRMs (relation-writeback.ts), after the
 * batch's outbox rows; step 1 hands it the pairs whose association a record no longer carries.
 */

/** The entity type of a relation's end as the change log names it, for the row keys. */
const crmKey = (connectionId: string, fromType: string, fromExt: string, toType: string, toExt: string) =>
  `${connectionId}|${fromType}|${fromExt}|${toType}|${toExt}`;

interface CarriedSet {
  workspaceId: string;
  connectionId: string;
  fromType: EntityType;
  fromExternalId: string;
  fromId: string;
  /** The event that carried the sets (`<connection>:<event key>`) and its time: a new row's `since`. */
  since: string;
  sinceAt: string;
  /** Complete sets per type named; other types stay as they are. */
  sets: Partial<Record<AssociableType, string[]>>;
}

/** A resolved pair a connection's record no longer carries (its association was removed there). */
export interface RelationRemoval {
  connectionId: string;
  fromType: string;
  fromId: string;
  toType: string;
  toId: string;
  /** The time of the change that no longer carries it. */
  at: string;
}

/**
 * Step 1. `entityOf[i]` is the entity event i's record is linked to (undefined when none).
 * Of several changes of one record in a batch, the last one's sets stand (log order: the
 * same in a replay). Returns the resolved pairs whose association was removed (a record's
 * delete removes its rows too, but is not an association's removal).
 */
export async function writeCarried(
  tx: LogTransaction,
  events: readonly LogEvent[],
  entityOf: readonly (string | undefined)[],
): Promise<RelationRemoval[]> {
  const carried = new Map<string, CarriedSet>();
  const deleted: { connectionId: string; entityType: string; externalId: string }[] = [];
  events.forEach((event, i) => {
    const recordKey = `${event.connectionId}|${event.entityType}|${event.externalId}`;
    if (event.op === 'delete') {
      carried.delete(recordKey);
      deleted.push(event);
      return;
    }
    const entityId = entityOf[i];
    if (event.op !== 'upsert' || entityId === undefined) return;
    const sets = associationsOf(event.fields);
    if (sets === undefined || Object.keys(sets).length === 0) return;
    const previous = carried.get(recordKey);
    carried.set(recordKey, {
      workspaceId: event.workspaceId,
      connectionId: event.connectionId,
      fromType: event.entityType,
      fromExternalId: event.externalId,
      fromId: entityId,
      since: `${event.connectionId}:${event.eventKey}`,
      sinceAt: event.eventTime.toISOString(),
      sets: { ...previous?.sets, ...sets },
    });
  });
  if (deleted.length > 0) {
    const columns = [
      deleted.map((d) => d.connectionId),
      deleted.map((d) => d.entityType),
      deleted.map((d) => d.externalId),
    ];
    await tx.query(
      `DELETE FROM entity_relation r USING unnest($1::uuid[], $2::text[], $3::text[]) AS t(conn, type, ext)
        WHERE r.kind = 'crm' AND r.connection_id = t.conn AND r.from_type = t.type AND r.from_external_id = t.ext`,
      columns,
    );
    await tx.query(
      `UPDATE entity_relation r SET to_id = NULL FROM unnest($1::uuid[], $2::text[], $3::text[]) AS t(conn, type, ext)
        WHERE r.kind = 'crm' AND r.connection_id = t.conn AND r.to_type = t.type AND r.to_external_id = t.ext
          AND r.to_id IS NOT NULL`,
      columns,
    );
  }
  if (carried.size === 0) return [];
  const named: { conn: string; type: string; ext: string; to_type: string; at: string }[] = [];
  const rows: Record<string, string>[] = [];
  for (const c of carried.values()) {
    for (const [toType, ids] of Object.entries(c.sets) as [AssociableType, string[]][]) {
      named.push({
        conn: c.connectionId,
        type: c.fromType,
        ext: c.fromExternalId,
        to_type: toType,
        at: c.sinceAt,
      });
      for (const toExternalId of ids)
        rows.push({
          key: crmKey(c.connectionId, c.fromType, c.fromExternalId, toType, toExternalId),
          workspace_id: c.workspaceId,
          connection_id: c.connectionId,
          from_type: c.fromType,
          from_external_id: c.fromExternalId,
          from_id: c.fromId,
          to_type: toType,
          to_external_id: toExternalId,
          since: c.since,
          since_at: c.sinceAt,
        });
    }
  }
  // Rows of the named types that the new sets no longer hold.
  const { rows: removed } = await tx.query<RelationRemoval>(
    `DELETE FROM entity_relation r
      USING jsonb_to_recordset($1::jsonb) AS t(conn uuid, type text, ext text, to_type text, at text)
      WHERE r.kind = 'crm' AND r.connection_id = t.conn AND r.from_type = t.type AND r.from_external_id = t.ext
        AND r.to_type = t.to_type AND NOT (r.key = ANY($2::text[]))
      RETURNING r.connection_id::text AS "connectionId", r.from_type AS "fromType", r.from_id::text AS "fromId",
                r.to_type AS "toType", r.to_id::text AS "toId", t.at`,
    [JSON.stringify(named), rows.map((r) => r.key)],
  );
  const removals = removed.filter((r) => r.toId !== null);
  if (rows.length === 0) return removals;
  // The associated record's entity, when it is linked already (else null until it arrives).
  // `since` stays the event that first carried the pair, however often it is carried again.
  await tx.query(
    `INSERT INTO entity_relation (key, workspace_id, kind, from_type, from_id, to_type, to_id, connection_id,
                                  from_external_id, to_external_id, since, since_at)
     SELECT r.key, r.workspace_id, 'crm', r.from_type, r.from_id, r.to_type, l.entity_id, r.connection_id,
            r.from_external_id, r.to_external_id, r.since, r.since_at
       FROM jsonb_to_recordset($1::jsonb) AS r(key text, workspace_id uuid, connection_id uuid, from_type text,
            from_external_id text, from_id uuid, to_type text, to_external_id text, since text, since_at timestamptz)
       LEFT JOIN source_link l ON l.connection_id = r.connection_id AND l.entity_type = r.to_type
                              AND l.external_id = r.to_external_id
     ON CONFLICT (key) DO UPDATE SET from_id = EXCLUDED.from_id, to_id = EXCLUDED.to_id
      WHERE (entity_relation.from_id, entity_relation.to_id) IS DISTINCT FROM (EXCLUDED.from_id, EXCLUDED.to_id)`,
    [JSON.stringify(rows)],
  );
  return removals;
}

/** Step 2: both ends of the `crm` rows whose records are linked to these entities follow the links. */
export async function refreshEnds(tx: LogTransaction, entityIds: readonly string[]): Promise<void> {
  if (entityIds.length === 0) return;
  await tx.query(
    `UPDATE entity_relation r SET from_id = l.entity_id
       FROM source_link l
      WHERE l.entity_id = ANY($1::uuid[]) AND r.kind = 'crm' AND r.connection_id = l.connection_id
        AND r.from_type = l.entity_type AND r.from_external_id = l.external_id AND r.from_id <> l.entity_id`,
    [entityIds],
  );
  await tx.query(
    `UPDATE entity_relation r SET to_id = l.entity_id
       FROM source_link l
      WHERE l.entity_id = ANY($1::uuid[]) AND r.kind = 'crm' AND r.connection_id = l.connection_id
        AND r.to_type = l.entity_type AND r.to_external_id = l.external_id AND r.to_id IS DISTINCT FROM l.entity_id`,
    [entityIds],
  );
}

/** An entity of the batch as the derivation needs it. */
export interface RelationSubject {
  entityId: string;
  workspaceId: string;
  entityType: EntityType;
  /** Merged into another: it has no derived rows of its own. */
  frozen: boolean;
}

/**
 * Step 3. A person's derived companies: the live companies whose domain (their `domain` match
 * key) is the registrable domain of one of the person's addresses, free mail left out, while
 * no CRM row gives the person a company (resolved or still waiting for its record). The
 * people considered are the batch's, the participants of its activities (written just before,
 * see writeAssociations), those already derived to a batch company, and those with an address
 * at a batch company's domain (by host: an address at a subdomain of it is found when its
 * person is next in a batch).
 */
export async function writeDerived(tx: LogTransaction, subjects: readonly RelationSubject[]): Promise<void> {
  const byWorkspace = new Map<string, RelationSubject[]>();
  for (const s of subjects) byWorkspace.set(s.workspaceId, [...(byWorkspace.get(s.workspaceId) ?? []), s]);
  for (const [workspaceId, list] of byWorkspace) await deriveIn(tx, workspaceId, list);
}

async function deriveIn(tx: LogTransaction, workspaceId: string, subjects: readonly RelationSubject[]) {
  const frozen = subjects.filter((s) => s.frozen && s.entityType === 'person').map((s) => s.entityId);
  if (frozen.length > 0)
    await tx.query(`DELETE FROM entity_relation WHERE kind = 'derived' AND from_id = ANY($1::uuid[])`, [
      frozen,
    ]);
  const people = subjects.filter((s) => !s.frozen && s.entityType === 'person').map((s) => s.entityId);
  const companies = subjects.filter((s) => s.entityType === 'company').map((s) => s.entityId);
  // People an activity of the batch made or named (a Gmail or Calendar participant) are the batch's too.
  const activities = subjects
    .filter((s) => s.entityType === 'meeting' || s.entityType === 'email_activity')
    .map((s) => s.entityId);
  if (people.length === 0 && companies.length === 0 && activities.length === 0) return;
  // A company "has" the domain its merged view names now (identity keeps every key it ever had).
  // (Statements whose answer is known to be empty are not sent: each is a round trip of the batch.)
  const { rows: batchCompanies } =
    companies.length === 0
      ? { rows: [] }
      : await tx.query<{ domain: string | null }>(
          `SELECT fields->>'domain' AS domain FROM entity WHERE id = ANY($1::uuid[]) AND merged_into IS NULL`,
          [companies],
        );
  const batchDomains = [
    ...new Set(
      batchCompanies
        .map((c) => registrableDomain(c.domain))
        .filter((d): d is string => d !== null && !isFreeMailDomain(d)),
    ),
  ];
  const { rows: candidates } = await tx.query<{ id: string }>(
    `SELECT id::text AS id FROM unnest($2::uuid[]) AS id
     UNION SELECT from_id::text FROM entity_relation
            WHERE workspace_id = $1 AND kind = 'derived' AND to_id = ANY($3::uuid[])
     UNION SELECT m.entity_id::text FROM match_key m
            WHERE m.workspace_id = $1 AND m.entity_type = 'person' AND m.kind = 'email'
              AND split_part(m.value, '@', 2) = ANY($5::text[])
     UNION SELECT a.party_id::text FROM entity_association a
            WHERE a.activity_id = ANY($4::uuid[]) AND a.party_id IS NOT NULL`,
    [workspaceId, people, companies, activities, batchDomains],
  );
  if (candidates.length === 0) return;
  const ids = candidates.map((c) => c.id);
  // Each candidate's addresses, and whether a CRM gives it a company; merged-away ones have none.
  const { rows: facts } = await tx.query<{ id: string; emails: string[]; crm: boolean; live: boolean }>(
    `SELECT e.id::text AS id, e.merged_into IS NULL AS live,
            ARRAY(SELECT m.value FROM match_key m WHERE m.entity_id = e.id AND m.entity_type = 'person'
                     AND m.kind = 'email' ORDER BY m.value) AS emails,
            EXISTS (SELECT 1 FROM entity_relation r WHERE r.workspace_id = e.workspace_id AND r.kind = 'crm'
                       AND r.from_type = 'person' AND r.to_type = 'company'
                       AND r.from_id IN (SELECT x.id FROM entity x WHERE x.id = e.id OR x.merged_into = e.id)) AS crm
       FROM entity e WHERE e.id = ANY($1::uuid[]) AND e.workspace_id = $2 AND e.entity_type = 'person'`,
    [ids, workspaceId],
  );
  const wanted = new Map<string, { domain: string; email: string }[]>();
  const domains = new Set<string>();
  for (const f of facts) {
    const evidence: { domain: string; email: string }[] = [];
    if (f.live && !f.crm)
      for (const email of f.emails) {
        const domain = registrableDomain(email);
        if (domain && !isFreeMailDomain(domain) && !evidence.some((e) => e.domain === domain)) {
          evidence.push({ domain, email });
          domains.add(domain);
        }
      }
    wanted.set(f.id, evidence);
  }
  const { rows: found } =
    domains.size === 0
      ? { rows: [] }
      : await tx.query<{ id: string; domain: string; current: string | null }>(
          `SELECT DISTINCT m.entity_id::text AS id, m.value AS domain, e.fields->>'domain' AS current FROM match_key m
       JOIN entity e ON e.id = m.entity_id AND e.merged_into IS NULL
      WHERE m.workspace_id = $1 AND m.entity_type = 'company' AND m.kind = 'domain' AND m.value = ANY($2::text[])
      ORDER BY 1`,
          [workspaceId, [...domains]],
        );
  const holders = found.filter((h) => registrableDomain(h.current) === h.domain);
  const rows: Record<string, unknown>[] = [];
  for (const [personId, evidence] of wanted)
    for (const e of evidence)
      for (const company of holders.filter((h) => h.domain === e.domain))
        rows.push({
          key: `derived|${personId}|${company.id}`,
          workspace_id: workspaceId,
          from_id: personId,
          to_id: company.id,
          evidence: e,
        });
  await tx.query(
    `DELETE FROM entity_relation WHERE kind = 'derived' AND from_id = ANY($1::uuid[]) AND NOT (key = ANY($2::text[]))`,
    [[...wanted.keys()], rows.map((r) => r.key)],
  );
  if (rows.length === 0) return;
  await tx.query(
    `INSERT INTO entity_relation (key, workspace_id, kind, from_type, from_id, to_type, to_id, evidence)
     SELECT key, workspace_id, 'derived', 'person', from_id, 'company', to_id, evidence
       FROM jsonb_to_recordset($1::jsonb) AS r(key text, workspace_id uuid, from_id uuid, to_id uuid, evidence jsonb)
     ON CONFLICT (key) DO UPDATE SET evidence = EXCLUDED.evidence
      WHERE entity_relation.evidence IS DISTINCT FROM EXCLUDED.evidence`,
    [JSON.stringify(rows)],
  );
}
