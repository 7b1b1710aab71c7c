import type { LogEvent, LogTransaction } from '@syncline/log';
import { DERIVED_TABLES } from '@syncline/log';
import type { SyncStage as SyncHandler } from '@syncline/sync-stage';
import type { PoolClient } from 'pg';

/**
 * The sandbox the dry run and the replay's preview run the sync stage in: session-private
 * copies of the tables it writes (temporary tables named like them, which PostgreSQL looks up
 * first), filled from one snapshot, its advisory locks skipped, and statements naming the real
 * schema refused. Also the fold both feed batches through (`handleIsolating`).
 */

/** An event the stage refused alone: reported, where the log's consumer would dead-letter it. */
export interface FoldFailure {
  eventKey: string;
  entityType: string;
  externalId: string;
  error: string;
}

/**
 * The tables the sync stage writes or locks, and which of their rows a dry run copies: every
 * derived table (DERIVED_TABLES) with the workspace's rows, and the workspace's connections
 * (the one in dry run is flagged enabled in its copy). Outbox rows already sent are copied
 * only where their key is reused (creates and deletes): the stage upserts on it; write
 * receipts and claims, only the connection's ($1 is then its id). A table left out is read as it is, and
 * a write to it is refused (READ ONLY), never made.
 */
const DRY_RUN_ROWS: Readonly<Record<string, { by: 'ws' | 'conn'; rows: string }>> = {
  outbox: { by: 'ws', rows: `workspace_id = $1 AND (status IN ('pending', 'sending') OR op <> 'update')` },
  write_receipt: { by: 'conn', rows: 'connection_id = $1' },
  write_claim: { by: 'conn', rows: 'connection_id = $1' },
};

export const SHADOWED: readonly {
  table: string;
  rows: (real: (table: string) => string) => string;
  by: 'ws' | 'conn';
}[] = [
  { table: 'connection', by: 'ws', rows: () => 'workspace_id = $1' },
  ...DERIVED_TABLES.map(({ table, workspaceRows }) => {
    const own = DRY_RUN_ROWS[table];
    return own === undefined
      ? { table, by: 'ws' as const, rows: workspaceRows }
      : { table, by: own.by, rows: () => own.rows };
  }),
];

/** A statement the sandbox refuses: it names the real tables' schema, or changes the search path. */
export class SandboxViolation extends Error {
  override name = 'SandboxViolation';
}

/**
 * The sync stage's connection in a sandbox: the copies come first in the search path
 * (`pg_temp`, then the real schema for the types, functions and settings tables the stage only
 * reads), and a statement naming the real schema (`public.entity`, `"public"."entity"`) or
 * touching the search path is refused before it reaches PostgreSQL. With every table the stage
 * writes copied (DERIVED_TABLES), none of its statements can read a live derived row.
 */
export async function sandboxed(client: PoolClient, schema: string): Promise<LogTransaction> {
  const names = [...new Set(['public', schema])].map((name) => name.replaceAll(/[^\w$]/g, '\\$&'));
  const qualified = new RegExp(`(?:^|[^\\w$])"?(?:${names.join('|')})"?\\s*\\.`, 'i');
  await client.query(`SELECT set_config('search_path', $1, true)`, [`pg_temp, ${ident(schema)}`]);
  return {
    query: async (sql, params) => {
      if (qualified.test(sql) || /\bsearch_path\b/i.test(sql))
        throw new SandboxViolation(
          `the sandbox refuses a statement naming the real tables: ${sql.slice(0, 200)}`,
        );
      return client.query(skipAdvisoryLocks(sql), params);
    },
  };
}

export const ident = (name: string): string => `"${name.replaceAll('"', '""')}"`;

/** The sync stage's advisory locks order writers of the real tables; in the copies they only block others. */
export const skipAdvisoryLocks = (sql: string): string =>
  sql.replaceAll(/\bpg_advisory_xact_lock\s*\(/g, 'pg_temp.dry_run_skip_lock(');

export async function realSchema(client: PoolClient): Promise<string> {
  const { rows } = await client.query<{ schema: string }>(
    `SELECT n.nspname AS schema FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.oid = 'entity'::regclass`,
  );
  const schema = rows[0]?.schema;
  if (schema === undefined || schema.startsWith('pg_temp')) throw new Error('cannot find the entity table');
  return schema;
}

/**
 * Makes the session's copies of the tables the stage writes, with their btree indexes (the
 * stage's ON CONFLICT targets and lookups) and their own sequences. Returns the real outbox's
 * highest id: rows above it are the dry run's.
 */
export async function shadow(
  client: PoolClient,
  schema: string,
  real: (table: string) => string,
  workspaceId: string,
  connectionId: string,
  /** Other rows to copy for some tables (a replay copies the workspace's whole outbox and receipts); $1 is the workspace. */
  rowsOverride: Readonly<Record<string, string>> = {},
): Promise<number> {
  await client.query(
    `CREATE FUNCTION pg_temp.dry_run_skip_lock(bigint) RETURNS void LANGUAGE sql AS 'SELECT'`,
  );
  for (const { table, rows, by } of SHADOWED) {
    await client.query(
      `CREATE TEMP TABLE ${ident(table)} (LIKE ${real(table)} INCLUDING DEFAULTS INCLUDING CONSTRAINTS) ON COMMIT DROP`,
    );
    await client.query(
      `INSERT INTO pg_temp.${ident(table)} SELECT * FROM ${real(table)} WHERE ${rowsOverride[table] ?? rows(real)}`,
      [by === 'ws' || rowsOverride[table] !== undefined ? workspaceId : connectionId],
    );
    const { rows: indexes } = await client.query<{ indexdef: string }>(
      'SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename = $2',
      [schema, table],
    );
    for (const { indexdef } of indexes) {
      const copy = indexdef.replace(
        /^CREATE (UNIQUE )?INDEX \S+ ON (?:ONLY )?\S+ USING btree /,
        (_m, unique: string | undefined) =>
          `CREATE ${unique ?? ''}INDEX ON pg_temp.${ident(table)} USING btree `,
      );
      // Other kinds (the search's trigram indexes) serve the API's reads, not the stage.
      if (copy !== indexdef) await client.query(copy);
    }
    // Fresh temporary tables have no statistics: without them the stage's joins plan badly.
    await client.query(`ANALYZE pg_temp.${ident(table)}`);
    const { rows: serials } = await client.query<{ column_name: string }>(
      `SELECT a.attname AS column_name FROM pg_attribute a JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
        WHERE a.attrelid = $1::regclass AND pg_get_expr(d.adbin, d.adrelid) LIKE 'nextval(%'`,
      [real(table)],
    );
    for (const { column_name: column } of serials) {
      const sequence = ident(`dry_run_${table}_${column}`);
      await client.query(`CREATE TEMP SEQUENCE ${sequence}`);
      await client.query(
        `SELECT setval('pg_temp.${sequence}', GREATEST((SELECT max(${ident(column)}) FROM ${real(table)}), 0) + 1, false)`,
      );
      await client.query(
        `ALTER TABLE pg_temp.${ident(table)} ALTER COLUMN ${ident(column)} SET DEFAULT nextval('pg_temp.${sequence}')`,
      );
    }
  }
  const { rows } = await client.query<{ max: string | null }>(
    `SELECT max(id)::text AS max FROM ${real('outbox')}`,
  );
  return Number(rows[0]?.max ?? 0);
}

/**
 * A batch through the sync stage behind a savepoint; if it fails, event by event, each behind
 * its own, so one event the stage refuses is reported and the rest still apply (as the log's
 * consumer does, without its retries and dead letters). Used by the dry run and the replay.
 */
export async function handleIsolating(
  client: PoolClient,
  tx: LogTransaction,
  handler: SyncHandler,
  events: readonly LogEvent[],
  failures: FoldFailure[],
): Promise<void> {
  await client.query('SAVEPOINT batch');
  try {
    await handler.handle(tx, events);
    await client.query('RELEASE SAVEPOINT batch');
    return;
  } catch {
    await client.query('ROLLBACK TO SAVEPOINT batch');
  }
  for (const event of events) {
    await client.query('SAVEPOINT one');
    try {
      await handler.handle(tx, [event]);
      await client.query('RELEASE SAVEPOINT one');
    } catch (error) {
      await client.query('ROLLBACK TO SAVEPOINT one');
      failures.push({
        eventKey: event.eventKey,
        entityType: event.entityType,
        externalId: event.externalId,
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }
}
