import { Inject, Injectable } from '@nestjs/common';
import { type ConnectionId, err, ok, type Result, type WorkspaceId } from '@syncline/core';
import { Prisma, PrismaClient } from '@syncline/core/db';
import { DERIVED_TABLES, type OnDisconnect } from '@syncline/log';
import type { Db } from '../admin/audit-log.repository';
import {
  DISCONNECTED_ERASED_REASON,
  DISCONNECTED_KEPT_REASON,
  type LifecycleAction,
  type LifecycleRefusal,
  PAUSED_REASON,
  planLifecycle,
  RESYNC_REASON,
} from './connection-lifecycle';
import { type ConnectionRecord, cursorsState, RECORD, toRecord } from './connections.repository';
import type { ConnectionStatus } from './connections.schemas';

/** Keep what the connection brought to the unified records, or erase what only it knew. */
export type DisconnectData = 'keep' | 'erase';

export interface Transitioned {
  record: ConnectionRecord;
  /** The status before; equal to the record's when nothing changed. */
  from: ConnectionStatus;
  changed: boolean;
}

/** What a disconnect removed (or set aside), for the audit entry. */
export interface DisconnectCounts {
  sourceLinks: number;
  supersededWrites: number;
  deletedWrites: number;
  changeEvents: number;
  entities: number;
  deadLetters: number;
}

export interface Disconnected extends Transitioned {
  counts: DisconnectCounts;
}

export type LifecycleError =
  | { code: 'not_found' }
  | { code: LifecycleRefusal; status: ConnectionStatus; message?: string };

/** Runs in the action's transaction once the change is written (the audit entry). */
export type OnChange<T> = (tx: Db, change: T) => Promise<void>;

/** An erase deletes rows of several tables; Prisma's 5 s default is too short for a big connection. */
const DISCONNECT_TIMEOUT_MS = 120_000;

interface LockedRow {
  status: ConnectionStatus;
  status_reason: string | null;
  cursors: Prisma.JsonValue;
  has_credentials: boolean;
}

/**
 * Pause, resume, resync and disconnect of a provider connection. Each locks the connection
 * row first, decides from its status (see `planLifecycle`), writes, and runs `onChange` in
 * the same transaction, so an audit entry commits with its change or not at all.
 *
 * The workers only read the row: a pull stores its cursor compare-and-set on (status,
 * cursors), so a pull in flight stops at its next page once the status or cursors changed.
 */
@Injectable()
export class ConnectionLifecycleRepository {
  constructor(@Inject(PrismaClient) private readonly prisma: PrismaClient) {}

  async transition(
    workspaceId: WorkspaceId,
    id: ConnectionId,
    action: LifecycleAction,
    onChange: OnChange<Transitioned>,
  ): Promise<Result<Transitioned, LifecycleError>> {
    return this.prisma.$transaction(async (tx) => {
      // NO KEY: the merge's share lock on the row (see the workers' sync handler) does not block it.
      const current = await lock(tx, workspaceId, id, 'FOR NO KEY UPDATE');
      if (!current) return err({ code: 'not_found' as const });
      const plan = planLifecycle(action, {
        status: current.status,
        cursors: cursorsState(current.cursors),
        hasCredentials: current.has_credentials,
      });
      if (plan.kind === 'refused') return err({ code: plan.code, status: current.status });
      if (plan.kind === 'unchanged') {
        const record = toRecord(await tx.connection.findUniqueOrThrow({ where: { id }, select: RECORD }));
        return ok({ record, from: current.status, changed: false });
      }
      const data: Prisma.ConnectionUpdateInput =
        plan.kind === 'pause'
          ? { status: 'paused', statusReason: PAUSED_REASON }
          : plan.kind === 'resume'
            ? { status: plan.status, statusReason: null }
            : {
                // Both positions go: the next pull reads everything again from the start.
                cursors: withoutPositions(current.cursors),
                status: 'backfilling',
                statusReason: RESYNC_REASON,
                backfillSeen: 0,
                backfillTotal: null,
              };
      const updated = await tx.connection.update({ where: { id }, data, select: RECORD });
      const done = { record: toRecord(updated), from: current.status, changed: true };
      await onChange(tx, done);
      return ok(done);
    });
  }

  /**
   * Stops the connection for good: `disconnected`, credentials erased, its watch channels,
   * receipts and synced heads gone. `keep`: its source links go and its pending writes are
   * superseded; the unified records keep what it brought. `erase`: also its change events,
   * dead letters and writes, and every entity only it knew (with its merged-in entities,
   * documents, conflicts and view row); an entity another connection also knows stays.
   *
   * Disconnecting again answers the connection unchanged; erasing a connection that was
   * disconnected keeping its data is refused, since its links, the only way to tell what
   * only it knew, are gone.
   */
  async disconnect(
    workspaceId: WorkspaceId,
    id: ConnectionId,
    data: DisconnectData,
    onChange: OnChange<Disconnected>,
  ): Promise<Result<Disconnected, LifecycleError>> {
    return this.prisma.$transaction(
      async (tx) => {
        // FOR UPDATE waits for merge batches holding the row (key share) and holds new ones
        // back until this commits; they then see `disconnected` and skip its events.
        const current = await lock(tx, workspaceId, id, 'FOR UPDATE');
        if (!current) return err({ code: 'not_found' as const });
        const counts: DisconnectCounts = {
          sourceLinks: 0,
          supersededWrites: 0,
          deletedWrites: 0,
          changeEvents: 0,
          entities: 0,
          deadLetters: 0,
        };
        if (current.status === 'disconnected') {
          if (data === 'erase' && current.status_reason !== DISCONNECTED_ERASED_REASON)
            return err({
              code: 'connection_disconnected' as const,
              status: current.status,
              message: `connection ${id} was disconnected keeping its data; what only it knew can no longer be told apart`,
            });
          const record = toRecord(await tx.connection.findUniqueOrThrow({ where: { id }, select: RECORD }));
          return ok({ record, from: current.status, changed: false, counts });
        }

        const [links] = await tx.$queryRaw<{ n: number }[]>`
          SELECT count(*)::int AS n FROM source_link WHERE connection_id = ${id}::uuid`;
        counts.sourceLinks = links?.n ?? 0;
        const updated = await tx.connection.update({
          where: { id },
          data: {
            status: 'disconnected',
            statusReason: data === 'erase' ? DISCONNECTED_ERASED_REASON : DISCONNECTED_KEPT_REASON,
            credentialsCiphertext: null,
            credentialsKeyId: null,
            // The proof was of the credentials, which are gone.
            credentialsVerifiedAt: null,
            credentialsProof: null,
          },
          select: RECORD,
        });
        // Channel tokens are secrets bound to it; a notification on one is refused from now on.
        await tx.$executeRaw`DELETE FROM push_subscription WHERE connection_id = ${id}::uuid`;
        // What a connection in dry run staged never reached anything: it goes either way.
        await tx.$executeRaw`DELETE FROM staged_change WHERE connection_id = ${id}::uuid`;
        await tx.$executeRaw`DELETE FROM dry_run_report WHERE connection_id = ${id}::uuid`;

        if (data === 'keep') {
          counts.supersededWrites = await tx.$executeRaw`
            UPDATE outbox SET status = 'superseded'
             WHERE connection_id = ${id}::uuid AND status IN ('pending', 'sending')`;
        } else {
          // Locked before the final count, so a merge linking another connection's record to
          // one of them meanwhile either commits first (and keeps it) or waits for this.
          const candidates = await onlyItsEntities(tx, workspaceId, id);
          await tx.$queryRaw`
            SELECT id FROM entity WHERE id = ANY(${candidates}::uuid[]) ORDER BY id FOR UPDATE`;
          const doomed = await onlyItsEntities(tx, workspaceId, id);
          counts.deletedWrites = await tx.$executeRaw`
            DELETE FROM outbox WHERE connection_id = ${id}::uuid OR entity_id = ANY(${doomed}::uuid[])`;
          // The derived rows of the doomed entities that do not go with them (no cascading key).
          for (const { table, workspaceRows, entityColumns = [] } of ERASED_BY_ENTITY) {
            const anyOf = entityColumns.map((column) => `${column} = ANY($2::uuid[])`).join(' OR ');
            await tx.$executeRawUnsafe(
              `DELETE FROM ${table} WHERE (${workspaceRows((t) => t)}) AND (${anyOf})`,
              workspaceId,
              doomed,
            );
          }
          // What its records said about associations goes with them (derived ones stay).
          for (const table of connectionTables('erase'))
            await tx.$executeRawUnsafe(`DELETE FROM ${table} WHERE connection_id = $1::uuid`, id);
          // Cascades to their source links, match keys, possible duplicates and relations.
          counts.entities = await tx.$executeRaw`
            DELETE FROM entity WHERE id = ANY(${doomed}::uuid[]) AND workspace_id = ${workspaceId}::uuid`;
          counts.changeEvents = await tx.$executeRaw`
            DELETE FROM change_event WHERE connection_id = ${id}::uuid`;
          counts.deadLetters = await tx.$executeRaw`
            DELETE FROM dead_letter WHERE connection_id = ${id}::uuid AND workspace_id = ${workspaceId}::uuid`;
        }
        // Its synced heads, receipts, the associations Syncline wrote there (nothing to weigh any
        // more) and its source links (keep: all of them; erase: those left, on entities another
        // connection also knows).
        for (const table of connectionTables('delete'))
          await tx.$executeRawUnsafe(`DELETE FROM ${table} WHERE connection_id = $1::uuid`, id);

        const done = { record: toRecord(updated), from: current.status, changed: true, counts };
        await onChange(tx, done);
        return ok(done);
      },
      { timeout: DISCONNECT_TIMEOUT_MS },
    );
  }
}

/** The derived tables (@syncline/log's registry) whose rows of one connection a disconnect handles so. */
const connectionTables = (what: OnDisconnect): string[] =>
  DERIVED_TABLES.filter((t) => t.connectionRows === what).map((t) => t.table);

/**
 * The derived tables an erase deletes the doomed entities' rows from itself: those that name
 * entities without a cascading key. The outbox is deleted beforehand (it is counted) and the
 * entities last.
 */
const ERASED_BY_ENTITY = DERIVED_TABLES.filter(
  (t) =>
    t.entityColumns !== undefined && !t.cascadesFromEntity && t.table !== 'entity' && t.table !== 'outbox',
);

async function lock(
  tx: Db,
  workspaceId: WorkspaceId,
  id: ConnectionId,
  strength: 'FOR UPDATE' | 'FOR NO KEY UPDATE',
): Promise<LockedRow | undefined> {
  const rows = await tx.$queryRaw<LockedRow[]>`
    SELECT status::text AS status, status_reason, cursors, credentials_key_id IS NOT NULL AS has_credentials
      FROM connection
     WHERE id = ${id}::uuid AND workspace_id = ${workspaceId}::uuid AND provider <> 'syncline'
       ${Prisma.raw(strength)}`;
  return rows[0];
}

/**
 * Entities that only this connection knows: every entity of a merge tree (the survivor and
 * all merged into it, however deep) holding a link of this connection, unless some entity of
 * that tree holds a link of another connection.
 */
async function onlyItsEntities(tx: Db, workspaceId: WorkspaceId, id: ConnectionId): Promise<string[]> {
  const rows = await tx.$queryRaw<{ id: string }[]>`
    WITH RECURSIVE up(id) AS (
      SELECT DISTINCT entity_id FROM source_link WHERE connection_id = ${id}::uuid
      UNION
      SELECT e.merged_into FROM entity e JOIN up ON e.id = up.id WHERE e.merged_into IS NOT NULL
    ), roots AS (
      SELECT e.id FROM entity e JOIN up ON e.id = up.id
       WHERE e.merged_into IS NULL AND e.workspace_id = ${workspaceId}::uuid
    ), tree(root, id) AS (
      SELECT id, id FROM roots
      UNION
      SELECT t.root, e.id FROM entity e JOIN tree t ON e.merged_into = t.id
    )
    SELECT t.id::text AS id FROM tree t
     WHERE NOT EXISTS (
       SELECT 1 FROM tree o JOIN source_link l ON l.entity_id = o.id
        WHERE o.root = t.root AND l.connection_id <> ${id}::uuid)
     ORDER BY t.id`;
  return rows.map((r) => r.id);
}

function withoutPositions(cursors: Prisma.JsonValue): Prisma.InputJsonObject {
  if (typeof cursors !== 'object' || cursors === null || Array.isArray(cursors)) return {};
  const { backfill: _backfill, live: _live, ...rest } = cursors;
  return rest as Prisma.InputJsonObject;
}
