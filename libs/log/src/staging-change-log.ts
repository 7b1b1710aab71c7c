import { err, ok, type Result } from '@syncline/core';
import type { Pool } from 'pg';
import { type AppendError, type AppendedChange, ChangeLog, type ChangeLogOptions } from './change-log';
import { partitionFor } from './partitioner';
import { type PreparedChange, validateChanges } from './validate-changes';

/**
 * Stages a batch of one connection's changes if, and only if, the connection is still in dry
 * run. The row lock (FOR SHARE) orders this against an enable, which locks the row to move
 * the staged changes onto the log and clear the flag: a batch either commits here before the
 * enable moves it, or waits and then reads the flag cleared (and goes to the log).
 */
const STAGE_SQL = `
WITH c AS (
  SELECT id, dry_run FROM connection WHERE id = $1 FOR SHARE
),
ins AS (
  INSERT INTO staged_change (workspace_id, connection_id, event_key, entity_type, external_id, op, fields,
                             field_times, event_time, provider_version, origin)
  SELECT i.workspace_id, c.id, i.event_key, i.entity_type, i.external_id, i.op, i.fields, i.field_times,
         i.event_time, i.provider_version, i.origin
    FROM json_to_recordset($2::json)
         AS i(workspace_id uuid, event_key text, entity_type text, external_id text, op text, fields json,
              field_times json, event_time timestamptz, provider_version text, origin json, n int)
    CROSS JOIN c
   WHERE c.dry_run
   ORDER BY i.n
  ON CONFLICT (connection_id, event_key) DO NOTHING
  RETURNING event_key
)
SELECT COALESCE((SELECT dry_run FROM c), false) AS dry_run, ARRAY(SELECT event_key FROM ins) AS inserted`;

/**
 * The change log for a process that ingests provider changes: changes of a connection in dry
 * run are staged (`staged_change`) instead of appended, so the sync stage never sees them and
 * never waits on them; every other change is appended as by `ChangeLog`. A connection leaves
 * dry run once (never enters it again), so a connection found not in dry run is remembered
 * and costs nothing more.
 */
export class StagingChangeLog extends ChangeLog {
  private readonly live = new Set<string>();

  constructor(
    private readonly db: Pool,
    options: ChangeLogOptions,
  ) {
    super(db, options);
  }

  override async append(changes: readonly unknown[]): Promise<Result<AppendedChange[], AppendError>> {
    if (Array.isArray(changes) && changes.every((c) => this.live.has(connectionIdOf(c))))
      return super.append(changes);
    const validated = validateChanges(changes);
    if (!validated.ok) return validated;
    const prepared = validated.value;
    const unknown = [...new Set(prepared.map((p) => p.change.connectionId))].filter(
      (id) => !this.live.has(id),
    );
    if (unknown.length === 0) return super.append(changes);
    const { rows } = await this.db.query<{ id: string; workspace_id: string; dry_run: boolean }>(
      'SELECT id::text AS id, workspace_id::text AS workspace_id, dry_run FROM connection WHERE id = ANY($1::uuid[])',
      [unknown],
    );
    const dryRun = new Map<string, string>();
    for (const row of rows) {
      if (row.dry_run) dryRun.set(row.id, row.workspace_id);
      else this.live.add(row.id);
    }
    if (dryRun.size === 0) return super.append(changes);

    const results: (AppendedChange | undefined)[] = new Array(prepared.length);
    const byConnection = new Map<string, number[]>();
    for (const [index, { change }] of prepared.entries()) {
      const workspaceId = dryRun.get(change.connectionId);
      if (workspaceId === undefined) continue;
      if (workspaceId !== change.workspaceId)
        return err({
          code: 'Validation',
          index,
          message: `change ${index}: connectionId: no connection ${change.connectionId} in workspace ${change.workspaceId}`,
        });
      byConnection.set(change.connectionId, [...(byConnection.get(change.connectionId) ?? []), index]);
    }
    const toLog = new Set(prepared.keys());
    for (const [connectionId, indexes] of byConnection) {
      const staged = await this.stage(
        connectionId,
        indexes.map((i) => prepared[i]!),
      );
      if (staged === undefined) {
        // Enabled meanwhile: its changes go to the log after all (the staged ones are there already).
        this.live.add(connectionId);
        continue;
      }
      const seen = new Set<string>();
      for (const i of indexes) {
        const { change } = prepared[i]!;
        toLog.delete(i);
        results[i] = {
          eventKey: change.eventKey,
          connectionId,
          isNew: staged.has(change.eventKey) && !seen.has(change.eventKey),
          partition: partitionFor(change.workspaceId, this.partitions),
          offset: null,
        };
        seen.add(change.eventKey);
      }
    }
    if (toLog.size > 0) {
      const indexes = [...toLog];
      const appended = await super.append(indexes.map((i) => changes[i]));
      if (!appended.ok)
        return appended.error.code === 'Validation'
          ? err({ ...appended.error, index: indexes[appended.error.index] ?? -1 })
          : appended;
      appended.value.forEach((result, k) => {
        results[indexes[k]!] = result;
      });
    }
    return ok(results as AppendedChange[]);
  }

  /** Appends to the log whatever the connection's state: how staged changes get there on enable. */
  appendToLog(changes: readonly unknown[]): Promise<Result<AppendedChange[], AppendError>> {
    return super.append(changes);
  }

  /** The event keys newly staged, or undefined when the connection is no longer in dry run. */
  private async stage(connectionId: string, changes: PreparedChange[]): Promise<Set<string> | undefined> {
    const json = `[${changes
      .map(
        ({ change: c, fieldsJson, fieldTimesJson, originJson }, n) =>
          `{"n":${n},"workspace_id":${JSON.stringify(c.workspaceId)},"event_key":${JSON.stringify(c.eventKey)},"entity_type":${JSON.stringify(
            c.entityType,
          )},"external_id":${JSON.stringify(c.externalId)},"op":${JSON.stringify(c.op)},"fields":${fieldsJson},"field_times":${fieldTimesJson},"event_time":"${c.eventTime.toISOString()}","provider_version":${JSON.stringify(
            c.providerVersion ?? null,
          )},"origin":${originJson ?? 'null'}}`,
      )
      .join(',')}]`;
    const { rows } = await this.db.query<{ dry_run: boolean; inserted: string[] }>(STAGE_SQL, [
      connectionId,
      json,
    ]);
    const row = rows[0];
    return row?.dry_run ? new Set(row.inserted) : undefined;
  }
}

/** The connection a change names, as the log stores it (lower case); '' when it names none. */
function connectionIdOf(change: unknown): string {
  const id = (change as { connectionId?: unknown } | null)?.connectionId;
  return typeof id === 'string' ? id.toLowerCase() : '';
}
