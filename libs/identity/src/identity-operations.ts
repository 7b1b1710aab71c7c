import { err, ok, type Queryable, type Result } from '@syncline/core';
import type {
  DismissIntent,
  IdentityIntent,
  LinkReason,
  MergeIntent,
  MovedLink,
  OperationPayload,
  UnmergeIntent,
} from './operations';

/**
 * Identity's operations on its tables: a merge of two entities (links moved, the absorbed one
 * marked, the pair's review closed), its undoing, and a dismissed pair. Each merge and unmerge
 * is recorded in `identity_operation` under its id; IdentityService applies them and keeps its
 * cache in step.
 */

export interface IdentityError {
  code: 'NotFound' | 'Conflict' | 'Validation';
  message: string;
}

export async function mergeEntities(
  tx: Queryable,
  intent: MergeIntent,
): Promise<Result<OperationPayload, IdentityError>> {
  if (intent.survivorId === intent.absorbedId) {
    return err({ code: 'Validation', message: 'an entity cannot be merged into itself' });
  }
  const { rows } = await tx.query<{
    id: string;
    workspace_id: string;
    entity_type: string;
    merged_into: string;
  }>(
    `SELECT id, workspace_id, entity_type, merged_into FROM entity
      WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE`,
    [[intent.survivorId, intent.absorbedId]],
  );
  const survivor = rows.find((r) => r.id === intent.survivorId);
  const absorbed = rows.find((r) => r.id === intent.absorbedId);
  if (!survivor || !absorbed) return err({ code: 'NotFound', message: 'entity not found' });
  for (const row of [survivor, absorbed]) {
    if (row.workspace_id !== intent.workspaceId || row.entity_type !== intent.entityType) {
      return err({
        code: 'Validation',
        message: `entity ${row.id} is not a ${intent.entityType} of the workspace`,
      });
    }
    if (row.merged_into) return err({ code: 'Conflict', message: `entity ${row.id} is already merged` });
  }
  // Each moved link says which merge brought it here, and why (a person, a provider, a key).
  const moved = await tx.query<MovedLink>(
    `UPDATE source_link SET entity_id = $2,
            link_reason = jsonb_set(COALESCE(link_reason, '{}'::jsonb), '{joinedBy}',
              COALESCE(link_reason->'joinedBy', '[]'::jsonb) || jsonb_build_array($3::jsonb))
      WHERE entity_id = $1
     RETURNING connection_id AS "connectionId", entity_type AS "entityType", external_id AS "externalId"`,
    [
      intent.absorbedId,
      intent.survivorId,
      JSON.stringify({ operationId: intent.operationId, ...mergeReasonOf(intent) }),
    ],
  );
  await tx.query('UPDATE entity SET merged_into = $2, updated_at = now() WHERE id = $1', [
    intent.absorbedId,
    intent.survivorId,
  ]);
  const duplicates = await tx.query<{ id: string; status: string }>(
    `WITH pair AS (
       SELECT id, status FROM possible_duplicate
        WHERE (entity_a = $1 AND entity_b = $2) OR (entity_a = $2 AND entity_b = $1) FOR UPDATE)
     UPDATE possible_duplicate p SET status = 'merged' FROM pair WHERE p.id = pair.id
     RETURNING p.id, pair.status::text AS status`,
    [intent.survivorId, intent.absorbedId],
  );
  const payload: OperationPayload = {
    ...intent,
    movedLinks: sortLinks(moved.rows),
    duplicates: duplicates.rows,
  };
  await record(tx, intent, payload);
  return ok(payload);
}

export async function unmergeEntities(
  tx: Queryable,
  intent: UnmergeIntent,
): Promise<Result<OperationPayload, IdentityError>> {
  const { rows } = await tx.query<{ kind: string; payload: OperationPayload; undone_at: Date | null }>(
    'SELECT kind, payload, undone_at FROM identity_operation WHERE id = $1 FOR UPDATE',
    [intent.undoes],
  );
  const original = rows[0];
  if (original?.payload.kind !== 'merge') {
    return err({ code: 'NotFound', message: `no merge operation ${intent.undoes}` });
  }
  if (original.undone_at)
    return err({ code: 'Conflict', message: `merge ${intent.undoes} is already undone` });
  const merge = original.payload;
  if (merge.workspaceId !== intent.workspaceId) {
    return err({ code: 'Validation', message: 'the merge belongs to another workspace' });
  }
  // Exactly the links the merge moved go back, wherever later merges have taken them.
  const links = merge.movedLinks;
  await tx.query(
    `UPDATE source_link SET entity_id = $1,
            link_reason = jsonb_set(link_reason, '{joinedBy}', COALESCE(
              (SELECT jsonb_agg(j) FROM jsonb_array_elements(link_reason->'joinedBy') j
                WHERE j->>'operationId' <> $5), '[]'::jsonb))
      WHERE (connection_id, entity_type, external_id) IN (
        SELECT * FROM unnest($2::uuid[], $3::text[], $4::text[]))`,
    [
      merge.absorbedId,
      links.map((l) => l.connectionId),
      links.map((l) => l.entityType),
      links.map((l) => l.externalId),
      intent.undoes,
    ],
  );
  await tx.query('UPDATE entity SET merged_into = NULL, updated_at = now() WHERE id = $1', [
    merge.absorbedId,
  ]);
  for (const duplicate of merge.duplicates) {
    await tx.query('UPDATE possible_duplicate SET status = $2::possible_duplicate_status WHERE id = $1', [
      duplicate.id,
      duplicate.status,
    ]);
  }
  await tx.query('UPDATE identity_operation SET undone_at = now() WHERE id = $1', [intent.undoes]);
  const payload: OperationPayload = {
    ...intent,
    survivorId: merge.survivorId,
    absorbedId: merge.absorbedId,
    restoredLinks: links,
  };
  await record(tx, intent, payload);
  return ok(payload);
}

async function record(tx: Queryable, intent: IdentityIntent, payload: OperationPayload): Promise<void> {
  await tx.query(
    `INSERT INTO identity_operation (id, workspace_id, kind, payload)
     VALUES ($1, $2, $3::identity_operation_kind, $4)`,
    [intent.operationId, intent.workspaceId, intent.kind, JSON.stringify(payload)],
  );
}

/**
 * A pair dismissed as not the same, by who dismissed it, at the dismissal's time. Only an open
 * pair: one merged meanwhile stays merged, and a second dismissal changes nothing.
 */
export async function dismissPair(
  tx: Queryable,
  intent: DismissIntent,
  at: Date | string | undefined,
): Promise<void> {
  await tx.query(
    `UPDATE possible_duplicate SET status = 'dismissed', reviewed_by = $3, reviewed_at = $4
      WHERE id = $1 AND workspace_id = $2 AND status = 'open'`,
    [intent.duplicateId, intent.workspaceId, intent.requestedBy ?? null, new Date(at ?? Date.now())],
  );
}

/**
 * Of the entities a record's keys would join into `survivorId`, in order, those identity must
 * leave apart: a pair it joined before (a join is made once; if it stands they are one
 * already), and an entity one of whose people someone kept apart from one of the people the
 * join has gathered so far (the survivor, the entities joined before it in the list, and
 * everyone merged into any of them): a merge of either direction undone (an unmerge says they
 * are two) or a pair dismissed as not the same. So no join makes one of two people a person
 * separated, however many entities stand between them. A record naming both says nothing new
 * against a person's decision; it links to the entity its first key names.
 */
export async function pairsKeptApart(
  tx: Queryable,
  survivorId: string,
  absorbed: readonly { entityId: string; joinId: string }[],
): Promise<Set<string>> {
  if (absorbed.length === 0) return new Set();
  const { joinedBefore, separated } = await separations(
    tx,
    [survivorId, ...absorbed.map((a) => a.entityId)],
    absorbed.map((a) => a.joinId),
  );
  const gathered = new Set([survivorId]);
  const apart = new Set<string>();
  for (const { entityId, joinId } of absorbed) {
    const against = separated.get(entityId);
    if (joinedBefore.has(joinId) || [...gathered].some((g) => against?.has(g))) apart.add(entityId);
    else gathered.add(entityId);
  }
  return apart;
}

/** Of `others`, the entities someone kept apart from `entityId` (as pairsKeptApart reads it, each on its own). */
export async function keptApartFrom(
  tx: Queryable,
  entityId: string,
  others: readonly string[],
): Promise<Set<string>> {
  if (others.length === 0) return new Set();
  const { separated } = await separations(tx, [entityId, ...others], []);
  return new Set(others.filter((o) => separated.get(o)?.has(entityId)));
}

/**
 * Which of `roots` (entities standing, not merged) someone kept apart, through anyone merged
 * into them (a merge undone, a pair dismissed), and which of the joins `joinIds` were made.
 */
async function separations(
  tx: Queryable,
  roots: readonly string[],
  joinIds: readonly string[],
): Promise<{ joinedBefore: Set<string>; separated: Map<string, Set<string>> }> {
  const { rows } = await tx.query<{ joined: string | null; x: string | null; y: string | null }>(
    `WITH RECURSIVE members(root, id) AS (
       SELECT r, r FROM unnest($1::uuid[]) AS r
       UNION
       SELECT m.root, e.id FROM members m JOIN entity e ON e.merged_into = m.id
     ), apart(x, y) AS (
       SELECT d.entity_a, d.entity_b FROM possible_duplicate d
        WHERE d.status = 'dismissed'
          AND d.entity_a IN (SELECT id FROM members) AND d.entity_b IN (SELECT id FROM members)
       UNION ALL
       SELECT (o.payload->>'absorbedId')::uuid, (o.payload->>'survivorId')::uuid FROM identity_operation o
        WHERE o.undone_at IS NOT NULL
          AND o.payload->>'absorbedId' IN (SELECT id::text FROM members)
          AND o.payload->>'survivorId' IN (SELECT id::text FROM members)
     )
     SELECT NULL AS joined, mx.root::text AS x, my.root::text AS y
       FROM apart p JOIN members mx ON mx.id = p.x JOIN members my ON my.id = p.y
      WHERE mx.root <> my.root
     UNION ALL
     SELECT o.id::text, NULL, NULL FROM identity_operation o WHERE o.id = ANY($2::uuid[])`,
    [roots, joinIds],
  );
  const joinedBefore = new Set(rows.flatMap((r) => (r.joined === null ? [] : [r.joined])));
  const separated = new Map<string, Set<string>>();
  for (const { x, y } of rows) {
    if (x === null || y === null) continue;
    for (const [a, b] of [
      [x, y],
      [y, x],
    ] as const) {
      const set = separated.get(a) ?? new Set<string>();
      set.add(b);
      separated.set(a, set);
    }
  }
  return { joinedBefore, separated };
}

const sortLinks = (links: MovedLink[]): MovedLink[] =>
  [...links].sort(
    (a, b) =>
      a.connectionId.localeCompare(b.connectionId) ||
      a.entityType.localeCompare(b.entityType) ||
      a.externalId.localeCompare(b.externalId),
  );

/**
 * Why a merge was made: identity's own reason for a join, else a person's merge (it names who
 * asked) or a provider's (no one asked in Syncline).
 */
export function mergeReasonOf(intent: Pick<MergeIntent, 'reason' | 'requestedBy'>): LinkReason {
  return (
    intent.reason ??
    (intent.requestedBy === undefined
      ? { rule: 'provider-merge', evidence: [], score: 1 }
      : { rule: 'person-merge', evidence: [`by:${intent.requestedBy}`], score: 1 })
  );
}
