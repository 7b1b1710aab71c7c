import { ENTITY_CHANNEL } from '@syncline/core';
import type { LogTransaction } from '@syncline/log';
import type { Touched } from './touched';

export const sameSet = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && a.every((x) => b.includes(x));

/**
 * Whether an entity's view is saved again: a view whose document did not move (an echo of our
 * own write, a pull re-reading what a webhook brought, an edit equal to the current value) is
 * not, so its row, its version (which a salesperson's If-Match holds) and its announcement stay
 * as they are. `stored` is the heads its saved view was made at (none: a new entity).
 */
export const viewMoved = (
  entry: Touched,
  stored: readonly string[] | undefined,
  operated: boolean,
): boolean =>
  stored === undefined ||
  entry.deletedIn.length > 0 ||
  operated ||
  !sameSet(stored, entry.outcome?.heads ?? []);

/**
 * Saves the entities' views (values, provenance, heads, records deleted) and returns the
 * version each row now has.
 */
export async function saveViews(
  tx: LogTransaction,
  touched: readonly Touched[],
): Promise<{ id: string; version: string }[]> {
  if (touched.length === 0) return [];
  const rows = touched.map((t) => ({
    id: t.entityId,
    fields: t.outcome?.values ?? {},
    provenance: t.outcome?.provenance ?? {},
    heads: t.outcome?.heads ?? [],
    deleted: t.deletedIn,
  }));
  // Each saved entity is announced on commit (NOTIFY is transactional): the API streams
  // it to the workspace's open pages (GET /api/v1/stream).
  const { rows: saved } = await tx.query<{ id: string; version: string }>(
    `WITH saved AS (
       UPDATE entity e
          SET fields = v.fields, provenance = v.provenance, heads = v.heads,
              flags = CASE WHEN jsonb_array_length(v.deleted) = 0 THEN e.flags
                           ELSE jsonb_set(e.flags, '{deletedIn}', COALESCE(e.flags->'deletedIn', '[]'::jsonb) || v.deleted)
                      END,
              version = e.version + 1, updated_at = now()
         FROM jsonb_to_recordset($1::jsonb) AS v(id uuid, fields jsonb, provenance jsonb, heads text[], deleted jsonb)
        WHERE e.id = v.id
       RETURNING e.id, e.version, e.workspace_id, e.entity_type)
     SELECT id, version::text AS version,
            pg_notify('${ENTITY_CHANNEL}', json_build_object('workspaceId', workspace_id, 'id', id,
                      'type', entity_type, 'version', version)::text) AS notified
       FROM saved`,
    [JSON.stringify(rows)],
  );
  return saved;
}
