import type { ConnectionStatus, ProviderKey } from './providers';

/** A provider connection's health now: what `GET /health/sync` shows and the workers sample. */
export interface ConnectionHealthRow {
  id: string;
  provider: ProviderKey;
  displayName: string | null;
  externalAccountId: string;
  dryRun: boolean;
  hasCredentials: boolean;
  status: ConnectionStatus;
  statusReason: string | null;
  backfillSeen: number;
  backfillTotal: number | null;
  lastPullAt: Date | null;
  lastSuccessAt: Date | null;
  lastErrorCode: string | null;
  watermark: Date | null;
  lagEvents: number;
  pendingWrites: number;
}

/**
 * Every provider connection of a workspace with its lag and its pending writes; parameters
 * `$1` workspace id, `$2` provider keys (text[]), `$3` the sync stage's consumer group. The
 * one definition the API's health route and the workers' health sampler both read (the
 * sampler as a CTE of its insert, so its own parameters start at `$4`).
 *
 * The lag reads only the unread tail of each partition (primary key range
 * `offset > committed`); a partition the group never committed counts from the start.
 */
export const CONNECTION_HEALTH_SQL = `
  SELECT c.id::text AS "id", c.provider::text AS "provider", c.display_name AS "displayName",
         c.external_account_id AS "externalAccountId", c.dry_run AS "dryRun",
         (c.credentials_key_id IS NOT NULL) AS "hasCredentials", c.status::text AS "status",
         c.status_reason AS "statusReason", c.backfill_seen AS "backfillSeen",
         c.backfill_total AS "backfillTotal", c.last_pull_at AS "lastPullAt",
         c.last_success_at AS "lastSuccessAt", c.last_error_code AS "lastErrorCode",
         c.watermark AS "watermark",
         (SELECT count(*)::int
            FROM log_partition h
            LEFT JOIN consumer_offset o ON o.group_name = $3 AND o.partition = h.partition
            JOIN change_event e ON e.partition = h.partition AND e."offset" > COALESCE(o.committed_offset, 0)
           WHERE e.connection_id = c.id AND e.workspace_id = c.workspace_id) AS "lagEvents",
         (SELECT count(*)::int FROM outbox w
           WHERE w.connection_id = c.id AND w.workspace_id = c.workspace_id
             AND w.status IN ('pending', 'sending')) AS "pendingWrites"
    FROM connection c
   WHERE c.workspace_id = $1::uuid AND c.provider::text = ANY($2::text[])
   ORDER BY c.created_at, c.id`;
