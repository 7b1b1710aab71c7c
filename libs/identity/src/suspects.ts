import type { Queryable } from '@syncline/core';
import { mergeReasonOf } from './identity-operations';

/**
 * What makes an entity suspect of holding two things (a wrong merge, from a rule since
 * retired, a bad join, a mistyped address):
 * - `two-records-of-one-connection`: one CRM (calendar, mailbox) keeps two records apart, and
 *   Syncline holds them as one;
 * - `conflicting-keys`: two values of a key that names exactly one thing (two iCalUIDs for one
 *   meeting, two Message-IDs for one mail);
 * - `names-disagree`: a person seen under names that are not one person's (other first or last
 *   name: Maria Garcia and Mario Garcia).
 */
export type SuspectProblem =
  | { kind: 'two-records-of-one-connection'; connectionId: string; externalIds: string[] }
  | { kind: 'conflicting-keys'; keyKind: string; values: string[] }
  | { kind: 'names-disagree'; names: string[] };

/**
 * How to take an entity apart: undo the merge that made it (an operation whose id the unmerge
 * route takes), or, for records linked under the rules of an earlier version (no operation to
 * undo), a replay, which decides every link again under today's rules (its preview lists the
 * links that move).
 */
export type SuspectRemedy =
  | { kind: 'unmerge'; operationId: string; absorbedId: string; rule: string }
  | { kind: 'replay' };

export interface SuspectEntity {
  entityId: string;
  entityType: string;
  displayName: string | null;
  problems: SuspectProblem[];
  remedies: SuspectRemedy[];
}

/** Key kinds of which one thing holds one value. */
const ONE_PER_THING = ['ical_uid', 'message_id'];

/** First and last name token, sorted: one person's name however it is written (see phone_name). */
const nameEnds = (name: string): string => {
  const tokens = name.split(' ').filter(Boolean);
  return tokens.length >= 2 ? [tokens[0], tokens[tokens.length - 1]].sort().join('|') : (tokens[0] ?? '');
};

/**
 * The check over a workspace: every surviving entity that holds two records of one connection,
 * two values of a one-per-thing key, or (people) names of two people, with what would take it
 * apart. Most suspect first: two records of one connection, then conflicting keys, then names.
 */
export async function findSuspectEntities(
  tx: Queryable,
  workspaceId: string,
  entityType?: string,
): Promise<SuspectEntity[]> {
  const type = entityType ?? null;
  const problems = new Map<string, SuspectProblem[]>();
  const add = (entityId: string, problem: SuspectProblem) =>
    problems.set(entityId, [...(problems.get(entityId) ?? []), problem]);

  const twice = await tx.query<{ entity_id: string; connection_id: string; external_ids: string[] }>(
    `SELECT l.entity_id::text, l.connection_id::text, array_agg(l.external_id ORDER BY l.external_id) AS external_ids
       FROM source_link l JOIN entity e ON e.id = l.entity_id
      WHERE l.workspace_id = $1 AND e.merged_into IS NULL AND ($2::text IS NULL OR l.entity_type = $2)
      GROUP BY l.entity_id, l.connection_id HAVING count(*) > 1
      ORDER BY l.entity_id, l.connection_id`,
    [workspaceId, type],
  );
  for (const row of twice.rows)
    add(row.entity_id, {
      kind: 'two-records-of-one-connection',
      connectionId: row.connection_id,
      externalIds: row.external_ids,
    });

  // Keys are stored on the entity each record first linked to: a survivor holds its own and
  // those of the entities merged into it.
  const keys = await tx.query<{ entity_id: string; kind: string; values: string[] }>(
    `SELECT COALESCE(e.merged_into, e.id)::text AS entity_id, k.kind,
            array_agg(DISTINCT k.value ORDER BY k.value) AS values
       FROM match_key k JOIN entity e ON e.id = k.entity_id
      WHERE k.workspace_id = $1 AND k.kind = ANY($3::text[]) AND ($2::text IS NULL OR k.entity_type = $2)
      GROUP BY 1, 2 HAVING count(DISTINCT k.value) > 1
      ORDER BY 1, 2`,
    [workspaceId, type, ONE_PER_THING],
  );
  for (const row of keys.rows)
    add(row.entity_id, { kind: 'conflicting-keys', keyKind: row.kind, values: row.values });

  if (type === null || type === 'person') {
    const names = await tx.query<{ entity_id: string; names: string[] }>(
      `SELECT COALESCE(e.merged_into, e.id)::text AS entity_id,
              array_agg(DISTINCT n ORDER BY n) AS names
         FROM entity e, jsonb_array_elements_text(COALESCE(e.match_keys->'names', '[]'::jsonb)) AS n
        WHERE e.workspace_id = $1 AND e.entity_type = 'person'
        GROUP BY 1 HAVING count(DISTINCT n) > 1
        ORDER BY 1`,
      [workspaceId],
    );
    for (const row of names.rows) {
      const people = new Set(row.names.map(nameEnds));
      if (people.size > 1) add(row.entity_id, { kind: 'names-disagree', names: row.names });
    }
  }
  if (problems.size === 0) return [];

  const ids = [...problems.keys()];
  const entities = await tx.query<{ id: string; entity_type: string; display_name: string | null }>(
    'SELECT id::text, entity_type, display_name FROM entity WHERE id = ANY($1::uuid[]) AND workspace_id = $2',
    [ids, workspaceId],
  );
  const merges = await tx.query<{
    id: string;
    survivor: string;
    absorbed: string;
    rule: string | null;
    by: string | null;
  }>(
    `SELECT id::text, payload->>'survivorId' AS survivor, payload->>'absorbedId' AS absorbed,
            payload->'reason'->>'rule' AS rule, payload->>'requestedBy' AS by
       FROM identity_operation
      WHERE workspace_id = $1 AND kind = 'merge' AND undone_at IS NULL
        AND payload->>'survivorId' = ANY($2::text[])
      ORDER BY created_at DESC, id DESC`,
    [workspaceId, ids],
  );
  const rank = (list: SuspectProblem[]) =>
    Math.min(
      ...list.map((p) =>
        p.kind === 'two-records-of-one-connection' ? 0 : p.kind === 'conflicting-keys' ? 1 : 2,
      ),
    );
  return entities.rows
    .map((e): SuspectEntity => {
      const unmerges: SuspectRemedy[] = merges.rows
        .filter((m) => m.survivor === e.id)
        .map((m) => ({
          kind: 'unmerge',
          operationId: m.id,
          absorbedId: m.absorbed,
          rule: m.rule ?? mergeReasonOf({ requestedBy: m.by ?? undefined }).rule,
        }));
      return {
        entityId: e.id,
        entityType: e.entity_type,
        displayName: e.display_name,
        problems: problems.get(e.id) ?? [],
        remedies: [...unmerges, { kind: 'replay' }],
      };
    })
    .sort((a, b) => rank(a.problems) - rank(b.problems) || (a.entityId < b.entityId ? -1 : 1));
}
