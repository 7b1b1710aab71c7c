import type { LogTransaction } from '@syncline/log';
import type { TargetConnection } from './connections';
import { associateKey, dissociateKey, keyDigest } from './idempotency-key';
import type { RelationRemoval } from './relations';

/**
 * Associations written back. A pair of entities one CRM associates (a contact's company, a
 * deal's contacts and companies: `crm` rows of entity_relation) is owed to every other HubSpot
 * connection that holds a record of both, unless that connection reports it already; and who
 * took part in a mail or meeting (entity_association) is owed to each HubSpot connection that
 * holds the activity as an email or meeting engagement, on the contacts it holds of them.
 * Written by the sync stage into the outbox (ops `associate` and `dissociate`) in the
 * transaction that commits the log offsets, after the batch's own writes (a create of one end
 * queued by the same batch counts: the push sends the association once the create has landed).
 *
 * `relation_mirror` notes every association Syncline wrote (or owes) in a connection. A
 * connection that reports a pair Syncline did not write there is a *native* source of it. So:
 * - while a pair has a native source, every eligible connection that neither reports it nor
 *   has it from us is owed `associate` (and a mirror row); the echo of our write (the record
 *   read back with its associations) reports it where our mirror row stands, which owes
 *   nothing more anywhere: that is the loop's end;
 * - once no native source is left, and a connection that holds both records says they are not
 *   associated (the association was removed there, not the record deleted), every connection
 *   holding our mirror is owed `dissociate` where it still reports the pair, and the mirror
 *   row goes. An association a CRM made itself has no mirror row and is never removed; one
 *   that a person removed from our mirror is not written again while its source stands.
 * - a CRM's own association removed there is noted (`declined_at`): written back only by an
 *   assertion made after that (a two-way sync that wrote the other CRMs' older copies back
 *   would undo every removal of a pair that two CRMs had).
 *
 * Every key is derived from the state, never from a count, so a replay of the same events
 * (which rebuilds the mirror rows too) meets the rows already sent under the same keys: an
 * associate's key names the pair, the target and the native row that made it owed with the
 * event that first carried that row (`since`); a dissociate's names the associate it undoes.
 */

export const ASSOCIATION_OPS = ['associate', 'dissociate'] as const;
export type AssociationOp = (typeof ASSOCIATION_OPS)[number];

/** What an association row of the outbox carries in `fields` (the from end is the row's entity). */
export interface AssociationFields {
  toType: string;
  toId: string;
  /** Dissociate: the provider ids of the pairs the target reports (from, to). */
  pairs?: [string, string][];
  /** Dissociate: the associate key it undoes (a pair owed again takes the mirror row back). */
  undoes?: string;
}

/** An entity of the batch, as the write-back needs it. */
export interface WritebackSubject {
  entityId: string;
  workspaceId: string;
  entityType: string;
  frozen: boolean;
}

const ENGAGEMENT_TYPES = new Set(['email_activity', 'meeting']);

interface Pair {
  workspaceId: string;
  fromType: string;
  fromId: string;
  toType: string;
  toId: string;
  /** An activity's participant (entity_association), not a CRM's association. */
  engagement: boolean;
}

interface ReportRow {
  key: string;
  since: string | null;
  since_at: Date | null;
  connection_id: string;
  from_type: string;
  from_id: string;
  to_type: string;
  to_id: string;
  from_external_id: string;
  to_external_id: string;
}

interface MirrorRow {
  key: string;
  connection_id: string;
  associate_key: string | null;
  declined_at: Date | null;
}

interface PendingRow {
  connection_id: string;
  idempotency_key: string;
  op: AssociationOp;
  entity_id: string;
  fields: AssociationFields;
}

interface OwedRow {
  workspace_id: string;
  entity_id: string;
  entity_type: string;
  connection_id: string;
  op: AssociationOp;
  fields: AssociationFields;
  idempotency_key: string;
}

const pairKey = (p: Pick<Pair, 'fromType' | 'fromId' | 'toType' | 'toId'>) =>
  `${p.fromType}|${p.fromId}|${p.toType}|${p.toId}`;
const mirrorKey = (connectionId: string, p: Pair) => `${connectionId}|${pairKey(p)}`;

/**
 * Owes the batch's associations to the other HubSpot connections (see above) and returns the
 * connections owed a write. `targetsOf` is the workspace's connection list (the stage's cache).
 */
export async function oweAssociations(
  tx: LogTransaction,
  subjects: readonly WritebackSubject[],
  removals: readonly RelationRemoval[],
  targetsOf: (workspaceId: string) => Promise<readonly TargetConnection[]>,
): Promise<string[]> {
  const live = subjects.filter((s) => !s.frozen);
  if (live.length === 0) return [];
  const workspaceOf = new Map(live.map((s) => [s.entityId, s.workspaceId]));
  // A connection's own association removed there (not our copy: that keeps its mirror row).
  const declines = removals.filter((r) => workspaceOf.has(r.fromId));
  if (declines.length > 0)
    await tx.query(
      `INSERT INTO relation_mirror (key, workspace_id, connection_id, from_type, from_id, to_type, to_id, declined_at)
       SELECT r.connection_id || '|' || r.from_type || '|' || r.from_id || '|' || r.to_type || '|' || r.to_id,
              r.workspace_id, r.connection_id, r.from_type, r.from_id, r.to_type, r.to_id, r.at
         FROM jsonb_to_recordset($1::jsonb) AS r(workspace_id uuid, connection_id uuid, from_type text,
              from_id uuid, to_type text, to_id uuid, at timestamptz)
      -- The echo of our own removal (our last write of the pair there) is no decline of the CRM's.
      WHERE NOT EXISTS (
        SELECT 1 FROM (SELECT o.op FROM outbox o
                        WHERE o.entity_id = r.from_id AND o.connection_id = r.connection_id
                          AND o.op IN ('associate', 'dissociate') AND o.status NOT IN ('superseded', 'failed')
                          AND o.fields->>'toType' = r.to_type AND o.fields->>'toId' = r.to_id::text
                        ORDER BY o.id DESC LIMIT 1) last
         WHERE last.op = 'dissociate')
       ON CONFLICT (key) DO UPDATE SET declined_at = EXCLUDED.declined_at
        WHERE relation_mirror.associate_key IS NULL
          AND relation_mirror.declined_at IS DISTINCT FROM EXCLUDED.declined_at`,
      [
        JSON.stringify(
          declines.map((r) => ({
            workspace_id: workspaceOf.get(r.fromId),
            connection_id: r.connectionId,
            from_type: r.fromType,
            from_id: r.fromId,
            to_type: r.toType,
            to_id: r.toId,
            at: r.at,
          })),
        ),
      ],
    );
  const ids = live.map((s) => s.entityId);
  const workspaces = [...new Set(live.map((s) => s.workspaceId))];
  const activities = live.filter((s) => ENGAGEMENT_TYPES.has(s.entityType)).map((s) => s.entityId);

  // The pairs to weigh: every CRM pair and mirror row with an end in the batch, and the
  // participants of the batch's activities (a person's activities are weighed with the
  // activity, not with every change of the person).
  const { rows: found } = await tx.query<{
    workspace_id: string;
    from_type: string;
    from_id: string;
    to_type: string;
    to_id: string;
    participant: boolean;
  }>(
    `SELECT workspace_id, from_type, from_id::text AS from_id, to_type, to_id::text AS to_id, false AS participant
       FROM entity_relation
      WHERE workspace_id = ANY($1::uuid[]) AND kind = 'crm' AND to_id IS NOT NULL
        AND (from_id = ANY($2::uuid[]) OR to_id = ANY($2::uuid[]))
     UNION
     SELECT workspace_id, from_type, from_id::text, to_type, to_id::text, false
       FROM relation_mirror
      WHERE workspace_id = ANY($1::uuid[]) AND (from_id = ANY($2::uuid[]) OR to_id = ANY($2::uuid[]))
     UNION
     SELECT a.workspace_id, a.activity_type, a.activity_id::text, 'person', COALESCE(e.merged_into, e.id)::text, true
       FROM entity_association a JOIN entity e ON e.id = a.party_id
      WHERE a.activity_id = ANY($3::uuid[])`,
    [workspaces, ids, activities],
  );
  if (found.length === 0) return [];
  const pairs = new Map<string, Pair>();
  /** Activity pairs whose person takes part in the activity now. */
  const participating = new Set<string>();
  for (const r of found) {
    const pair: Pair = {
      workspaceId: r.workspace_id,
      fromType: r.from_type,
      fromId: r.from_id,
      toType: r.to_type,
      toId: r.to_id,
      engagement: ENGAGEMENT_TYPES.has(r.from_type),
    };
    pairs.set(pairKey(pair), pair);
    if (r.participant) participating.add(pairKey(pair));
  }
  const list = [...pairs.values()];
  const fromIds = [...new Set(list.map((p) => p.fromId))];
  const endIds = [...new Set(list.flatMap((p) => [p.fromId, p.toId]))];

  // One after another: the stage's transaction is one connection.
  const reports = await tx.query<ReportRow>(
    `SELECT key, since, since_at, connection_id::text AS connection_id, from_type, from_id::text AS from_id, to_type,
              to_id::text AS to_id, from_external_id, to_external_id
         FROM entity_relation
        WHERE workspace_id = ANY($1::uuid[]) AND kind = 'crm' AND from_id = ANY($2::uuid[]) AND to_id IS NOT NULL
        ORDER BY key`,
    [workspaces, fromIds],
  );
  const mirrors = await tx.query<MirrorRow>(
    `SELECT key, connection_id::text AS connection_id, associate_key, declined_at FROM relation_mirror
        WHERE workspace_id = ANY($1::uuid[]) AND from_id = ANY($2::uuid[])`,
    [workspaces, fromIds],
  );
  const pending = await tx.query<PendingRow>(
    `SELECT connection_id::text AS connection_id, idempotency_key, op, entity_id::text AS entity_id, fields
         FROM outbox
        WHERE entity_id = ANY($1::uuid[]) AND op IN ('associate', 'dissociate') AND status IN ('pending', 'waiting')`,
    [fromIds],
  );
  const links = await tx.query<{ entity_id: string; connection_id: string }>(
    `SELECT DISTINCT entity_id::text AS entity_id, connection_id::text AS connection_id FROM source_link
        WHERE entity_id = ANY($1::uuid[])`,
    [endIds],
  );
  // A create on its way counts as a record: the push sends the association once it has landed.
  const creates = await tx.query<{ entity_id: string; connection_id: string }>(
    `SELECT DISTINCT entity_id::text AS entity_id, connection_id::text AS connection_id FROM outbox
        WHERE entity_id = ANY($1::uuid[]) AND op = 'create' AND status IN ('pending', 'sending')`,
    [endIds],
  );
  // Who takes part in every activity weighed (also one reached from its person's mirror rows):
  // an activity that still has participants, but not that person, no longer has them.
  const participants = await tx.query<{ activity_id: string; activity_type: string; party: string | null }>(
    `SELECT DISTINCT a.activity_id::text AS activity_id, a.activity_type, COALESCE(e.merged_into, e.id)::text AS party
       FROM entity_association a LEFT JOIN entity e ON e.id = a.party_id
      WHERE a.activity_id = ANY($1::uuid[])`,
    [fromIds.filter((id) => list.some((p) => p.engagement && p.fromId === id))],
  );
  for (const r of participants.rows)
    if (r.party !== null)
      participating.add(
        pairKey({ fromType: r.activity_type, fromId: r.activity_id, toType: 'person', toId: r.party }),
      );
  const linked = new Set(links.rows.map((r) => `${r.entity_id}|${r.connection_id}`));
  const creating = new Set(creates.rows.map((r) => `${r.entity_id}|${r.connection_id}`));
  const withParticipants = new Set(participants.rows.map((r) => r.activity_id));
  const reportsOf = new Map<string, ReportRow[]>();
  for (const r of reports.rows) {
    const k = pairKey({ fromType: r.from_type, fromId: r.from_id, toType: r.to_type, toId: r.to_id });
    reportsOf.set(k, [...(reportsOf.get(k) ?? []), r]);
  }
  const mirrorOf = new Map(mirrors.rows.map((m) => [m.key, m]));
  // Outbox rows by target and pair (the row's entity is the from end).
  const rowKey = (r: PendingRow) => `${r.connection_id}|${r.entity_id}|${r.fields.toType}|${r.fields.toId}`;
  const pendingKey = (connectionId: string, p: Pair) => `${connectionId}|${p.fromId}|${p.toType}|${p.toId}`;
  const pendingOf = new Map<string, PendingRow[]>();
  for (const r of pending.rows) pendingOf.set(rowKey(r), [...(pendingOf.get(rowKey(r)) ?? []), r]);

  const owed: OwedRow[] = [];
  const keep = new Set<string>();
  const weighed = new Set<string>();
  const setMirrors: { key: string; pair: Pair; connectionId: string; associateKey: string }[] = [];
  const dropMirrors: string[] = [];

  for (const pair of list) {
    const targets = (await targetsOf(pair.workspaceId)).filter(
      (t) => t.provider === 'hubspot' && t.status !== 'disconnected',
    );
    const eligible = (t: TargetConnection) => t.status === 'live' && t.reconciled;
    const holds = (t: TargetConnection) =>
      [pair.fromId, pair.toId].every((id) => linked.has(`${id}|${t.id}`) || creating.has(`${id}|${t.id}`));
    const holdsBoth = (t: TargetConnection) =>
      [pair.fromId, pair.toId].every((id) => linked.has(`${id}|${t.id}`));
    const rows = reportsOf.get(pairKey(pair)) ?? [];
    const reported = (t: TargetConnection) => rows.filter((r) => r.connection_id === t.id);
    // Ours: a mirror row, or a removal of ours not sent yet (the pair is still ours until it is).
    const ourKey = (connectionId: string): string | undefined =>
      mirrorOf.get(mirrorKey(connectionId, pair))?.associate_key ??
      pendingOf.get(pendingKey(connectionId, pair))?.find((r) => r.op === 'dissociate')?.fields.undoes;
    const declinedAt = (connectionId: string) =>
      mirrorOf.get(mirrorKey(connectionId, pair))?.declined_at ?? null;
    const natives = pair.engagement
      ? []
      : rows.filter((r) => ourKey(r.connection_id) === undefined).sort((a, b) => (a.key < b.key ? -1 : 1));
    const asserted = pair.engagement ? participating.has(pairKey(pair)) : natives.length > 0;

    for (const t of targets) weighed.add(pendingKey(t.id, pair));
    if (asserted) {
      // The native row that makes the pair owed, with the event that first carried it: a pair
      // removed and associated again is owed under a new key.
      const origin = natives[0];
      // The newest assertion: a connection that removed its own copy after it is not owed it.
      const newest = Math.max(...natives.map((r) => r.since_at?.getTime() ?? Number.POSITIVE_INFINITY));
      const generation = keyDigest(
        origin ? `${origin.key}|${origin.since ?? ''}` : `participant|${pair.fromId}|${pair.toId}`,
      );
      for (const t of targets) {
        const mine = ourKey(t.id);
        if (mine !== undefined) {
          // Wanted and ours: the write stands (a removal not yet sent is called off).
          keep.add(`${t.id}|${mine}`);
          if (mirrorOf.get(mirrorKey(t.id, pair))?.associate_key == null)
            setMirrors.push({ key: mirrorKey(t.id, pair), pair, connectionId: t.id, associateKey: mine });
          continue;
        }
        if (reported(t).length > 0 || !eligible(t) || !holds(t)) continue;
        const declined = declinedAt(t.id);
        if (declined !== null && declined.getTime() >= newest) continue;
        const key = associateKey(pair.fromId, t.id, { type: pair.toType, id: pair.toId }, generation);
        keep.add(`${t.id}|${key}`);
        owed.push({
          workspace_id: pair.workspaceId,
          entity_id: pair.fromId,
          entity_type: pair.fromType,
          connection_id: t.id,
          op: 'associate',
          fields: { toType: pair.toType, toId: pair.toId },
          idempotency_key: key,
        });
        setMirrors.push({ key: mirrorKey(t.id, pair), pair, connectionId: t.id, associateKey: key });
      }
      continue;
    }
    // No source asserts the pair. Removed at its source (a connection holding both records says
    // they are not associated, or the activity no longer has the person), not merely gone with a
    // deleted record: our copies go; any other stays as it is.
    const removed = pair.engagement
      ? withParticipants.has(pair.fromId)
      : targets.some(
          (t) => eligible(t) && holdsBoth(t) && reported(t).length === 0 && ourKey(t.id) === undefined,
        );
    if (!removed) {
      for (const t of targets)
        for (const r of pendingOf.get(pendingKey(t.id, pair)) ?? []) keep.add(`${t.id}|${r.idempotency_key}`);
      continue;
    }
    for (const t of targets) {
      const mine = ourKey(t.id);
      if (mine === undefined) continue;
      if (mirrorOf.get(mirrorKey(t.id, pair))?.associate_key != null) dropMirrors.push(mirrorKey(t.id, pair));
      // Never sent: setting the associate aside is the whole removal.
      const unsent = pendingOf
        .get(pendingKey(t.id, pair))
        ?.some((r) => r.op === 'associate' && r.idempotency_key === mine);
      // Engagements are not reported back: our associate stands for the report.
      const there = pair.engagement ? [] : reported(t);
      if (unsent || (!pair.engagement && there.length === 0)) continue;
      const key = dissociateKey(pair.fromId, t.id, mine);
      keep.add(`${t.id}|${key}`);
      owed.push({
        workspace_id: pair.workspaceId,
        entity_id: pair.fromId,
        entity_type: pair.fromType,
        connection_id: t.id,
        op: 'dissociate',
        fields: {
          toType: pair.toType,
          toId: pair.toId,
          ...(there.length > 0
            ? { pairs: there.map((r): [string, string] => [r.from_external_id, r.to_external_id]) }
            : {}),
          undoes: mine,
        },
        idempotency_key: key,
      });
    }
  }

  // Rows of the weighed pairs that the state no longer owes are set aside (a create and its
  // association both pending when the pair is removed again: neither association write goes).
  const stale = pending.rows.filter(
    (r) => weighed.has(rowKey(r)) && !keep.has(`${r.connection_id}|${r.idempotency_key}`),
  );
  if (stale.length > 0)
    await tx.query(
      `UPDATE outbox SET status = 'superseded'
        WHERE (connection_id, idempotency_key) IN (SELECT * FROM unnest($1::uuid[], $2::text[]))
          AND status IN ('pending', 'waiting')`,
      [stale.map((r) => r.connection_id), stale.map((r) => r.idempotency_key)],
    );
  // Ours no more; a decline noted before our write stays.
  if (dropMirrors.length > 0) {
    await tx.query('DELETE FROM relation_mirror WHERE key = ANY($1::text[]) AND declined_at IS NULL', [
      dropMirrors,
    ]);
    await tx.query('UPDATE relation_mirror SET associate_key = NULL WHERE key = ANY($1::text[])', [
      dropMirrors,
    ]);
  }
  if (setMirrors.length > 0)
    await tx.query(
      `INSERT INTO relation_mirror (key, workspace_id, connection_id, from_type, from_id, to_type, to_id, associate_key)
       SELECT * FROM jsonb_to_recordset($1::jsonb) AS r(key text, workspace_id uuid, connection_id uuid,
              from_type text, from_id uuid, to_type text, to_id uuid, associate_key text)
       ON CONFLICT (key) DO UPDATE SET associate_key = EXCLUDED.associate_key
        WHERE relation_mirror.associate_key IS DISTINCT FROM EXCLUDED.associate_key`,
      [
        JSON.stringify(
          setMirrors.map((m) => ({
            key: m.key,
            workspace_id: m.pair.workspaceId,
            connection_id: m.connectionId,
            from_type: m.pair.fromType,
            from_id: m.pair.fromId,
            to_type: m.pair.toType,
            to_id: m.pair.toId,
            associate_key: m.associateKey,
          })),
        ),
      ],
    );
  if (owed.length === 0) return [];
  // A key already sent is left as it is (a replay meets its own writes); one set aside is owed
  // again. No lock is taken on a row a pusher holds (see writeOutbox): an UPDATE for the rows
  // set aside, an insert for keys not queued at all.
  await tx.query(
    `WITH r AS (
       SELECT * FROM jsonb_to_recordset($1::jsonb) AS r(workspace_id uuid, entity_id uuid, entity_type text,
              connection_id uuid, op text, fields jsonb, idempotency_key text)
        WHERE NOT EXISTS (SELECT 1 FROM connection c WHERE c.id = r.connection_id AND c.status = 'disconnected')),
     owed_again AS (
       UPDATE outbox o SET fields = r.fields, status = 'pending', attempts = 0
         FROM r
        WHERE o.connection_id = r.connection_id AND o.idempotency_key = r.idempotency_key
          AND o.status = 'superseded')
     INSERT INTO outbox (workspace_id, entity_id, entity_type, connection_id, op, fields, heads, idempotency_key)
     SELECT workspace_id, entity_id, entity_type, connection_id, op, fields, '{}', idempotency_key
       FROM r
      WHERE NOT EXISTS (SELECT 1 FROM outbox o
                         WHERE o.connection_id = r.connection_id AND o.idempotency_key = r.idempotency_key)
     ON CONFLICT (connection_id, idempotency_key) DO NOTHING`,
    [JSON.stringify(owed)],
  );
  return [...new Set(owed.map((r) => r.connection_id))];
}
