import type { LogEvent, LogTransaction } from '@syncline/log';
import { userEditOf } from './merge';
import { versionMayReplace } from './provider-version';

// Where the batch's events stand before anything is merged: which are taken (not of a
// disconnected connection), the links our own creates' echoes make, the provider versions the
// records now have, and the entity each event's record belongs to.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Our entity id as a provider echoes it back (Calendar private property, HubSpot `syncline_id`). */
function originEntityId(origin: Record<string, unknown> | null): string | undefined {
  const id = origin?.synclineEntityId ?? origin?.synclineId;
  return typeof id === 'string' && UUID.test(id) ? id.toLowerCase() : undefined;
}

/**
 * Leaves out events of disconnected connections (appended before the disconnect, or by a
 * pull that was running): taking them in would link their records again. The key share
 * lock holds the batch against a disconnect in progress (it locks the row FOR UPDATE), so
 * either the disconnect waits for this batch and removes what it linked, or this batch
 * waits for the disconnect and sees it; ordinary updates of the row are not blocked.
 */
export async function withoutDisconnected(
  tx: LogTransaction,
  events: readonly LogEvent[],
): Promise<LogEvent[]> {
  const ids = [...new Set(events.map((e) => e.connectionId))];
  // Every row is locked, not only disconnected ones: a row a disconnect is changing must be
  // waited for (and then read as it committed), which a filter on the status would skip.
  const { rows } = await tx.query<{ id: string; status: string }>(
    'SELECT id::text AS id, status::text AS status FROM connection WHERE id = ANY($1::uuid[]) ORDER BY id FOR KEY SHARE',
    [ids],
  );
  const gone = new Set(rows.filter((r) => r.status === 'disconnected').map((r) => r.id));
  return gone.size === 0 ? [...events] : events.filter((e) => !gone.has(e.connectionId));
}

/**
 * A record we created in a provider comes back carrying our entity id; link it to that
 * entity before identity runs, so that an echo arriving before the push job stored the
 * link never starts a second entity.
 */
export async function linkEchoedCreates(tx: LogTransaction, events: readonly LogEvent[]): Promise<void> {
  const echoed = events.flatMap((event) => {
    const entityId = event.op === 'upsert' ? originEntityId(event.origin) : undefined;
    return entityId === undefined ? [] : [{ event, entityId }];
  });
  if (echoed.length === 0) return;
  // One statement for the batch, in its order: the first link of a record is the one kept.
  await tx.query(
    `INSERT INTO source_link (workspace_id, connection_id, entity_type, external_id, entity_id)
     SELECT e.workspace_id, t.conn, e.entity_type, t.ext, e.id
       FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::uuid[], $5::text[]) WITH ORDINALITY
            AS t(ws, conn, ext, entity, type, i)
       JOIN entity e ON e.id = t.entity AND e.workspace_id = t.ws AND e.entity_type = t.type
      ORDER BY t.i
     ON CONFLICT DO NOTHING`,
    [
      echoed.map((x) => x.event.workspaceId),
      echoed.map((x) => x.event.connectionId),
      echoed.map((x) => x.event.externalId),
      echoed.map((x) => x.entityId),
      echoed.map((x) => x.event.entityType),
    ],
  );
}

/** The provider version each linked record now has: later writes to it are conditional on it. */
export async function recordVersions(tx: LogTransaction, events: readonly LogEvent[]): Promise<void> {
  const latest = new Map<string, LogEvent>();
  for (const event of events)
    if (event.providerVersion !== null && event.op !== 'delete')
      latest.set(`${event.connectionId}|${event.entityType}|${event.externalId}`, event);
  if (latest.size === 0) return;
  const list = [...latest.values()];
  await tx.query(
    `UPDATE source_link l SET provider_version = t.v
       FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[]) AS t(conn, type, ext, v)
      WHERE l.connection_id = t.conn AND l.entity_type = t.type AND l.external_id = t.ext
        AND ${versionMayReplace('t.v', 'l.provider_version')}`,
    [
      list.map((e) => e.connectionId),
      list.map((e) => e.entityType),
      list.map((e) => e.externalId),
      list.map((e) => e.providerVersion),
    ],
  );
}

/**
 * The canonical entity of each event's source record (following a merge), if linked. An
 * edit made in Syncline names its entity; it counts only from the workspace's own
 * connection, and only for an entity of that workspace and type.
 */
export async function entitiesOf(
  tx: LogTransaction,
  events: readonly LogEvent[],
): Promise<(string | undefined)[]> {
  const isEdit = events.map((e) => userEditOf(e) !== undefined);
  const { rows } = await tx.query<{ i: string; entity_id: string }>(
    `SELECT t.i, COALESCE(e.merged_into, e.id) AS entity_id
       FROM unnest($1::uuid[], $2::text[], $3::text[], $4::bool[]) WITH ORDINALITY AS t(conn, type, ext, edit, i)
       JOIN source_link l ON l.connection_id = t.conn AND l.entity_type = t.type AND l.external_id = t.ext
       JOIN entity e ON e.id = l.entity_id
      WHERE NOT t.edit
        -- A copy a merge folded away (foldMirrors): its reports are no one's news.
        AND NOT COALESCE(e.flags->'folded' ? (t.conn::text || '|' || t.type || '|' || t.ext), false)
     UNION ALL
     SELECT t.i, COALESCE(e.merged_into, e.id)
       FROM unnest($1::uuid[], $2::text[], $3::text[], $4::bool[]) WITH ORDINALITY AS t(conn, type, ext, edit, i)
       JOIN connection c ON c.id = t.conn AND c.provider = 'syncline'
       JOIN entity e ON e.id::text = t.ext AND e.workspace_id = c.workspace_id AND e.entity_type = t.type
      WHERE t.edit`,
    [
      events.map((e) => e.connectionId),
      events.map((e) => e.entityType),
      events.map((e) => e.externalId),
      isEdit,
    ],
  );
  const out: (string | undefined)[] = events.map(() => undefined);
  for (const row of rows) out[Number(row.i) - 1] = row.entity_id;
  return out;
}
