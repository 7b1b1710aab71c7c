import type { SyncSystem } from './system';

// What a scenario prints when it fails: the processes' output and the sync engine's tables,
// so that a failure can be explained without running it again. Never used in assertions.

/** Prints the system's output and the engine's state (connections, log, links, outbox, …). */
export async function dumpSyncState(s: SyncSystem, label: string): Promise<void> {
  s.dumpLogs(label);
  const q = (sql: string) => s.query(sql).catch((error: unknown) => `query failed: ${String(error)}`);
  console.log(
    `===== engine state (${label}) =====\n`,
    'connections',
    await q(
      `SELECT id, provider, external_account_id, status, status_reason, last_error_code, reconciled_at, cursors
         FROM connection ORDER BY provider, external_account_id`,
    ),
    'outbox',
    await q(
      `SELECT o.id, c.provider, c.external_account_id AS account, o.entity_type, o.op, o.status, o.external_id,
              o.fields, o.attempts, o.last_error
         FROM outbox o JOIN connection c ON c.id = o.connection_id ORDER BY o.id`,
    ),
    'entities',
    await q(`SELECT id, entity_type, merged_into, fields, flags, version FROM entity ORDER BY created_at`),
    'links',
    await q(
      `SELECT l.entity_id, c.provider, c.external_account_id AS account, l.entity_type, l.external_id,
              l.provider_version
         FROM source_link l JOIN connection c ON c.id = l.connection_id ORDER BY l.entity_id`,
    ),
    'conflicts',
    await q(`SELECT entity_id, field, kind, policy, candidates, status, resolution FROM merge_conflict`),
    'change events',
    await q(
      `SELECT e.partition, e."offset", c.provider, c.external_account_id AS account, e.entity_type,
              e.external_id, e.op, e.event_key, e.fields, e.event_time
         FROM change_event e JOIN connection c ON c.id = e.connection_id ORDER BY e.ingested_at, e."offset"`,
    ),
    'consumer offsets',
    await q(
      `SELECT o.group_name, o.partition, o.committed_offset, p.next_offset
         FROM consumer_offset o LEFT JOIN log_partition p ON p.partition = o.partition
        ORDER BY o.group_name, o.partition`,
    ),
    'write receipts',
    await q(
      `SELECT r.entity_id, c.provider, c.external_account_id AS account, r.external_id, r.fields, r.applied_at
         FROM write_receipt r JOIN connection c ON c.id = r.connection_id ORDER BY r.created_at`,
    ),
    'dead letters',
    await q(`SELECT source, group_name, partition, "offset", error_code, error_message FROM dead_letter`),
    'sync consumer members seen by pg_locks (every database on the server)',
    await q(
      `SELECT d.datname, count(DISTINCT l.pid)::int AS members FROM pg_locks l
         LEFT JOIN pg_database d ON d.oid = l.database
        WHERE l.locktype = 'advisory' AND l.granted AND l.objid = 4294967295 AND l.objsubid = 2
        GROUP BY d.datname`,
    ),
  );
}
